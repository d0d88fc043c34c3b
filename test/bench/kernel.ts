/**
 * Cost of the kernel samplers (BPF programs and perf events), in three parts:
 *
 *   npx tsx test/bench/kernel.ts                    # 30 s windows, about 3 min in all
 *   npx tsx test/bench/kernel.ts --duration 10      # quick check
 *   npx tsx test/bench/kernel.ts --parts 1,2        # only the in-process parts
 *   npx tsx test/bench/kernel.ts --parts 1 --tracefs --baseline ../main/build/bpf   # + syscount and main's syscall objects
 *   npx tsx test/bench/kernel.ts --parts 3 --cpu-prof   # + a V8 profile summary of the agent (shares only)
 *
 * 1. Kernel cost per event (issue 19). With BPF run-time stats on (a
 *    BPF_ENABLE_STATS fd held from loadNative().enableStats(), closed at the
 *    end, so the sysctl kernel.bpf_stats_enabled is never touched), every
 *    kernel sampler but the syscall ones is loaded in process (KernelHarness)
 *    for the whole part, Debian's libbpf-tools /usr/sbin/runqlat and
 *    /usr/sbin/syscount run beside it (syscount attaches through tracefs: it
 *    runs only when tracefs is mounted, or with --tracefs, which mounts it for
 *    the run), and one load runs throughout: `perf bench sched pipe` (two
 *    processes ping-ponging over a pipe) plus one CPU-bound node process that
 *    preempts them. In turn, one window of --duration seconds each, the
 *    syscall programs are: both syscall samplers, with the default [kernel]
 *    syscall_timing_budget and with 0 (every syscall timed: the cost before
 *    sampling), refreshing every second as in an agent, so that a class
 *    above the budget is timed 1 in 2^k from the second refresh on; main's
 *    two objects from before issue 19 (--baseline DIR, loaded raw as their
 *    samplers did); syscall_counts alone; syscall_latency alone; and two floor pairs
 *    (bpf/test/syscall_floor.bpf.c: a sys_enter/sys_exit pair that only reads
 *    the clock, and one that does nothing); and none (syscount's own figure
 *    without ours). run_cnt/run_time_ns deltas per
 *    window come from BpfObject.programStats() for ours and from `bpftool
 *    prog show --json` for theirs (their program ids are found from
 *    /proc/<pid>/fdinfo: bpftool's own `pids` field needs a BPF iterator this
 *    kernel refuses). Printed per window: ns per run of every program; ns per
 *    syscall of all our programs on sys_enter/sys_exit beside syscount's; ns
 *    per context switch of all the agent's programs on sched_* beside
 *    runqlat's. Targets: counts + latency <= 150 ns per syscall; the agent's
 *    scheduler programs <= 0.6 x runqlat's ns per sched_switch.
 *    Part 1b, end to end with stats off: ns per getppid() of `perf bench
 *    syscall basic` with each window's programs loaded (after a first loop
 *    and a refresh, so the samplers have seen its rate), and with syscount,
 *    against the bare loop (interleaved reps): what the programs cost with
 *    the syscall slow path and dispatch that run_time_ns does not see.
 * 2. Userspace cost per refresh of each kernel sampler: the agent's
 *    refreshNs / refreshes (refresh + describe + encode) over --ticks
 *    back-to-back tickOnce() calls. Each sampler runs alone in its own Agent,
 *    because tickOnce() runs samplers concurrently and each one's span would
 *    then cover the others' work; rezolus_bpf runs alone while every other
 *    kernel sampler is loaded (it reads their programs). Then all kernel
 *    samplers together: CPU per tick (process.cpuUsage).
 * 3. The compiled agent (`rezolus agent`, every sampler the default config
 *    enables) against a private nats-server at 1 Hz and at 10 Hz: after a 5 s
 *    warm-up, --duration seconds each. CPU = utime+stime of /proc/<pid>/stat as
 *    % of one core (and the sum of /proc/<pid>/task/* /schedstat, in ns, as a
 *    finer cross-check), RSS, ticks from the stream, the active samplers from
 *    the agent's status KV entry, and the kernel time of the agent's own BPF
 *    programs (fdinfo run_time_ns; BPF runs in the context of the traced
 *    tasks, so it is not in the agent's utime+stime). Targets: <= 0.3 % of a
 *    core at 1 Hz, <= 2 % at 10 Hz.
 *
 * Needs root, BTF and the built BPF objects (node scripts/build-native.mjs).
 * A measurement, not a test: exit code 0 when a target is missed, with a
 * "TARGET MISSED" line. Every process started here (runqlat, syscount, the
 * load, nats-server, the agent) is stopped at the end, on error, on Ctrl-C
 * and when the watchdog fires; the stats fd is closed.
 */
import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, readlinkSync, rmSync } from 'node:fs';
import { cpus, tmpdir } from 'node:os';
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import { jetstreamManager, type JetStreamManager } from '@nats-io/jetstream';
import { Kvm } from '@nats-io/kv';
import type { NatsConnection } from '@nats-io/nats-core';
import { connect } from '@nats-io/transport-node';
import { loadNative, type BpfObject, type NativeAddon } from '../../src/native/index.js';
import { fillClasses } from '../../src/samplers/syscall/table.js';
import { loadedObjects } from '../../src/samplers/kernel/loaded.js';
import { DEFAULT_TIMING_BUDGET, MIN_WINDOW_MS } from '../../src/samplers/syscall/shared/sampling.js';
import { SAMPLERS } from '../../src/samplers/registry.js';
import { METRICS_PREFIX, STATUS_BUCKET } from '../../src/bus/subjects.js';
import { startNatsServer, type NatsServer } from '../../src/up/nats-server.js';
import { KernelHarness } from '../helpers/kernel.js';
import type { CpuProfile } from './common.js';
import {
  alive, CLK_TCK, cpuTicks, ENTRY, ensureBuilt, fmt, memKiB, NATS_SERVER_BIN, ROOT, say, sleep, stderrTail, stopChild, waitFor,
} from './common.js';

const RUNQLAT_BIN = '/usr/sbin/runqlat';
const SYSCOUNT_BIN = '/usr/sbin/syscount';
const PERF_BIN = '/usr/bin/perf';
const BPFTOOL_BIN = '/usr/sbin/bpftool';
const STREAM = 'REZOLUS';
const TRACEFS = '/sys/kernel/tracing';
const WARMUP_S = 5;
const TARGET_RUNQLAT_RATIO = 0.6;
const TARGET_CPU_1HZ = 0.3;
const TARGET_CPU_10HZ = 2;
/** issue 19: syscall_counts and syscall_latency together, ns of BPF per syscall */
const TARGET_SYSCALL_NS = 150;

// ---------------------------------------------------------------- arguments

