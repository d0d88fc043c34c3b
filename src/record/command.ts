/**
 * The command a recording wraps (`rezolus record … -- cmd args`): started in
 * its own process group, so that it and everything it starts can be stopped
 * together; its exit status becomes the recorder's.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { constants } from 'node:os';

export interface CommandExit {
  readonly code: number | null;
  readonly signal: NodeJS.Signals | null;
}

export interface WrappedCommand {
  readonly pid: number;
  readonly exited: Promise<CommandExit>;
  /** SIGTERM to the group, SIGKILL after `graceMs`; resolves when the command has exited */
  terminate(graceMs?: number): Promise<CommandExit>;
}

/** The shell convention: the exit code, or 128 + the number of the signal that killed it. */
export function exitStatus(e: CommandExit): number {
  if (e.code !== null) return e.code;
  const n = e.signal === null ? undefined : (constants.signals as Record<string, number>)[e.signal];
  return 128 + (n ?? 0);
}

function killGroup(child: ChildProcess, signal: NodeJS.Signals): void {
  try {
    process.kill(-(child.pid as number), signal);
  } catch {
    // the group is gone already
  }
}

export function startCommand(argv: readonly string[]): Promise<WrappedCommand> {
  const [file, ...args] = argv;
  if (file === undefined) return Promise.reject(new Error('no command after --'));
  const child = spawn(file, args, { stdio: 'inherit', detached: true });
  return new Promise((resolve, reject) => {
    child.once('error', reject);
    child.once('spawn', () => {
      const exited = new Promise<CommandExit>((done) => child.once('exit', (code, signal) => done({ code, signal })));
      resolve({
        pid: child.pid as number,
        exited,
        async terminate(graceMs = 2000) {
          killGroup(child, 'SIGTERM');
          const timer = setTimeout(() => killGroup(child, 'SIGKILL'), graceMs);
          const e = await exited;
          clearTimeout(timer);
          killGroup(child, 'SIGKILL'); // anything the command left behind in its group
          return e;
        },
      });
    });
  });
}
