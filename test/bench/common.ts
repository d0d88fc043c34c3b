/** Helpers shared by the process benchmarks (agent-cpu, agent-profile). */
import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { existsSync, readdirSync, readFileSync, rmdirSync, writeFileSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import type { JetStreamManager } from '@nats-io/jetstream';
import { bundleFrames } from '../../src/frame/bundle.js';
import { decodeFrame } from '../../src/frame/codec.js';

export const ROOT = join(dirname(fileURLToPath(import.meta.url)), '..', '..');
/** The compiled CLI that bin/rezolus.js runs. */
export const ENTRY = join(ROOT, 'dist', 'cli', 'rezolus.js');
export const NATS_SERVER_BIN = '/usr/sbin/nats-server';

/**
 * The fields of a /proc/<pid>/stat line after the command: comm may hold spaces and
 * parentheses, so they start past the last ')'. [0] is field 3 (state), [1] the parent pid.
 */
function statFields(pid: number | string): string[] {
  const stat = readFileSync(`/proc/${pid}/stat`, 'latin1');
  return stat.slice(stat.lastIndexOf(')') + 2).split(' ');
}

/** The processes this one started and that still run (their parent pid is this one's). */
export function childPids(parent = process.pid): number[] {
  const out: number[] = [];
  for (const entry of readdirSync('/proc')) {
    if (!/^\d+$/.test(entry)) continue;
    try {
      if (Number(statFields(entry)[1]) === parent) out.push(Number(entry));
    } catch {
      // gone meanwhile
    }
  }
  return out;
}

// A benchmark stopped by a signal (Ctrl-C, `timeout`) stops what it started first: its
// nats-server, agents and node_exporter were left running, and a later run shared the machine
// with them. Every process benchmark imports this module.
for (const [signal, code] of [['SIGINT', 130], ['SIGTERM', 143], ['SIGHUP', 129]] as const) {
  process.once(signal, () => {
    for (const pid of childPids()) {
      try {
        process.kill(pid, 'SIGTERM');
      } catch {
        // gone meanwhile
      }
    }
    process.exit(code);
  });
}

export const sleep = (ms: number): Promise<void> => new Promise((r) => setTimeout(r, ms));
export const sleepUntil = (t: number): Promise<void> => sleep(Math.max(0, t - Date.now()));
export const say = (line: string): void => void process.stdout.write(`${line}\n`);

export function fmt(n: number, digits = 2): string {
  return Number.isFinite(n) ? n.toFixed(digits) : '-';
}

function clockTicksPerSecond(): number {
  const r = spawnSync('getconf', ['CLK_TCK'], { encoding: 'utf8' });
  const n = Number(r.stdout?.trim());
  return Number.isInteger(n) && n > 0 ? n : 100;
}
/** USER_HZ: the unit of utime/stime in /proc/<pid>/stat (100 on Linux). */
export const CLK_TCK = clockTicksPerSecond();

/** utime and stime of a process, in clock ticks (all its threads). */
export function cpuTicksSplit(pid: number): { user: number; system: number } {
  const rest = statFields(pid);
  // utime is field 14, stime field 15
  return { user: Number(rest[11]), system: Number(rest[12]) };
}

/** utime+stime of a process, in clock ticks. */
export function cpuTicks(pid: number): number {
  const t = cpuTicksSplit(pid);
  return t.user + t.system;
}

/** VmRSS and VmHWM of a process, KiB. */
export function memKiB(pid: number): { rss: number; hwm: number } {
  const status = readFileSync(`/proc/${pid}/status`, 'latin1');
  const field = (name: string): number => Number(new RegExp(`^${name}:\\s+(\\d+) kB`, 'm').exec(status)?.[1] ?? Number.NaN);
  return { rss: field('VmRSS'), hwm: field('VmHWM') };
}

export function alive(child: ChildProcess): boolean {
  return child.exitCode === null && child.signalCode === null;
}

/** SIGTERM, then SIGKILL after graceMs; resolves when the process has exited. */
export async function stopChild(child: ChildProcess | undefined, graceMs = 5000): Promise<void> {
  if (child === undefined || !alive(child)) return;
  const exited = new Promise<void>((r) => child.once('exit', () => r()));
  child.kill('SIGTERM');
  const timer = setTimeout(() => child.kill('SIGKILL'), graceMs);
  await exited;
  clearTimeout(timer);
}

/** Keeps the last `max` characters a child wrote to stderr, for error messages. */
export function stderrTail(child: ChildProcess, max = 4000): () => string {
  let text = '';
  child.stderr?.on('data', (d: Buffer) => {
    text = (text + d.toString()).slice(-max);
  });
  return () => text.trim();
}

/** Compiles src/ to dist/ when a source changed since the last build (scripts/build-cli.mjs --if-stale). */
export function ensureBuilt(): void {
  const r = spawnSync(process.execPath, [join(ROOT, 'scripts', 'build-cli.mjs'), '--if-stale'], { cwd: ROOT, stdio: ['ignore', 'inherit', 'inherit'], timeout: 180_000 });
  if (!existsSync(ENTRY) || r.status !== 0) throw new Error(`scripts/build-cli.mjs --if-stale exited ${r.status ?? r.signal}; ${ENTRY} cannot run`);
}

export async function waitFor(
  what: string,
  timeoutMs: number,
  check: () => Promise<boolean>,
  failFast?: () => string | undefined,
): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const failure = failFast?.();
    if (failure !== undefined) throw new Error(`${what}: ${failure}`);
    if (await check().catch(() => false)) return;
    if (Date.now() > deadline) throw new Error(`${what}: not ready after ${timeoutMs} ms`);
    await sleep(100);
  }
}