const { values: flags } = parseArgs({
  options: {
    duration: { type: 'string', short: 'd' },
    ticks: { type: 'string' },
    parts: { type: 'string' },
    tracefs: { type: 'boolean' },
    baseline: { type: 'string' },
    rounds: { type: 'string' },
    'cpu-prof': { type: 'boolean' },
    help: { type: 'boolean', short: 'h' },
  },
});
if (flags.help === true) {
  process.stdout.write(
    [
      'usage: npx tsx test/bench/kernel.ts [--duration S] [--ticks N] [--parts 1,2,3]',
      '  --duration S   load window of part 1 and measured window of each agent run in part 3 (default 30, 5..600)',
      '  --ticks N      back-to-back tickOnce() calls per sampler in part 2 (default 200)',
      '  --parts LIST   which parts to run (default 1,2,3): 1 kernel ns per event vs runqlat/syscount,',
      '                 2 userspace us per refresh, 3 CPU of the compiled agent at 1 Hz and 10 Hz',
      '  --cpu-prof     run the agent of part 3 under node --cpu-prof and print self time by module and',
      '                 the top functions over the measured window (the profiler adds overhead: read shares)',
      '  --baseline DIR build/bpf of main before issue 19 (syscall/counts.bpf.o, syscall/latency.bpf.o): part 1 also',
      '                 measures them, loaded as they were, in a window of its own under the same load',
      '  --rounds N     part 1 repeats its windows N times (default 1, 1..10); figures are medians over rounds',
      '  --tracefs      mount tracefs on /sys/kernel/tracing when it is not (unmounted at the end), so that',
      '                 syscount (tracepoint/raw_syscalls, needs the event ids there) can run in part 1',
      '',
    ].join('\n'),
  );
  process.exit(0);
}
const DURATION_S = Number(flags.duration ?? 30);
const TICKS = Number(flags.ticks ?? 200);
const ROUNDS = Number(flags.rounds ?? 1);
const BASELINE = flags.baseline;
const PARTS = new Set((flags.parts ?? '1,2,3').split(',').map((s) => s.trim()));
if (!Number.isInteger(DURATION_S) || DURATION_S < 5 || DURATION_S > 600) {
  process.stderr.write(`kernel: --duration must be a whole number of seconds in [5, 600], got "${flags.duration}"\n`);
  process.exit(2);
}
if (!Number.isInteger(TICKS) || TICKS < 10 || TICKS > 100_000) {
  process.stderr.write(`kernel: --ticks must be a whole number in [10, 100000], got "${flags.ticks}"\n`);
  process.exit(2);
}
if (!Number.isInteger(ROUNDS) || ROUNDS < 1 || ROUNDS > 10) {
  process.stderr.write(`kernel: --rounds must be a whole number in [1, 10], got "${flags.rounds}"\n`);
  process.exit(2);
}
if ([...PARTS].some((p) => !['1', '2', '3'].includes(p))) {
  process.stderr.write(`kernel: --parts takes 1, 2 and 3, got "${flags.parts}"\n`);
  process.exit(2);
}

// ---------------------------------------------------------------- processes and cleanup

interface Processes {
  statsFd?: number;
  native?: NativeAddon;
  harnesses: Set<KernelHarness>;
  children: Set<ChildProcess>;
  /** children spawned detached whose whole process group is signalled (perf bench forks) */
  groups: Set<ChildProcess>;
  nats?: NatsServer;
  nc?: NatsConnection;
  dataDir?: string;
  /** tracefs was mounted by this script and is unmounted at the end */
  mountedTracefs?: boolean;
}
const procs: Processes = { harnesses: new Set(), children: new Set(), groups: new Set() };
let missed = 0;

function missedTarget(line: string): void {
  missed++;
  say(`TARGET MISSED: ${line}`);
}

async function stopGroup(child: ChildProcess, graceMs = 3000): Promise<void> {
  procs.groups.delete(child);
  if (!alive(child) || child.pid === undefined) return;
  const exited = new Promise<void>((r) => child.once('exit', () => r()));
  const kill = (signal: NodeJS.Signals): void => {
    try {
      process.kill(-(child.pid as number), signal);
    } catch {
      // the group is gone
    }
  };
  kill('SIGTERM');
  const timer = setTimeout(() => kill('SIGKILL'), graceMs);
  await exited;
  clearTimeout(timer);
  kill('SIGKILL'); // a forked worker left behind by the leader
}

async function stopProc(child: ChildProcess | undefined, signal: NodeJS.Signals = 'SIGTERM'): Promise<void> {
  if (child === undefined) return;
  procs.children.delete(child);
  if (!alive(child)) return;
  if (signal !== 'SIGTERM') {
    const exited = new Promise<void>((r) => child.once('exit', () => r()));
    child.kill(signal);
    const t = setTimeout(() => child.kill('SIGKILL'), 3000);
    await exited;
    clearTimeout(t);
    return;
  }
  await stopChild(child, 3000);
}

function closeStats(): void {
  if (procs.statsFd !== undefined && procs.native !== undefined) procs.native.closeFd(procs.statsFd);
  procs.statsFd = undefined;
}

let cleaning: Promise<void> | undefined;
function cleanup(): Promise<void> {
  cleaning ??= (async () => {
    await Promise.allSettled([...procs.groups].map((c) => stopGroup(c)));
    await Promise.allSettled([...procs.children].map((c) => stopProc(c)));
    await Promise.allSettled([...procs.harnesses].map((h) => h.stop()));
    procs.harnesses.clear();
    closeStats();
    await procs.nc?.close().catch(() => undefined);
    await procs.nats?.stop().catch(() => undefined);
    if (procs.dataDir !== undefined) rmSync(procs.dataDir, { recursive: true, force: true });
    if (procs.mountedTracefs === true) spawnSync('umount', [TRACEFS]);
  })();
  return cleaning;
}

for (const signal of ['SIGINT', 'SIGTERM'] as const) {
  process.once(signal, () => {
    process.stderr.write(`\nkernel: ${signal}, cleaning up\n`);
    void cleanup().finally(() => process.exit(130));
  });
}

function spawnTracked(cmd: string, args: readonly string[], detached = false): ChildProcess {
  const child = spawn(cmd, args, { stdio: ['ignore', 'ignore', 'pipe'], detached, cwd: ROOT });
  (detached ? procs.groups : procs.children).add(child);
  child.on('error', () => undefined);
  return child;
}

/** `refreshMs`: the samplers' own refresh (the syscall timing budget is applied from each refresh's rates, as in an agent) */
async function startHarness(names: readonly string[], bpfStats = false, budget?: number, refreshMs = 60_000): Promise<KernelHarness> {
  const h = await KernelHarness.start(names, { bpfStats, ...(budget === undefined ? {} : { syscallTimingBudget: budget }) }, refreshMs);
  procs.harnesses.add(h);
  return h;
}

async function stopHarness(h: KernelHarness): Promise<void> {
  procs.harnesses.delete(h);
  await h.stop();
}

function enableStats(): void {
  if (procs.statsFd !== undefined) return;
  procs.native ??= loadNative();
  procs.statsFd = procs.native.enableStats();
}

// ---------------------------------------------------------------- BPF program figures

interface ProgFigures {
  readonly id: number;
  readonly name: string;
  readonly runCount: number;
  readonly runTimeNs: number;
}

