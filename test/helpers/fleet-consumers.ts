/**
 * The consumers of the fleet run, each a separate process of the compiled
 * CLI (rezolusArgv) in its own process group: the fleet exporter (one, or
 * shards by host pattern), the durable recorder of the whole fleet, the
 * hindsight service, the alert evaluator and the live viewer.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { rmSync } from 'node:fs';
import { join } from 'node:path';
import { freePort } from '../../src/up/nats-server.js';
import { rezolusArgv } from './rezolus-cli.js';

/** Process groups and pids to SIGKILL if this process exits before stopping them (a watchdog, an error, Ctrl-C). */
const leftovers = new Set<number>();
/** Directories to remove then, once those processes are gone (a store, a spool: up to GiBs at fleet sizes). */
const leftoverDirs = new Set<string>();
process.once('exit', () => {
  const signal = (pid: number, sig: NodeJS.Signals | 0): boolean => {
    try {
      process.kill(pid, sig);
      return true;
    } catch {
      return false; // gone
    }
  };
  for (const pid of leftovers) signal(pid, 'SIGKILL');
  // 'exit' handlers cannot await: wait up to 2 s, blocking, for them to be gone before their files go
  const nap = new Int32Array(new SharedArrayBuffer(4));
  for (let waited = 0; waited < 2000 && [...leftovers].some((pid) => signal(pid, 0)); waited += 20) Atomics.wait(nap, 0, 0, 20);
  for (const dir of leftoverDirs) rmSync(dir, { recursive: true, force: true, maxRetries: 3 });
});
/** Kill `pid` (negative: a process group) when this process exits, unless forgotten. */
export function killOnExit(pid: number): () => void {
  leftovers.add(pid);
  return () => leftovers.delete(pid);
}
/** Remove `dir` when this process exits, after the processes above, unless forgotten. */
export function removeOnExit(dir: string): () => void {
  leftoverDirs.add(dir);
  return () => leftoverDirs.delete(dir);
}

export class Consumer {
  #out = '';
  readonly exited: Promise<number | null>;

  constructor(
    readonly name: string,
    readonly child: ChildProcess,
    /** HTTP port, for those that serve one */
    readonly port = 0,
  ) {
    const keep = (d: Buffer): void => {
      // keep the start and the tail: the ready line comes early, the summary at the end
      this.#out = this.#out.length < 200_000 ? this.#out + d.toString() : this.#out.slice(0, 100_000) + this.#out.slice(-99_000) + d.toString();
    };
    child.stdout?.on('data', keep);
    child.stderr?.on('data', keep);
    const forget = killOnExit(-(child.pid as number));
    // 'close', not 'exit': the last output (the alert evaluator's stop line) may still be in the
    // pipe when 'exit' fires, and on a busy machine it was read only after the audit looked for it
    this.exited = new Promise((r) =>
      child.once('close', (code) => {
        forget();
        r(code);
      }),
    );
  }

  get pid(): number {
    return this.child.pid as number;
  }

  get alive(): boolean {
    return this.child.exitCode === null && this.child.signalCode === null;
  }

  get output(): string {
    return this.#out;
  }

  /** The fields of the last pino line with this msg, or undefined. */
  logged(msg: string): Record<string, unknown> | undefined {
    const lines = this.#out.split('\n').filter((l) => l.includes(`"msg":"${msg}"`));
    const last = lines.at(-1);
    if (last === undefined) return undefined;
    try {
      return JSON.parse(last.slice(last.indexOf('{'))) as Record<string, unknown>;
    } catch {
      return undefined;
    }
  }

  async waitFor(what: string, check: () => boolean | Promise<boolean>, ms: number): Promise<void> {
    const deadline = Date.now() + ms;
    for (;;) {
      if (!this.alive) throw new Error(`${this.name} exited before ${what}: ${this.#out.slice(-3000)}`);
      if (await Promise.resolve(check()).catch(() => false)) return;
      if (Date.now() > deadline) throw new Error(`${this.name}: no ${what} after ${ms} ms: ${this.#out.slice(-3000)}`);
      await new Promise((r) => setTimeout(r, 100));
    }
  }