/**
 * The samplers that read procfs and sysfs only (no BPF, no cgroupfs walk): the
 * set the agent had before the kernel samplers, and the one an old tree and
 * today's can run side by side.
 */
export const PROCFS_SAMPLERS: readonly string[] = [
  'blockio_diskstats', 'cpu_cores', 'cpu_usage', 'memory_meminfo', 'memory_vmstat', 'network_interfaces', 'network_protocols',
  'rezolus_self', 'scheduler_procs',
];

/** The checkout a compiled CLI entry (ROOT/dist/cli/rezolus.js) belongs to. */
export function treeOf(entry: string): string {
  return resolve(dirname(entry), '..', '..');
}

/** The sections of a checkout's shipped config/agent.toml: `samplers.x`, `kernel`, `http`, ... */
export function agentConfigSections(tree: string): Set<string> {
  const text = readFileSync(join(tree, 'config', 'agent.toml'), 'utf8');
  return new Set([...text.matchAll(/^\[([a-z0-9_.]+)\]$/gm)].map((m) => m[1] as string));
}

/** The sampler names a checkout knows (its config/agent.toml's [samplers.x] tables). */
export function samplerNamesOf(tree: string): string[] {
  return [...agentConfigSections(tree)].filter((s) => s.startsWith('samplers.')).map((s) => s.slice('samplers.'.length));
}