/** IDs of the BPF programs a process holds (program fds and links), from /proc/<pid>/fdinfo; `links` counts its attachments. */
function progIdsOf(pid: number): { progs: Set<number>; links: number } {
  const progs = new Set<number>();
  let links = 0;
  let fds: string[];
  try {
    fds = readdirSync(`/proc/${pid}/fd`);
  } catch {
    return { progs, links };
  }
  for (const fd of fds) {
    let target: string;
    try {
      target = readlinkSync(`/proc/${pid}/fd/${fd}`);
    } catch {
      continue;
    }
    // a tracepoint attached through perf_event_open + PERF_EVENT_IOC_SET_BPF holds a perf event, not a link
    if (target === 'anon_inode:[perf_event]') links++;
    if (target !== 'anon_inode:bpf-prog' && target !== 'anon_inode:bpf_link') continue;
    try {
      const info = readFileSync(`/proc/${pid}/fdinfo/${fd}`, 'latin1');
      const id = /^prog_id:\s+(\d+)/m.exec(info)?.[1];
      if (id !== undefined) progs.add(Number(id));
      if (target === 'anon_inode:bpf_link') links++;
    } catch {
      // closed meanwhile
    }
  }
  return { progs, links };
}

/** run_cnt and run_time_ns of the given programs, from `bpftool prog show --json`. */
function bpftoolFigures(ids: ReadonlySet<number>): Map<number, ProgFigures> {
  const r = spawnSync(BPFTOOL_BIN, ['prog', 'show', '--json'], { encoding: 'utf8', maxBuffer: 64 << 20 });
  if (r.status !== 0) throw new Error(`bpftool prog show failed: ${r.stderr}`);
  const all = JSON.parse(r.stdout) as { id: number; name?: string; run_cnt?: number; run_time_ns?: number }[];
  const out = new Map<number, ProgFigures>();
  for (const p of all) {
    if (!ids.has(p.id)) continue;
    out.set(p.id, { id: p.id, name: p.name ?? `#${p.id}`, runCount: p.run_cnt ?? 0, runTimeNs: p.run_time_ns ?? 0 });
  }
  return out;
}

/** run_cnt and run_time_ns of every program a process holds, from its fdinfo (no bpftool: cheap enough to run beside the agent). */
function fdinfoFigures(pid: number): Map<number, { runCount: number; runTimeNs: number }> {
  const out = new Map<number, { runCount: number; runTimeNs: number }>();
  let fds: string[];
  try {
    fds = readdirSync(`/proc/${pid}/fd`);
  } catch {
    return out;
  }
  for (const fd of fds) {
    try {
      if (readlinkSync(`/proc/${pid}/fd/${fd}`) !== 'anon_inode:bpf-prog') continue;
      const info = readFileSync(`/proc/${pid}/fdinfo/${fd}`, 'latin1');
      const id = Number(/^prog_id:\s+(\d+)/m.exec(info)?.[1]);
      out.set(id, {
        runCount: Number(/^run_cnt:\s+(\d+)/m.exec(info)?.[1] ?? 0),
        runTimeNs: Number(/^run_time_ns:\s+(\d+)/m.exec(info)?.[1] ?? 0),
      });
    } catch {
      // closed meanwhile
    }
  }
  return out;
}

interface Delta {
  readonly name: string;
  readonly runs: number;
  readonly ns: number;
}

function deltas(a: readonly ProgFigures[], b: readonly ProgFigures[]): Delta[] {
  return b.map((y) => {
    const x = a.find((p) => p.id === y.id);
    return { name: y.name, runs: y.runCount - (x?.runCount ?? 0), ns: y.runTimeNs - (x?.runTimeNs ?? 0) };
  });
}

const runsOf = (ds: readonly Delta[], name: string): number => ds.find((d) => d.name === name)?.runs ?? 0;

function contextSwitches(): number {
  return Number(/^ctxt (\d+)/m.exec(readFileSync('/proc/stat', 'latin1'))?.[1] ?? Number.NaN);
}

function table(rows: readonly (readonly string[])[]): void {
  const w = (rows[0] ?? []).map((_, i) => Math.max(...rows.map((r) => (r[i] ?? '').length)));
  for (const r of rows) say(r.map((c, i) => (i === 0 ? c.padEnd(w[0] as number) : c.padStart(w[i] as number))).join('  '));
}

// ---------------------------------------------------------------- part 1

async function waitForLinks(child: ChildProcess, what: string, links: number, log: () => string): Promise<Set<number>> {
  let ids = new Set<number>();
  await waitFor(`${what} attached`, 20_000, async () => {
    const found = progIdsOf(child.pid as number);
    ids = found.progs;
    return found.links >= links;
  }, () => (alive(child) ? undefined : `${what} exited (${child.exitCode ?? child.signalCode}): ${log()}`));
  return ids;
}

/** A program of ours with the tracepoint it hooks (from its section). */
interface OurProg extends ProgFigures {
  /** `<sampler>/<program>`; the sampler is `old syscall_counts` etc. for the --baseline objects */
  readonly key: string;
  readonly sampler: string;
  readonly event: string;
}

/** Objects loaded and attached without a sampler: main's syscall objects (--baseline) and the floor pairs. */
interface RawObjects {
  readonly objects: readonly (readonly [string, BpfObject])[];
  close(): void;
}

/**
 * Loads `build/bpf/<relative>.bpf.o` objects under `dir` and attaches the
 * named programs (all when none are named), sized and filled as their
 * samplers did: counters for the possible CPUs, per-pid arrays for pid_max,
 * the syscall class table.
 */
function loadRaw(dir: string, specs: readonly { label: string; relative: string; programs?: readonly string[] }[]): RawObjects {
  procs.native ??= loadNative();
  const native = procs.native;
  const pidMax = Number(readFileSync('/proc/sys/kernel/pid_max', 'latin1').trim());
  const objects: [string, BpfObject][] = [];
  const close = (): void => {
    for (const [, o] of objects) o.close();
    objects.length = 0;
  };
  try {
    for (const spec of specs) {
      const o = new native.BpfObject(join(dir, `${spec.relative}.bpf.o`));
      objects.push([spec.label, o]);
      for (const m of o.maps()) {
        if (m.name === 'counters') o.setMaxEntries(m.name, native.numPossibleCpus * 16);
        if (m.name === 'sink') o.setMaxEntries(m.name, native.numPossibleCpus * 8);
        if (m.name === 'started') o.setMaxEntries(m.name, pidMax);
      }
      const programs = o.programs().map((p) => p.name).filter((n) => spec.programs === undefined || spec.programs.includes(n));
      for (const p of o.programs()) o.setAutoload(p.name, programs.includes(p.name));
      o.load();
      if (o.maps().some((m) => m.name === 'classes')) fillClasses(o);
      for (const p of programs) o.attach(p);
    }
  } catch (error) {
    close();
    throw error;
  }
  return { objects, close };
}

const BUILD_BPF = join(ROOT, 'build', 'bpf');
/** The syscall programs of each window of part 1: our samplers by name, or raw objects. */
type Variant =
  /** budget: [kernel] syscall_timing_budget (the agent's default when absent) */
  | { readonly label: string; readonly samplers: readonly string[]; readonly budget?: number }
  | { readonly label: string; readonly raw: () => RawObjects };
/** The label of the windows with every syscall timed ([kernel] syscall_timing_budget = 0: the cost before sampling). */
const EVERY = 'both, every syscall timed';