  /** SIGTERM to its group, SIGKILL after graceMs; resolves with its exit code. */
  async stop(graceMs = 10_000): Promise<number | null> {
    if (this.alive) {
      try {
        process.kill(-this.pid, 'SIGTERM');
      } catch {
        // gone meanwhile
      }
      const timer = setTimeout(() => {
        try {
          process.kill(-this.pid, 'SIGKILL');
        } catch {
          // gone
        }
      }, graceMs);
      await this.exited;
      clearTimeout(timer);
    }
    return this.exited;
  }
}

/** Consumers (by name) that run with V8's --cpu-prof, and where their profiles go (written when they exit). */
export const profiling: { names: readonly string[]; dir: string } = { names: [], dir: '' };

/** node options of each consumer (by name), such as --max-semi-space-size=64 for the exporter */
export const nodeArgs = new Map<string, readonly string[]>();

function launch(name: string, args: string[], cwd: string, port = 0): Consumer {
  // "exporter 1/2" is an exporter
  const kind = name.split(' ')[0] as string;
  const prof = profiling.names.includes(kind) ? ['--cpu-prof', '--cpu-prof-dir', profiling.dir] : [];
  const extra = nodeArgs.get(kind) ?? [];
  const child = spawn(process.execPath, [...prof, ...extra, ...rezolusArgv(...args)], { cwd, stdio: ['ignore', 'pipe', 'pipe'], detached: true });
  return new Consumer(name, child, port);
}

const ok = async (url: string, init?: RequestInit): Promise<boolean> => (await fetch(url, { ...init, signal: AbortSignal.timeout(5000) })).ok;

/** A fleet exporter following `hosts` ("*" or patterns), ready once /metrics answers. */
export async function startExporter(name: string, url: string, hosts: string, dir: string): Promise<Consumer> {
  const port = await freePort();
  const c = launch(name, ['exporter', '--nats', url, '--listen', `127.0.0.1:${port}`, '--hosts', hosts, '--interval', '1s', '--log-level', 'warn'], dir, port);
  await c.waitFor('/metrics', () => ok(`http://127.0.0.1:${port}/metrics`), 60_000);
  return c;
}

/** `record --durable` of the whole fleet for `seconds` from now, into `out`. */
export async function startRecorder(url: string, seconds: number, out: string, dir: string): Promise<Consumer> {
  const c = launch('recorder', ['record', '--nats', url, '--durable', 'fleet', '--hosts', '*', '--interval', '1s', '--duration', `${seconds}s`, '-o', out, '--log-level', 'info'], dir);
  await c.waitFor('"recording"', () => c.logged('recording') !== undefined, 60_000);
  return c;
}

export async function startHindsight(url: string, out: string, dir: string): Promise<Consumer> {
  const port = await freePort();
  const c = launch('hindsight', ['hindsight', '--nats', url, '--listen', `127.0.0.1:${port}`, '--hosts', '*', '-o', out, '--log-level', 'info'], dir, port);
  await c.waitFor('/status', () => ok(`http://127.0.0.1:${port}/status`), 60_000);
  return c;
}

export async function startAlert(url: string, dir: string): Promise<Consumer> {
  const c = launch('alert', ['alert', '--nats', url, '--hosts', '*', '-o', join(dir, 'incidents'), '--log-level', 'info'], dir);
  await c.waitFor('"alert evaluator running"', () => c.logged('alert evaluator running') !== undefined, 60_000);
  return c;
}

export async function startViewer(url: string, dir: string): Promise<Consumer> {
  const port = await freePort();
  const c = launch('viewer', ['view', '--nats', url, '--listen', `127.0.0.1:${port}`, '--save-dir', dir, '--log-level', 'info'], dir, port);
  await c.waitFor('"viewer ready"', () => c.logged('viewer ready') !== undefined, 60_000);
  return c;
}
