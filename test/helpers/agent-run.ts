/**
 * `rezolus agent` (the compiled CLI) on the fixture root, publishing to a
 * private nats-server, with the agent's flag variables as a test wants them.
 */
import { spawn } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { AGENT_NODE_FLAGS_ENV, AGENT_RESTARTED_ENV } from '../../src/agent/node-flags.js';
import { AGENT_V8_FLAGS_ENV } from '../../src/agent/v8-flags.js';
import { PROC, SYS } from './fixtures.js';
import { startTestNats } from './nats.js';
import { ROOT, rezolusArgv } from './rezolus-cli.js';

export interface AgentRunOptions {
  /** REZOLUS_AGENT_V8_FLAGS, or unset */
  readonly v8Flags?: string | undefined;
  /** REZOLUS_AGENT_NODE_FLAGS, or unset */
  readonly nodeFlags?: string | undefined;
  /** node's flags on the command line, before the CLI */
  readonly nodeArgs?: readonly string[];
  /** how long the agent runs on after its `agent running` line */
  readonly afterMs?: number;
  /** agent.toml (default: the kernel, HTTP and cgroup_resources off) */
  readonly config?: string;
  /** run after the `agent running` line, before the wait and the stop */
  readonly probe?: (pid: number) => Promise<void>;
}

export interface AgentRun {
  /** its `agent running` log line */
  readonly line: Record<string, unknown>;
  /** its stdout (the agent logs to stderr; node's --trace-opt writes to stdout) */
  readonly stdout: string;
  /** the pid spawned */
  readonly pid: number;
  /** /proc/<pid>/cmdline when the line came */
  readonly cmdline: readonly string[];
}

/** process.env without the agent's variables (and MALLOC_ARENA_MAX), then with those given. */
export function agentEnv(o: Pick<AgentRunOptions, 'v8Flags' | 'nodeFlags'>): NodeJS.ProcessEnv {
  const env = { ...process.env };
  delete env[AGENT_V8_FLAGS_ENV];
  delete env[AGENT_NODE_FLAGS_ENV];
  delete env[AGENT_RESTARTED_ENV];
  delete env.MALLOC_ARENA_MAX;
  if (o.v8Flags !== undefined) env[AGENT_V8_FLAGS_ENV] = o.v8Flags;
  if (o.nodeFlags !== undefined) env[AGENT_NODE_FLAGS_ENV] = o.nodeFlags;
  return env;
}

/** Runs the agent until its `agent running` line and `afterMs` more, then stops it. */
export async function runFixtureAgent(o: AgentRunOptions, ...extra: string[]): Promise<AgentRun> {
  const server = await startTestNats();
  const dir = mkdtempSync(join(tmpdir(), 'rezolus-agent-run-'));
  const config = join(dir, 'agent.toml');
  writeFileSync(config, o.config ?? '[kernel]\nenabled = false\n[http]\nenabled = false\n[samplers.cgroup_resources]\nenabled = false\n');
  const child = spawn(
    process.execPath,
    [...(o.nodeArgs ?? []), ...rezolusArgv('agent', '--config', config, '--nats', server.url, '--host', 'agentrun', '--procfs', PROC, '--sysfs', SYS, '--log-level', 'info', ...extra)],
    { cwd: ROOT, stdio: ['ignore', 'pipe', 'pipe'], env: agentEnv(o) },
  );
  let stdout = '';
  child.stdout.on('data', (d: Buffer) => (stdout += d.toString()));
  try {
    const line = await new Promise<Record<string, unknown>>((resolve, reject) => {
      let text = '';
      const timer = setTimeout(() => reject(new Error(`no "agent running" line within 60 s: ${text}`)), 60_000);
      child.stderr.on('data', (d: Buffer) => {
        text += d.toString();
        const line = text.split('\n').find((l) => l.includes('"agent running"'));
        if (line === undefined) return;
        clearTimeout(timer);
        resolve(JSON.parse(line) as Record<string, unknown>);
      });
      child.once('exit', (code) => reject(new Error(`the agent exited ${code}: ${text}`)));
    });
    const pid = child.pid ?? -1;
    const cmdline = readFileSync(`/proc/${pid}/cmdline`, 'utf8').split('\0').filter((a) => a !== '');
    await o.probe?.(pid);
    await new Promise((r) => setTimeout(r, o.afterMs ?? 0));
    return { line, stdout, pid, cmdline };
  } finally {
    child.kill('SIGTERM');
    await new Promise((r) => (child.exitCode === null ? child.once('exit', r) : r(undefined)));
    await server.dispose();
    rmSync(dir, { recursive: true, force: true });
  }
}