const NONE = 'no syscall programs';

function variants(): Variant[] {
  const out: Variant[] = [{ label: 'both', samplers: ['syscall_counts', 'syscall_latency'] }];
  if (BASELINE !== undefined) {
    const dir = BASELINE;
    out.push({ label: 'main (before)', raw: () => loadRaw(dir, [{ label: 'main syscall_counts', relative: 'syscall/counts' }, { label: 'main syscall_latency', relative: 'syscall/latency' }]) });
  }
  out.push({ label: EVERY, samplers: ['syscall_counts', 'syscall_latency'], budget: 0 });
  out.push({ label: 'counts only', samplers: ['syscall_counts'] });
  out.push({ label: 'latency only', samplers: ['syscall_latency'] });
  out.push({ label: 'floor: clock pair', raw: () => loadRaw(BUILD_BPF, [{ label: 'floor', relative: 'test/syscall_floor', programs: ['enter_clock', 'exit_clock'] }]) });
  out.push({ label: 'floor: empty pair', raw: () => loadRaw(BUILD_BPF, [{ label: 'floor', relative: 'test/syscall_floor', programs: ['enter_empty', 'exit_empty'] }]) });
  // syscount's own ns per syscall without any program of ours on raw_syscalls, for the windows above to compare with
  out.push({ label: NONE, raw: () => ({ objects: [], close: () => undefined }) });
  return out;
}

/**
 * Loads a variant's syscall programs; returns the raw objects to read besides
 * the samplers', how to unload, and a refresh now (samplers refresh every
 * `refreshMs` on their own, by default every second as in an agent, so that
 * the timing budget follows the load).
 */
async function loadVariant(v: Variant, refreshMs = 1000): Promise<{ extra: readonly (readonly [string, BpfObject])[]; unload: () => Promise<void>; refresh: () => Promise<void> }> {
  if ('raw' in v) {
    const raw = v.raw();
    return { extra: raw.objects, unload: async () => raw.close(), refresh: async () => undefined };
  }
  const h = await startHarness(v.samplers, false, v.budget, refreshMs);
  for (const n of v.samplers) if (h.status(n).status.state !== 'active') say(`warning: ${n} is ${h.status(n).status.state}`);
  return { extra: [], unload: () => stopHarness(h), refresh: () => h.agent.tickOnce() };
}