/** Each sampler's interval as a checkout ships it (the `interval` of its [samplers.x] table in config/agent.toml). */
export function shippedIntervals(tree: string): Map<string, string> {
  const text = readFileSync(join(tree, 'config', 'agent.toml'), 'utf8');
  return new Map([...text.matchAll(/^\[samplers\.([a-z0-9_]+)\]\n(?:.*\n)*?interval = "([^"]+)"$/gm)].map((m) => [m[1] as string, m[2] as string]));
}

/**
 * Each of `samplers` at `interval` ("100ms"), but the ones `tree` ships slower
 * than 1 s (cpu_perf, rezolus_bpf: 10s) keep theirs, as [defaults] interval
 * does; undefined: each at the interval the tree ships.
 */
export function intervalsAsShipped(tree: string, samplers: readonly string[], interval: string | undefined): Map<string, string> {
  const shipped = shippedIntervals(tree);
  return new Map(samplers.map((n) => {
    const own = shipped.get(n) ?? '1s';
    return [n, interval === undefined || own !== '1s' ? own : interval];
  }));
}

export interface AgentConfigOptions {
  /** sampler name -> interval ("1s", "100ms"); every other sampler is off */
  readonly samplers: ReadonlyMap<string, string>;
  /** [kernel] enabled, for a tree that has the table (default true) */
  readonly kernel?: boolean;
  /** [http] listen for a tree that has the table; undefined: off */
  readonly httpListen?: string;
  /** [stream] max_age ("30m"), for a run that counts frames in the stream for longer than its default 15 min keeps them */
  readonly streamMaxAge?: string;
}

/**
 * Writes an agent config for the checkout `tree` (only the tables it knows, so
 * an old tree's schema takes it): the given samplers at their intervals, the
 * others off, [kernel] and [http] as asked. Returns the path.
 */
export function writeAgentConfig(path: string, tree: string, o: AgentConfigOptions): string {
  const sections = agentConfigSections(tree);
  const lines = ['[defaults]', 'enabled = false', ''];
  if (sections.has('kernel')) lines.push('[kernel]', `enabled = ${o.kernel ?? true}`, '');
  if (o.streamMaxAge !== undefined && sections.has('stream')) lines.push('[stream]', `max_age = "${o.streamMaxAge}"`, '');
  if (sections.has('http')) lines.push('[http]', ...(o.httpListen === undefined ? ['enabled = false'] : ['enabled = true', `listen = "${o.httpListen}"`]), '');
  for (const [name, interval] of o.samplers) {
    if (!sections.has(`samplers.${name}`)) throw new Error(`${tree} has no sampler ${name}`);
    lines.push(`[samplers.${name}]`, 'enabled = true', `interval = "${interval}"`, '');
  }
  writeFileSync(path, lines.join('\n'));
  return path;
}

export interface AgentSpawn {
  readonly entry: string;
  readonly natsUrl: string;
  readonly host: string;
  readonly config: string;
  /** node options before the entry (V8 flags) */
  readonly nodeArgs?: readonly string[];
  readonly logLevel?: string;
  /** more agent options (--procfs DIR ...) */
  readonly extraArgs?: readonly string[];
  /** environment added for this agent (REZOLUS_AGENT_V8_FLAGS=...) */
  readonly env?: Readonly<Record<string, string>>;
}

/** Starts a compiled agent (stdout ignored, stderr piped for stderrTail); REZOLUS_NATS_URL cleared. */
export function spawnAgent(a: AgentSpawn): ChildProcess {
  return spawn(
    process.execPath,
    [...(a.nodeArgs ?? []), a.entry, 'agent', '--config', a.config, '--nats', a.natsUrl, '--host', a.host, '--log-level', a.logLevel ?? 'warn', ...(a.extraArgs ?? [])],
    { cwd: treeOf(a.entry), stdio: ['ignore', 'ignore', 'pipe'], env: { ...process.env, REZOLUS_NATS_URL: '', ...a.env } },
  );
}

/**
 * Frames per subject of one host in the REZOLUS stream
 * (`rezolus.metrics.<host>.<sampler>`): the stream's count of each subject,
 * and for a host that bundles, its bundles read and their frames counted
 * under their samplers' subjects.
 */
export async function hostSubjectCounts(jsm: JetStreamManager, host: string, stream = 'REZOLUS'): Promise<Map<string, number>> {
  const info = await jsm.streams.info(stream, { subjects_filter: `rezolus.metrics.${host}.>` });
  const counts = new Map(Object.entries(info.state.subjects ?? {}));
  const bundles = `rezolus.metrics.${host}._bundle`;
  if (!counts.has(bundles)) return counts;
  counts.delete(bundles);
  const consumer = await jsm.jetstream().consumers.get(stream, { filter_subjects: bundles });
  const it = await consumer.consume({ max_messages: 1000 });
  try {
    for await (const m of it) {
      for (const bytes of bundleFrames(m.data)) {
        const subject = `rezolus.metrics.${host}.${decodeFrame(bytes).sampler}`;
        counts.set(subject, (counts.get(subject) ?? 0) + 1);
      }
      if (m.info.pending === 0) break;
    }
  } finally {
    await it.close();
  }
  return counts;
}

/** The CPU model and count, for every absolute figure. */
export function cpuModel(): string {
  const info = readFileSync('/proc/cpuinfo', 'utf8');
  const model = /^model name\s*:\s*(.*)$/m.exec(info)?.[1] ?? 'unknown CPU';
  const n = info.match(/^processor\s*:/gm)?.length ?? 0;
  return `${model.trim()}, ${n} CPUs`;
}

/** The parts of a V8 CPU profile (.cpuprofile) the profiling benches read. */
export interface CallFrame {
  readonly functionName: string;
  readonly url: string;
  readonly lineNumber: number;
}
export interface ProfileNode {
  readonly id: number;
  readonly callFrame: CallFrame;
  readonly children?: readonly number[];
}
export interface CpuProfile {
  readonly nodes: readonly ProfileNode[];
  readonly startTime: number;
  readonly endTime: number;
  readonly samples: readonly number[];
  readonly timeDeltas: readonly number[];
}

/** A profile's busy samples folded per key: self time, inclusive time (each key once per stack) and self time per module, in µs. */
export interface ProfileTotals {
  readonly self: Map<string, number>;
  readonly inclusive: Map<string, number>;
  readonly modules: Map<string, number>;
  /** µs of samples that were not (idle) */
  readonly busy: number;
}

export function profileTotals(p: CpuProfile, keyOf: (f: CallFrame) => string, moduleOf: (f: CallFrame) => string = () => ''): ProfileTotals {
  const byId = new Map<number, ProfileNode>();
  const parent = new Map<number, number>();
  for (const n of p.nodes) {
    byId.set(n.id, n);
    for (const c of n.children ?? []) parent.set(c, n.id);
  }
  const self = new Map<string, number>();
  const inclusive = new Map<string, number>();
  const modules = new Map<string, number>();
  let busy = 0;
  for (let i = 0; i < p.samples.length; i++) {
    const dt = p.timeDeltas[i + 1] ?? 0;
    const node = byId.get(p.samples[i] as number);
    if (node === undefined || node.callFrame.functionName === '(idle)') continue;
    busy += dt;
    const k = keyOf(node.callFrame);
    self.set(k, (self.get(k) ?? 0) + dt);
    const mod = moduleOf(node.callFrame);
    modules.set(mod, (modules.get(mod) ?? 0) + dt);
    const seen = new Set<string>();
    for (let cur: number | undefined = node.id; cur !== undefined; cur = parent.get(cur)) {
      const f = (byId.get(cur) as ProfileNode).callFrame;
      if (f.functionName === '(root)') break;
      const key = keyOf(f);
      if (!seen.has(key)) inclusive.set(key, (inclusive.get(key) ?? 0) + dt);
      seen.add(key);
    }
  }
  return { self, inclusive, modules, busy };
}

/** Prints the `top` keys of one of those maps: ms and share of the busy time. */
export function printProfileTable(title: string, m: Map<string, number>, busy: number, top: number): void {
  say(`  ${title}`);
  for (const [k, us] of [...m].sort((a, b) => b[1] - a[1]).slice(0, top)) say(`    ${fmt(us / 1000, 1).padStart(8)} ms ${fmt((us / busy) * 100, 1).padStart(5)} %  ${k}`);
}

/** Removes the cgroups a bench made under `parent` in each of `roots` (one level of children), then `parent`. */
export function removeBenchCgroups(roots: readonly string[], parent: string): void {
  for (const root of roots) {
    const dir = join(root, parent);
    if (!existsSync(dir)) continue;
    for (const e of readdirSync(dir, { withFileTypes: true })) if (e.isDirectory()) rmdirSync(join(dir, e.name));
    rmdirSync(dir);
  }
}