function ourPrograms(extra: readonly (readonly [string, BpfObject])[] = []): Map<string, OurProg> {
  const out = new Map<string, OurProg>();
  for (const [sampler, object] of [...loadedObjects(), ...extra]) {
    const sections = new Map(object.programs().map((p) => [p.name, p.section]));
    for (const p of object.programStats()) {
      if (!p.attached) continue;
      const key = `${sampler}/${p.name}`;
      const event = (sections.get(p.name) ?? '').replace(/^(tp_btf|raw_tp)\//, '');
      out.set(key, { key, sampler, event, id: p.id, name: p.name, runCount: Number(p.runCount), runTimeNs: Number(p.runTimeNs) });
    }
  }
  return out;
}

interface OurDelta extends Delta {
  readonly sampler: string;
  readonly event: string;
}

function ourDeltas(a: Map<string, OurProg>, b: Map<string, OurProg>): OurDelta[] {
  return [...b.values()].map((y) => {
    const x = a.get(y.key);
    const same = x !== undefined && x.id === y.id;
    return { name: y.name, sampler: y.sampler, event: y.event, runs: y.runCount - (same ? x.runCount : 0), ns: y.runTimeNs - (same ? x.runTimeNs : 0) };
  });
}

const SYSCALL_EVENTS = new Set(['sys_enter', 'sys_exit']);
const SCHED_EVENTS = new Set(['sched_switch', 'sched_wakeup', 'sched_wakeup_new', 'sched_migrate_task']);
const isSyscallSampler = (s: string): boolean => s.includes('syscall_');

/** One window of load with a given set of syscall programs loaded. */
interface Phase {
  readonly label: string;
  readonly windowS: number;
  readonly ctxt: number;
  readonly ours: OurDelta[];
  readonly runqlat: Delta[];
  readonly syscount: Delta[];
}

const CPU_MODEL = /^model name\s*:\s*(.+)$/m.exec(readFileSync('/proc/cpuinfo', 'latin1'))?.[1]?.trim() ?? 'unknown CPU';

async function part1(): Promise<void> {
  say('');
  const list = variants();
  say(`== part 1: kernel cost per event of the whole agent's BPF, beside libbpf-tools runqlat and syscount (${ROUNDS} round(s) of ${list.length} windows of ${DURATION_S} s under one load: ${list.map((v) => v.label).join(', ')})`);
  for (const bin of [RUNQLAT_BIN, PERF_BIN, BPFTOOL_BIN]) {
    if (!existsSync(bin)) throw new Error(`${bin} is missing (apt-get install libbpf-tools linux-perf bpftool)`);
  }
  if (BASELINE !== undefined && !existsSync(join(BASELINE, 'syscall', 'counts.bpf.o'))) throw new Error(`--baseline ${BASELINE}: no syscall/counts.bpf.o there`);
  if (!existsSync(join(BUILD_BPF, 'test', 'syscall_floor.bpf.o'))) throw new Error('build/bpf/test/syscall_floor.bpf.o is not built (node scripts/build-native.mjs)');
  const sysctlBefore = readFileSync('/proc/sys/kernel/bpf_stats_enabled', 'latin1').trim();
  enableStats();
  say(`BPF stats: BPF_ENABLE_STATS fd held (sysctl kernel.bpf_stats_enabled is ${sysctlBefore} and is not changed)`);

  // Every kernel sampler but the syscall ones stays loaded throughout; the syscall programs change per window.
  const others = SAMPLERS.filter((s) => s.kernel === true && !isSyscallSampler(s.name)).map((s) => s.name);
  const rest = await startHarness(others);
  const notActive = others.filter((n) => !['active', 'degraded'].includes(rest.status(n).status.state));
  if (notActive.length > 0) say(`not active: ${notActive.map((n) => `${n} (${rest.status(n).status.state})`).join(', ')}`);

  // syscount attaches tracepoint/raw_syscalls/*, which libbpf resolves through tracefs.
  const tracepointsReadable = (): boolean => existsSync(`${TRACEFS}/events/raw_syscalls/sys_exit/id`);
  if (!tracepointsReadable() && flags.tracefs === true && existsSync(TRACEFS)) {
    const m = spawnSync('mount', ['-t', 'tracefs', 'nodev', TRACEFS], { encoding: 'utf8' });
    if (m.status === 0) procs.mountedTracefs = true;
    else say(`mount -t tracefs failed: ${m.stderr.trim()}`);
  }
  const withSyscount = existsSync(SYSCOUNT_BIN) && tracepointsReadable();
  if (!withSyscount) say(`syscount left out: ${existsSync(SYSCOUNT_BIN) ? `tracefs is not mounted on ${TRACEFS} (--tracefs mounts it for the run)` : `${SYSCOUNT_BIN} is missing`}`);
  const runqlat = spawnTracked(RUNQLAT_BIN, []);
  const syscount = withSyscount ? spawnTracked(SYSCOUNT_BIN, []) : undefined;
  const runqlatIds = await waitForLinks(runqlat, 'runqlat', 3, stderrTail(runqlat));
  const syscountIds = syscount === undefined ? new Set<number>() : await waitForLinks(syscount, 'syscount', 2, stderrTail(syscount));
  const theirIds = new Set([...runqlatIds, ...syscountIds]);
  const pick = (m: Map<number, ProgFigures>, ids: Set<number>): ProgFigures[] => [...ids].flatMap((id) => m.get(id) ?? []);

  // The load, for every window: two processes ping-ponging over a pipe (perf bench forks the second), and one CPU hog that preempts them.
  const pipe = spawnTracked(PERF_BIN, ['bench', 'sched', 'pipe', '-l', '2000000000'], true);
  const hog = spawnTracked(process.execPath, ['-e', 'for (;;) {}'], true);
  const pipeLog = stderrTail(pipe);
  const phases: Phase[] = [];
  const window = async (label: string, extra: readonly (readonly [string, BpfObject])[]): Promise<void> => {
    await sleep(1000); // settle after loading
    const theirsA = bpftoolFigures(theirIds);
    const oursA = ourPrograms(extra);
    const ctxtA = contextSwitches();
    const tA = process.hrtime.bigint();
    const deadline = Date.now() + DURATION_S * 1000;
    while (Date.now() < deadline) {
      if (!alive(pipe)) throw new Error(`perf bench sched pipe exited (${pipe.exitCode ?? pipe.signalCode}): ${pipeLog()}`);
      if (!alive(runqlat) || (syscount !== undefined && !alive(syscount))) throw new Error('runqlat or syscount exited during the load');
      await sleep(Math.min(500, deadline - Date.now()));
    }
    const theirsB = bpftoolFigures(theirIds);
    const oursB = ourPrograms(extra);
    const ctxtB = contextSwitches();
    phases.push({
      label,
      windowS: Number(process.hrtime.bigint() - tA) / 1e9,
      ctxt: ctxtB - ctxtA,
      ours: ourDeltas(oursA, oursB),
      runqlat: deltas(pick(theirsA, runqlatIds), pick(theirsB, runqlatIds)),
      syscount: deltas(pick(theirsA, syscountIds), pick(theirsB, syscountIds)),
    });
  };
  for (let round = 0; round < ROUNDS; round++) {
    for (const v of list) {
      const { extra, unload } = await loadVariant(v);
      try {
        await window(v.label, extra);
      } finally {
        await unload();
      }
    }
  }
  await Promise.all([stopGroup(pipe), stopGroup(hog)]);
  await Promise.all([stopProc(runqlat, 'SIGINT'), stopProc(syscount, 'SIGINT')]);
  await stopHarness(rest);
  closeStats();
  report(phases, withSyscount);
  await syscallLoop(list, withSyscount);
}

const LOOP_CALLS = 2_000_000;
const LOOP_REPS = 3;

/** ns per getppid() of `perf bench syscall basic`. */
function perfSyscallNs(calls = LOOP_CALLS): number {
  const r = spawnSync(PERF_BIN, ['bench', 'syscall', 'basic', '-l', String(calls)], { encoding: 'utf8', timeout: 60_000 });
  const us = Number(/([\d.]+) usecs\/op/.exec(r.stdout)?.[1]);
  if (r.status !== 0 || !Number.isFinite(us)) throw new Error(`perf bench syscall basic failed: ${r.stderr || r.stdout}`);
  return us * 1000;
}

/**
 * End to end, BPF stats off: what a syscall costs with each variant loaded,
 * as `perf bench syscall basic` (a getppid() loop) sees it. Unlike run_time_ns
 * this includes what runs outside the programs: the syscall slow path that an
 * enabled raw_syscalls tracepoint switches on and the dispatch of each program.
 * Variants interleaved, each rep against the bare loop of the same rep.
 */
async function syscallLoop(list: readonly Variant[], withSyscount: boolean): Promise<void> {
  say('');
  say(`== part 1b: ns per getppid() end to end (perf bench syscall basic -l ${LOOP_CALLS}), BPF stats off, no other load; ${LOOP_REPS} interleaved reps, median of each rep's difference to the bare loop`);
  type LoopVariant = { label: string; load: () => Promise<() => Promise<void>> };
  const loops: LoopVariant[] = [{ label: 'nothing attached', load: async () => async () => undefined }];
  for (const v of list.filter((x) => x.label !== NONE)) {
    loops.push({
      label: v.label,
      load: async () => {
        // no refresh of their own: a first loop, then a refresh, and the samplers have seen the rate the measured loop runs at, as after a second of it
        // in an agent (the loop lasts long enough to be a window of the timing budget's own: MIN_WINDOW_MS)
        const loaded = await loadVariant(v, 60_000);
        const began = performance.now();
        do perfSyscallNs(LOOP_CALLS / 4);
        while (performance.now() - began < 2 * MIN_WINDOW_MS);
        await loaded.refresh();
        return loaded.unload;
      },
    });
  }
  if (withSyscount) {
    loops.push({
      label: 'syscount',
      load: async () => {
        const child = spawnTracked(SYSCOUNT_BIN, []);
        await waitForLinks(child, 'syscount', 2, stderrTail(child));
        return () => stopProc(child, 'SIGINT');
      },
    });
  }
  const ns = new Map<string, number[]>(loops.map((l) => [l.label, []]));
  const diff = new Map<string, number[]>(loops.map((l) => [l.label, []]));
  for (let rep = 0; rep < LOOP_REPS; rep++) {
    let bare = Number.NaN;
    for (const l of loops) {
      const unload = await l.load();
      try {
        await sleep(300);
        const x = perfSyscallNs();
        if (l.label === 'nothing attached') bare = x;
        ns.get(l.label)?.push(x);
        diff.get(l.label)?.push(x - bare);
      } finally {
        await unload();
      }
    }
  }
  const median = (xs: readonly number[]): number => {
    const v = [...xs].sort((a, b) => a - b);
    return v.length === 0 ? Number.NaN : v.length % 2 === 1 ? (v[(v.length - 1) / 2] as number) : ((v[v.length / 2 - 1] as number) + (v[v.length / 2] as number)) / 2;
  };
  const rows: string[][] = [['loaded', 'ns per getppid (median)', 'added ns per syscall (median)', 'reps']];
  for (const l of loops) rows.push([l.label, fmt(median(ns.get(l.label) ?? []), 1), l.label === 'nothing attached' ? '-' : fmt(median(diff.get(l.label) ?? []), 1), (ns.get(l.label) ?? []).map((x) => fmt(x, 0)).join(' ')]);
  table(rows);
}

function report(phases: readonly Phase[], withSyscount: boolean): void {
  say(`CPU: ${CPU_MODEL}, ${cpus().length} CPUs`);
  for (const p of phases) {
    say('');
    say(`-- window "${p.label}": ${fmt(p.windowS, 1)} s, ${fmt(p.ctxt / p.windowS / 1000, 1)} k context switches/s (/proc/stat ctxt)`);
    const rows: string[][] = [['tool', 'program', 'runs/s', 'run time ms', 'ns per run']];
    const add = (tool: string, ds: readonly Delta[]): void => {
      for (const d of ds) if (d.runs > 0 || tool.includes('syscall')) rows.push([tool, d.name, fmt(d.runs / p.windowS, 0), fmt(d.ns / 1e6, 1), fmt(d.ns / d.runs, 1)]);
    };
    for (const d of p.ours.filter((x) => SYSCALL_EVENTS.has(x.event) || SCHED_EVENTS.has(x.event))) add(d.sampler, [d]);
    add('runqlat', p.runqlat);
    if (withSyscount) add('syscount', p.syscount);
    table(rows);
  }
  // Per window: ns per syscall of the syscall programs (all ours on sys_enter/sys_exit / the syscalls, sys_enter's runs)
  // and ns per context switch of the whole agent (all ours on sched_* / sched_switch runs), beside runqlat and syscount.
  say('');
  say(`== summary (${CPU_MODEL}); ns per syscall = run time of every program on sys_enter/sys_exit / sys_enter runs;`);
  say('   ns per switch = run time of every program on sched_switch/sched_wakeup*/sched_migrate_task / sched_switch runs');
  const rows: string[][] = [['window', 'k syscalls/s', 'ours ns/syscall', 'syscount ns/syscall', 'ours / syscount', 'agent ns/switch', 'runqlat ns/switch', 'agent / runqlat', 'other agent BPF % core']];
  const sum = (ds: readonly Delta[]): number => ds.reduce((s, d) => s + d.ns, 0);
  const figures = phases.map((p) => {
    const sys = p.ours.filter((d) => SYSCALL_EVENTS.has(d.event));
    const sched = p.ours.filter((d) => SCHED_EVENTS.has(d.event));
    const other = p.ours.filter((d) => !SYSCALL_EVENTS.has(d.event) && !SCHED_EVENTS.has(d.event));
    const syscalls = sys.length > 0 ? sys.filter((d) => d.event === 'sys_enter').reduce((m, d) => Math.max(m, d.runs), 0) : runsOf(p.syscount, 'sys_exit');
    const switches = sched.filter((d) => d.event === 'sched_switch').reduce((m, d) => Math.max(m, d.runs), 0);
    const oursSys = sum(sys) / syscalls;
    const theirsSys = sum(p.syscount) / runsOf(p.syscount, 'sys_exit');
    const oursSw = sum(sched) / switches;
    const theirsSw = sum(p.runqlat) / runsOf(p.runqlat, 'sched_switch');
    rows.push([
      p.label, fmt(syscalls / p.windowS / 1000, 1), sys.length > 0 ? fmt(oursSys, 1) : '-', withSyscount ? fmt(theirsSys, 1) : '-', withSyscount && sys.length > 0 ? fmt(oursSys / theirsSys, 2) : '-',
      fmt(oursSw, 1), fmt(theirsSw, 1), fmt(oursSw / theirsSw, 3), fmt((sum(other) / 1e9 / p.windowS) * 100, 3),
    ]);
    return { label: p.label, oursSys, theirsSys, oursSw, theirsSw };
  });
  table(rows);
  const median = (xs: number[]): number => {
    const s = xs.filter(Number.isFinite).sort((a, b) => a - b);
    return s.length === 0 ? Number.NaN : s.length % 2 === 1 ? (s[(s.length - 1) / 2] as number) : ((s[s.length / 2 - 1] as number) + (s[s.length / 2] as number)) / 2;
  };
  const of = (label: string): typeof figures => figures.filter((f) => f.label === label);
  const both = median(of('both').map((f) => f.oursSys));
  const base = median(of('main (before)').map((f) => f.oursSys));
  const every = median(of(EVERY).map((f) => f.oursSys));
  const sw = median(figures.map((f) => f.oursSw / f.theirsSw));
  say('');
  say(`syscall_counts + syscall_latency together: ${fmt(both, 1)} ns per syscall (median of the "both" windows, [kernel] syscall_timing_budget ${DEFAULT_TIMING_BUDGET}; target <= ${TARGET_SYSCALL_NS})` +
    (Number.isFinite(base) ? `; main's two objects in the same run: ${fmt(base, 1)} ns (${fmt(both / base, 2)} x)` : ''));
  if (Number.isFinite(every)) say(`  with every syscall timed (budget 0): ${fmt(every, 1)} ns per syscall; sampled above the budget / every syscall timed = ${fmt(both / every, 2)}`);
  if (withSyscount) say(`  syscount in the same windows: ${fmt(median(of('both').map((f) => f.theirsSys)), 1)} ns per syscall (sys_exit only: a count per syscall id)`);
  say(`whole agent per context switch: ${fmt(median(figures.map((f) => f.oursSw)), 1)} ns, ${fmt(sw, 3)} x runqlat's ${fmt(median(figures.map((f) => f.theirsSw)), 1)} ns (median over all windows; target <= ${TARGET_RUNQLAT_RATIO})`);
  if (!(both <= TARGET_SYSCALL_NS)) missedTarget(`syscall_counts + syscall_latency cost ${fmt(both, 1)} ns per syscall > ${TARGET_SYSCALL_NS} ns (${fmt(both / TARGET_SYSCALL_NS, 2)} x the target)`);
  if (!(sw <= TARGET_RUNQLAT_RATIO)) missedTarget(`the agent's scheduler programs cost ${fmt(sw, 3)} x runqlat's ns per sched_switch (target <= ${TARGET_RUNQLAT_RATIO})`);
}

// ---------------------------------------------------------------- part 2

interface RefreshFigure {
  readonly name: string;
  readonly state: string;
  readonly us: number;
  readonly series: number;
  readonly bytes: number;
}

/** tickOnce() `TICKS` times after a 1 s pause that lets the maps fill; µs per refresh of each named sampler. */
async function timeTicks(h: KernelHarness, names: readonly string[]): Promise<{ figures: RefreshFigure[]; wallUs: number; cpuUs: number }> {
  await h.agent.tickOnce();
  await sleep(1000);
  await h.agent.tickOnce();
  const before = new Map(h.agent.status().map((s) => [s.name, s]));
  const cpu0 = process.cpuUsage();
  const t0 = process.hrtime.bigint();
  for (let i = 0; i < TICKS; i++) await h.agent.tickOnce();
  const wallUs = Number(process.hrtime.bigint() - t0) / 1e3 / TICKS;
  const c = process.cpuUsage(cpu0);
  const figures = names.map((name) => {
    const s = h.status(name);
    const b = before.get(name);
    const n = s.refreshes - (b?.refreshes ?? 0);
    const state = s.status.state === 'degraded' ? 'degraded' : s.status.state;
    return { name, state, us: n > 0 ? Number(s.refreshNs - (b?.refreshNs ?? 0n)) / 1e3 / n : Number.NaN, series: s.lastSeries, bytes: s.lastFrameBytes };
  });
  return { figures, wallUs, cpuUs: (c.user + c.system) / TICKS };
}

async function part2(): Promise<void> {
  say('');
  say(`== part 2: userspace cost per refresh of each kernel sampler (${TICKS} back-to-back tickOnce() calls, refresh + describe + encode)`);
  const kernel = SAMPLERS.filter((s) => s.kernel === true).map((s) => s.name);
  const alone = kernel.filter((n) => n !== 'rezolus_bpf');
  const figures: RefreshFigure[] = [];
  const notes: string[] = [];
  // Every kernel sampler together first (it also warms the shared code: describe, encode), then
  // rezolus_bpf alone while they are all loaded (it reads their programs), then each of the others alone.
  const all = await startHarness(kernel, true);
  const together = await timeTicks(all, kernel);
  const bpfSelf = await startHarness(['rezolus_bpf']);
  const programs = loadedObjects().reduce((n, [, o]) => n + o.programStats().filter((p) => p.attached).length, 0);
  const self = await timeTicks(bpfSelf, ['rezolus_bpf']);
  figures.push(...self.figures);
  await stopHarness(bpfSelf);
  await stopHarness(all);

  for (const name of alone) {
    const h = await startHarness([name]);
    const s = h.status(name).status;
    if (s.state !== 'active' && s.state !== 'degraded') {
      figures.push({ name, state: s.state, us: Number.NaN, series: 0, bytes: 0 });
      notes.push(`${name}: ${'reason' in s ? s.reason : 'error' in s ? s.error : ''}`);
    } else {
      if (s.state === 'degraded') notes.push(`${name} (degraded): ${s.reason}`);
      figures.push(...(await timeTicks(h, [name])).figures);
    }
    await stopHarness(h);
  }
  const rows: string[][] = [['sampler', 'state', 'series', 'frame B', 'us per refresh (alone)', 'us per refresh (all together, concurrent)']];
  for (const f of [...figures].sort((a, b) => a.name.localeCompare(b.name))) {
    const t = together.figures.find((x) => x.name === f.name);
    rows.push([f.name, f.state, String(f.series), String(f.bytes), fmt(f.us, 1), fmt(t?.us ?? Number.NaN, 1)]);
  }
  table(rows);
  const sum = figures.filter((f) => Number.isFinite(f.us)).reduce((s, f) => s + f.us, 0);
  say(`sum of the alone figures: ${fmt(sum, 0)} us per tick (rezolus_bpf read ${programs} attached programs)`);
  say(`all ${kernel.length} kernel samplers in one Agent: ${fmt(together.wallUs, 0)} us wall and ${fmt(together.cpuUs, 0)} us CPU per tickOnce()`);
  for (const n of notes) say(`  note: ${n}`);
}

// ---------------------------------------------------------------- part 3

interface AgentRun {
  readonly label: string;
  readonly cpuPct: number;
  readonly schedPct: number;
  readonly bpfPct: number;
  readonly ticks: number;
  readonly msPerTick: number;
  readonly rssMiB: number;
  readonly maxRssMiB: number;
  readonly active: string[];
  readonly other: string[];
  readonly bpfPrograms: number;
}

/** Sum of run time (ns) over every thread: /proc/<pid>/task/<tid>/schedstat, first field. */
function schedNs(pid: number): number {
  let sum = 0;
  for (const tid of readdirSync(`/proc/${pid}/task`)) {
    try {
      sum += Number(readFileSync(`/proc/${pid}/task/${tid}/schedstat`, 'latin1').split(' ')[0]);
    } catch {
      // thread gone
    }
  }
  return sum;
}

/**
 * Self time of a V8 CPU profile by module and by function, over the samples taken between
 * two readings `fromUs` and `toUs` of process.hrtime (V8 stamps profiles with the same
 * monotonic clock).
 */
function summariseProfile(dir: string, fromUs: number, toUs: number, label: string): void {
  const file = readdirSync(dir).find((f) => f.endsWith('.cpuprofile'));
  if (file === undefined) {
    say(`  (${label}: no .cpuprofile was written)`);
    return;
  }
  const p = JSON.parse(readFileSync(join(dir, file), 'utf8')) as CpuProfile;
  const byId = new Map(p.nodes.map((n) => [n.id, n]));
  const moduleOf = (url: string, fn: string): string => {
    if (url === '') return fn.startsWith('(') ? fn : '(native)';
    const nm = url.lastIndexOf('/node_modules/');
    if (nm >= 0) {
      const parts = url.slice(nm + 14).split('/');
      return parts[0]?.startsWith('@') === true ? `${parts[0]}/${parts[1]}` : (parts[0] ?? url);
    }
    const dist = url.indexOf('/dist/');
    if (dist >= 0) return url.slice(dist + 1);
    return url.startsWith('node:') ? url.split('/').slice(0, 2).join('/') : url;
  };
  const modules = new Map<string, number>();
  const functions = new Map<string, number>();
  let t = p.startTime;
  let busy = 0;
  for (let i = 0; i < p.samples.length; i++) {
    t += p.timeDeltas[i] ?? 0;
    if (t < fromUs) continue;
    if (t > toUs) break;
    const f = byId.get(p.samples[i] as number)?.callFrame;
    if (f === undefined || f.functionName === '(idle)') continue;
    const dt = (p.timeDeltas[i + 1] ?? p.timeDeltas[i] ?? 0) / 1000;
    busy += dt;
    const m = moduleOf(f.url, f.functionName);
    modules.set(m, (modules.get(m) ?? 0) + dt);
    const fn = `${f.functionName === '' ? '(anonymous)' : f.functionName} ${m}:${f.lineNumber + 1}`;
    functions.set(fn, (functions.get(fn) ?? 0) + dt);
  }
  if (busy === 0) {
    say(`  (${label}: no profile samples between the readings; profile ${p.startTime}..${p.endTime} us, window ${fromUs}..${toUs} us)`);
    return;
  }
  const top = (m: Map<string, number>, n: number): string[] =>
    [...m].sort((a, b) => b[1] - a[1]).slice(0, n).map(([k, v]) => `    ${fmt((v / busy) * 100, 1).padStart(5)} %  ${k}`);
  say(`  CPU profile of the agent at ${label}, ${fmt(busy, 0)} ms busy in the window; self time by module:`);
  for (const l of top(modules, 15)) say(l);
  say('  top functions by self time:');
  for (const l of top(functions, 15)) say(l);
}

async function agentRun(nats: NatsServer, jsm: JetStreamManager, nc: NatsConnection, host: string, interval: string, label: string): Promise<AgentRun> {
  const profDir = flags['cpu-prof'] === true ? join(procs.dataDir as string, `prof-${host}`) : undefined;
  if (profDir !== undefined) mkdirSync(profDir);
  const agent = spawnTracked(process.execPath, [...(profDir === undefined ? [] : ['--cpu-prof', `--cpu-prof-dir=${profDir}`, '--cpu-prof-interval=5000']), ENTRY, 'agent', '--nats', nats.url, '--host', host, '--interval', interval, '--log-level', 'warn']);
  const log = stderrTail(agent);
  const exitedEarly = (): string | undefined => (alive(agent) ? undefined : `the agent exited (${agent.exitCode ?? agent.signalCode}): ${log()}`);
  const filter = `${METRICS_PREFIX}.${host}.>`;
  const counts = async (): Promise<Map<string, number>> =>
    new Map(Object.entries((await jsm.streams.info(STREAM, { subjects_filter: filter })).state.subjects ?? {}));
  await waitFor(`agent (${label}) publishing`, 30_000, async () => (await counts()).size > 0, exitedEarly);
  const pid = agent.pid as number;

  await sleep(WARMUP_S * 1000);
  if (exitedEarly() !== undefined) throw new Error(exitedEarly());
  const a = { ticks: cpuTicks(pid), sched: schedNs(pid), bpf: fdinfoFigures(pid), subjects: await counts(), at: process.hrtime.bigint() };
  let maxRss = 0;
  const deadline = Date.now() + DURATION_S * 1000;
  while (Date.now() < deadline) {
    const failure = exitedEarly();
    if (failure !== undefined) throw new Error(failure);
    maxRss = Math.max(maxRss, memKiB(pid).rss);
    await sleep(Math.min(1000, deadline - Date.now()));
  }
  const b = { ticks: cpuTicks(pid), sched: schedNs(pid), bpf: fdinfoFigures(pid), subjects: await counts(), at: process.hrtime.bigint() };
  const rss = memKiB(pid).rss;
  maxRss = Math.max(maxRss, rss);

  const kv = await new Kvm(nc).open(STATUS_BUCKET);
  const entry = await kv.get(host);
  const doc = entry?.json<{ samplers: { name: string; state: string; reason?: string; error?: string }[] }>();
  await stopProc(agent);
  if (profDir !== undefined) summariseProfile(profDir, Number(a.at / 1000n), Number(b.at / 1000n), label);

  const windowS = Number(b.at - a.at) / 1e9;
  let bpfNs = 0;
  for (const [id, y] of b.bpf) bpfNs += y.runTimeNs - (a.bpf.get(id)?.runTimeNs ?? 0);
  const frames = [...b.subjects].map(([s, n]) => n - (a.subjects.get(s) ?? 0)).sort((x, y) => x - y);
  const ticks = frames[Math.floor(frames.length / 2)] ?? 0;
  const cpuMs = ((b.ticks - a.ticks) * 1000) / CLK_TCK;
  const samplers = doc?.samplers ?? [];
  return {
    label,
    cpuPct: (cpuMs / 1000 / windowS) * 100,
    schedPct: ((b.sched - a.sched) / 1e9 / windowS) * 100,
    bpfPct: (bpfNs / 1e9 / windowS) * 100,
    ticks,
    msPerTick: cpuMs / ticks,
    rssMiB: rss / 1024,
    maxRssMiB: maxRss / 1024,
    active: samplers.filter((s) => s.state === 'active' || s.state === 'degraded').map((s) => s.name + (s.state === 'degraded' ? ' (degraded)' : '')),
    other: samplers.filter((s) => s.state !== 'active' && s.state !== 'degraded').map((s) => `${s.name} ${s.state}: ${s.reason ?? s.error ?? ''}`),
    bpfPrograms: b.bpf.size,
  };
}

async function part3(): Promise<void> {
  say('');
  say(`== part 3: CPU of the compiled agent, every sampler the default config enables, ${WARMUP_S} s warm-up + ${DURATION_S} s per rate`);
  ensureBuilt();
  procs.dataDir = mkdtempSync(join(tmpdir(), 'rezolus-bench-kernel-'));
  procs.nats = await startNatsServer({ binary: NATS_SERVER_BIN, port: 0, dataDir: procs.dataDir });
  procs.nc = await connect({ servers: procs.nats.url, name: 'rezolus-bench-kernel' });
  const jsm = await jetstreamManager(procs.nc);
  // Stats on for the agent's BPF run time (kernel time in the traced tasks, not in the agent's utime+stime).
  enableStats();
  const runs: AgentRun[] = [];
  runs.push(await agentRun(procs.nats, jsm, procs.nc, 'bench', '1s', '1 Hz'));
  runs.push(await agentRun(procs.nats, jsm, procs.nc, 'bench10', '100ms', '10 Hz'));
  closeStats();

  const rows: string[][] = [['rate', 'ticks', 'CPU % of a core (utime+stime)', 'CPU % (schedstat)', 'ms CPU per tick', "agent's BPF, % of a core", 'RSS end / max MiB']];
  for (const r of runs) {
    rows.push([r.label, String(r.ticks), fmt(r.cpuPct, 3), fmt(r.schedPct, 3), fmt(r.msPerTick, 3), `${fmt(r.bpfPct, 3)} (${r.bpfPrograms} progs)`, `${fmt(r.rssMiB, 1)} / ${fmt(r.maxRssMiB, 1)}`]);
  }
  table(rows);
  if (flags['cpu-prof'] === true) {
    say('  (--cpu-prof: the figures above include the profiler, ~8 % of a core here, and scheduler_runqueue may fail to load:');
    say('   the verifier returns EAGAIN while a signal, the profiler\'s SIGPROF, is pending; read the shares, not the CPU)');
  }
  const first = runs[0] as AgentRun;
  say(`active samplers (status KV, ${first.active.length}): ${first.active.join(', ')}`);
  if (first.other.length > 0) say(`not active: ${first.other.join('; ')}`);
  const [one, ten] = runs as [AgentRun, AgentRun];
  if (!(one.cpuPct <= TARGET_CPU_1HZ)) missedTarget(`agent at 1 Hz uses ${fmt(one.cpuPct, 3)} % of a core > ${TARGET_CPU_1HZ} % (${fmt(one.cpuPct / TARGET_CPU_1HZ, 1)} x the target)`);
  if (!(ten.cpuPct <= TARGET_CPU_10HZ)) missedTarget(`agent at 10 Hz uses ${fmt(ten.cpuPct, 3)} % of a core > ${TARGET_CPU_10HZ} % (${fmt(ten.cpuPct / TARGET_CPU_10HZ, 1)} x the target)`);
}

// ---------------------------------------------------------------- main

const budgetS = (PARTS.has('1') ? ROUNDS * 7 * (DURATION_S + 15) + 240 : 0) + (PARTS.has('2') ? 120 + TICKS / 5 : 0) + (PARTS.has('3') ? 2 * (DURATION_S + WARMUP_S + 40) + 180 : 0);
const watchdog = setTimeout(() => {
  process.stderr.write('kernel: watchdog expired, cleaning up\n');
  void cleanup().finally(() => process.exit(1));
}, budgetS * 1000);
watchdog.unref();

let code = 0;
try {
  if (process.getuid?.() !== 0) throw new Error('needs root (BPF programs and BPF_ENABLE_STATS)');
  say(`kernel bench: ${new Date().toISOString()}, ${readFileSync('/proc/sys/kernel/osrelease', 'latin1').trim()}, node ${process.version}, CLK_TCK ${CLK_TCK}, load ${readFileSync('/proc/loadavg', 'latin1').split(' ').slice(0, 3).join(' ')}`);
  if (PARTS.has('1')) await part1();
  if (PARTS.has('2')) await part2();
  if (PARTS.has('3')) await part3();
  say('');
  say(missed === 0 ? 'all targets met' : `${missed} target(s) missed`);
} catch (error) {
  process.stderr.write(`kernel failed: ${error instanceof Error ? error.stack ?? error.message : String(error)}\n`);
  code = 1;
} finally {
  await cleanup();
}
process.exit(code);
