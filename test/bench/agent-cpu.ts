/**
 * CPU and memory of the compiled agent (all samplers, or --samplers, at the
 * intervals its tree ships, publishing to a private nats-server) side by side
 * with Debian's prometheus-node-exporter scraped once a second, over the same
 * window on the same machine; with --against, a second compiled CLI (another
 * checkout) with the same samplers in the same window.
 *
 *   npx tsx test/bench/agent-cpu.ts            # 60 s
 *   npx tsx test/bench/agent-cpu.ts 10         # quick check (also --duration 10)
 *   npx tsx test/bench/agent-cpu.ts 100 --warmup 20 --samplers procfs --against ../old/dist/cli/rezolus.js
 *
 * CPU is utime+stime from /proc/<pid>/stat (all threads), read at t=5 s (after
 * the warm-up) and at the end; RSS is VmRSS from /proc/<pid>/status, sampled
 * every second. Agent ticks in the window are counted from the stream: the
 * per-subject message counts of the REZOLUS stream at the two readings.
 *
 * Targets: agent CPU per tick <= 0.3 x node_exporter CPU per scrape; agent RSS
 * (end and max) <= 70 MiB. A measurement, not a test: exit code 0 when a target
 * is missed, with a "TARGET MISSED" line. Every process started here is stopped
 * at the end, on error and on Ctrl-C too.
 */
import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { existsSync, mkdtempSync, readdirSync, readlinkSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { parseArgs } from 'node:util';
import { jetstreamManager } from '@nats-io/jetstream';
import type { NatsConnection } from '@nats-io/nats-core';
import { connect } from '@nats-io/transport-node';
import { freePort, startNatsServer, type NatsServer } from '../../src/up/nats-server.js';
import {
  alive, CLK_TCK, cpuModel, cpuTicks, cpuTicksSplit, ENTRY, ensureBuilt, fmt, hostSubjectCounts, memKiB, NATS_SERVER_BIN,
  PROCFS_SAMPLERS, intervalsAsShipped, samplerNamesOf, say, sleep, sleepUntil, spawnAgent, stderrTail, stopChild, treeOf, waitFor, writeAgentConfig,
} from './common.js';

const NODE_EXPORTER_BIN = '/usr/bin/prometheus-node-exporter';
const STREAM = 'REZOLUS';
const TARGET_RATIO = 0.3;
const TARGET_RSS_MIB = 70;
/** node_exporter as measured in /work/shared/research/ecosystem.md §5.1 */
const REFERENCE_NE_MS_PER_SCRAPE = 7.0;

// ---------------------------------------------------------------- arguments

const USAGE = `usage: npx tsx test/bench/agent-cpu.ts [SECONDS | --duration SECONDS] [options]   (default 60 s, at least warm-up + 3)
  --samplers all|procfs|a,b,c   which samplers run (default all; procfs = the 9 procfs/sysfs ones, [kernel] off)
  --interval DUR                the interval of every sampler shipped at 1 s (100ms for 10 Hz); the ones shipped
                                slower (cpu_perf, rezolus_bpf: 10s) keep theirs, as [defaults] interval does.
                                Default: each sampler at the interval its tree ships
  --warmup S                    seconds left out before the first reading (default ${5})
  --cli PATH                    the compiled CLI to measure (default this checkout's dist/cli/rezolus.js)
  --against PATH                a second compiled CLI (another checkout's dist/cli/rezolus.js, or this one) run at
                                the same time, same samplers (those both know), same window: old against new
  --no-http                     [http] off for both (default: on as shipped, each on a free port)
  --node-args "FLAGS"           node/V8 flags for this tree's agent (e.g. "--max-semi-space-size=4")
  --against-node-args "FLAGS"   the same for the --against agent
  --env K=V, --against-env K=V  environment for one agent (e.g. REZOLUS_AGENT_V8_FLAGS= for none)
`;
const { values: flags, positionals } = parseArgs({
  options: {
    duration: { type: 'string', short: 'd' },
    samplers: { type: 'string' },
    interval: { type: 'string' },
    warmup: { type: 'string' },
    cli: { type: 'string' },
    against: { type: 'string' },
    'node-args': { type: 'string' },
    'no-http': { type: 'boolean' },
    'against-node-args': { type: 'string' },
    env: { type: 'string', multiple: true },
    'against-env': { type: 'string', multiple: true },
    help: { type: 'boolean', short: 'h' },
  },
  allowPositionals: true,
});
if (flags.help === true) {
  process.stdout.write(USAGE);
  process.exit(0);
}
const WARMUP_S = Number(flags.warmup ?? 5);
const DURATION_S = Number(flags.duration ?? positionals[0] ?? 60);
if (!Number.isInteger(WARMUP_S) || WARMUP_S < 2 || !Number.isInteger(DURATION_S) || DURATION_S < WARMUP_S + 3 || DURATION_S > 3600) {
  process.stderr.write(`agent-cpu: duration must be a whole number of seconds in [warm-up + 3, 3600], got "${flags.duration ?? positionals[0]}"\n${USAGE}`);
  process.exit(2);
}
const INTERVAL = flags.interval ?? '1s';
/** the interval of each sampler in the agent of `tree`: --interval, but where the tree ships one slower than 1 s */
const intervalsOf = (tree: string, samplers: readonly string[]): Map<string, string> => intervalsAsShipped(tree, samplers, flags.interval);
const INTERVAL_MS = /^(\d+)ms$/.test(INTERVAL) ? Number(INTERVAL.slice(0, -2)) : /^(\d+)s$/.test(INTERVAL) ? Number(INTERVAL.slice(0, -1)) * 1000 : Number.NaN;
if (!(INTERVAL_MS >= 10 && INTERVAL_MS <= 60_000)) {
  process.stderr.write(`agent-cpu: --interval takes 10ms..60s as Nms or Ns, got "${INTERVAL}"\n`);
  process.exit(2);
}
const SAMPLER_SET = flags.samplers ?? 'all';
const CLI = flags.cli === undefined ? ENTRY : resolve(flags.cli);
const AGAINST = flags.against === undefined ? undefined : resolve(flags.against);
if (AGAINST !== undefined && !existsSync(AGAINST)) {
  process.stderr.write(`agent-cpu: --against ${AGAINST} does not exist (build that checkout first: npx tsc -p tsconfig.build.json)\n`);
  process.exit(2);
}
const splitArgs = (s: string | undefined): string[] => (s ?? '').split(/\s+/).filter((x) => x !== '');
const envOf = (list: readonly string[] | undefined): Record<string, string> =>
  Object.fromEntries((list ?? []).map((kv) => [kv.slice(0, Math.max(0, kv.indexOf('='))), kv.slice(kv.indexOf('=') + 1)]).filter(([k]) => k !== ''));
/** the targets of issue 19 for every sampler: % of one core at 1 Hz and at 10 Hz, RSS MiB */
const TARGET_SHARE_PCT = INTERVAL_MS >= 1000 ? 0.5 : 2;
const TARGET_RSS_ALL_MIB = INTERVAL_MS >= 1000 ? 70 : 80;

// ---------------------------------------------------------------- helpers

/** PIDs of running processes whose executable is the given file. */
function pidsOf(binary: string): Set<number> {
  const pids = new Set<number>();
  for (const name of readdirSync('/proc')) {
    if (!/^\d+$/.test(name)) continue;
    try {
      if (readlinkSync(`/proc/${name}/exe`) === binary) pids.add(Number(name));
    } catch {
      // gone, or not ours to read
    }
  }
  return pids;
}

/**
 * Installs prometheus-node-exporter when missing. The package may try to start
 * its service; any instance that appeared during the install is stopped (and
 * only those: instances that ran before are left alone).
 */
function ensureNodeExporter(): void {
  if (existsSync(NODE_EXPORTER_BIN)) return;
  say('prometheus-node-exporter is missing: apt-get install');
  const before = pidsOf(NODE_EXPORTER_BIN);
  const r = spawnSync('apt-get', ['install', '-y', '--no-install-recommends', 'prometheus-node-exporter'], {
    stdio: ['ignore', 'ignore', 'inherit'],
    env: { ...process.env, DEBIAN_FRONTEND: 'noninteractive' },
    timeout: 300_000,
  });
  for (const pid of pidsOf(NODE_EXPORTER_BIN)) {
    if (before.has(pid)) continue;
    say(`stopping the node_exporter the package started (pid ${pid})`);
    try {
      process.kill(pid, 'SIGTERM');
    } catch {
      // already gone
    }
  }
  if (!existsSync(NODE_EXPORTER_BIN)) throw new Error(`apt-get install prometheus-node-exporter failed (exit ${r.status ?? r.signal})`);
}


// ---------------------------------------------------------------- the run

interface Agent {
  /** "agent" (this tree) or "against" */
  readonly label: string;
  readonly entry: string;
  readonly host: string;
  readonly nodeArgs: readonly string[];
  readonly env: Record<string, string>;
  child?: ChildProcess;
  log?: () => string;
}

interface Processes {
  dataDir?: string;
  nats?: NatsServer;
  agents: Agent[];
  exporter?: ChildProcess;
  idle?: ChildProcess;
  nc?: NatsConnection;
}

const procs: Processes = { agents: [] };
let cleaning: Promise<void> | undefined;

function cleanup(): Promise<void> {
  cleaning ??= (async () => {
    await procs.nc?.close().catch(() => undefined);
    await Promise.all([...procs.agents.map((a) => stopChild(a.child)), stopChild(procs.exporter), stopChild(procs.idle)]);
    await procs.nats?.stop().catch(() => undefined);
    if (procs.dataDir !== undefined) rmSync(procs.dataDir, { recursive: true, force: true });
  })();
  return cleaning;
}

for (const signal of ['SIGINT', 'SIGTERM'] as const) {
  process.once(signal, () => {
    process.stderr.write(`\nagent-cpu: ${signal}, cleaning up\n`);
    void cleanup().finally(() => process.exit(130));
  });
}

interface Split {
  readonly user: number;
  readonly system: number;
}

interface Reading {
  readonly agents: readonly Split[];
  readonly exporter: Split;
  readonly nats: number;
  readonly idle: number;
  readonly subjects: readonly Map<string, number>[];
  readonly at: number;
}

interface Scrape {
  readonly start: number;
  readonly end: number;
  readonly bytes: number;
  readonly ok: boolean;
}

/** The samplers both trees run: --samplers, narrowed to the names every tree knows. */
function samplerSet(trees: readonly string[]): string[] {
  const known = trees.map((t) => new Set(samplerNamesOf(t)));
  const asked = SAMPLER_SET === 'all' ? [...(known[0] as Set<string>)] : SAMPLER_SET === 'procfs' ? [...PROCFS_SAMPLERS] : SAMPLER_SET.split(',');
  const both = asked.filter((n) => known.every((k) => k.has(n)));
  const left = asked.filter((n) => !both.includes(n));
  if (left.length > 0 && SAMPLER_SET !== 'all') throw new Error(`--samplers: ${left.join(', ')} unknown to ${trees.join(' or ')}`);
  if (left.length > 0) say(`samplers left out (not in every tree): ${left.join(', ')}`);
  if (both.length === 0) throw new Error('no sampler to run');
  return both;
}

async function run(): Promise<void> {
  if (CLI === ENTRY) ensureBuilt();
  ensureNodeExporter();

  procs.agents.push({ label: 'agent', entry: CLI, host: 'bench', nodeArgs: splitArgs(flags['node-args']), env: envOf(flags.env) });
  if (AGAINST !== undefined) {
    procs.agents.push({ label: 'against', entry: AGAINST, host: 'against', nodeArgs: splitArgs(flags['against-node-args']), env: envOf(flags['against-env']) });
  }
  const samplers = samplerSet(procs.agents.map((a) => treeOf(a.entry)));

  procs.dataDir = mkdtempSync(join(tmpdir(), 'rezolus-bench-cpu-'));
  procs.nats = await startNatsServer({ binary: NATS_SERVER_BIN, port: 0, dataDir: procs.dataDir });
  const natsUrl = procs.nats.url;

  for (const a of procs.agents) {
    const config = writeAgentConfig(join(procs.dataDir, `${a.host}.toml`), treeOf(a.entry), {
      samplers: intervalsOf(treeOf(a.entry), samplers),
      kernel: SAMPLER_SET !== 'procfs',
      // as shipped (HTTP on), each on a port of its own
      httpListen: flags['no-http'] === true ? undefined : `127.0.0.1:${await freePort()}`,
      // ticks are counted from the stream: it must keep every frame of the run (by default 15 min)
      streamMaxAge: `${Math.ceil(DURATION_S / 60) + 5}m`,
    });
    a.child = spawnAgent({ entry: a.entry, natsUrl, host: a.host, config, nodeArgs: a.nodeArgs, env: a.env });
    a.log = stderrTail(a.child);
  }
  const agents = procs.agents.map((a) => a.child as ChildProcess);

  const nePort = await freePort();
  const exporter = spawn(NODE_EXPORTER_BIN, [`--web.listen-address=127.0.0.1:${nePort}`], { stdio: ['ignore', 'ignore', 'pipe'] });
  procs.exporter = exporter;
  const exporterLog = stderrTail(exporter);
  const neUrl = `http://127.0.0.1:${nePort}/metrics`;

  // The floor of the runtime: a Node process that only wakes once a second.
  const idle = spawn(process.execPath, ['-e', 'setInterval(() => {}, 1000)'], { stdio: 'ignore' });
  procs.idle = idle;

  const exitedEarly = (): string | undefined => {
    for (const a of procs.agents) {
      const c = a.child as ChildProcess;
      if (!alive(c)) return `the ${a.label} (${a.entry}) exited (${c.exitCode ?? c.signalCode}): ${a.log?.()}`;
    }
    if (!alive(idle)) return 'the idle node baseline exited';
    if (!alive(exporter)) return `node_exporter exited (${exporter.exitCode ?? exporter.signalCode}): ${exporterLog()}`;
    return undefined;
  };

  procs.nc = await connect({ servers: natsUrl, name: 'rezolus-bench-agent-cpu' });
  const jsm = await jetstreamManager(procs.nc);
  for (const a of procs.agents) {
    await waitFor(`${a.label} publishing`, 30_000, async () => (await hostSubjectCounts(jsm, a.host, STREAM)).size > 0, exitedEarly);
  }
  await waitFor('node_exporter answering', 10_000, async () => (await fetch(neUrl, { signal: AbortSignal.timeout(2000) })).ok, exitedEarly);

  // Timeline on whole wall-clock seconds S: the agents tick at whole intervals, node_exporter
  // is scraped at S+k+0.25, the two readings are taken at S+WARMUP+0.55 and S+DURATION+0.55,
  // so no 1 s tick or scrape straddles a reading (at 100 ms one tick in ten is near one).
  const S = Math.ceil(Date.now() / 1000) * 1000 + 1000;
  const tA = S + WARMUP_S * 1000 + 550;
  const tB = S + DURATION_S * 1000 + 550;
  say(`CPU: ${cpuModel()}; node ${process.version}`);
  say(`samplers (${samplers.length}, every ${INTERVAL}${SAMPLER_SET === 'procfs' ? ', [kernel] off' : ''}${flags['no-http'] === true ? ', [http] off' : ''}): ${samplers.join(', ')}`);
  for (const a of procs.agents) {
    const slower = [...intervalsOf(treeOf(a.entry), samplers)].filter(([, iv]) => iv !== INTERVAL);
    if (slower.length > 0) say(`  ${a.label} runs ${slower.map(([n, iv]) => `${n} at ${iv}`).join(', ')} (as its tree ships them)`);
  }
  for (const a of procs.agents) {
    const env = Object.entries(a.env).map(([k, v]) => `${k}=${v}`).join(' ');
    say(`${a.label}: pid ${a.child?.pid}, host ${a.host}, ${a.entry}${a.nodeArgs.length > 0 ? `, node ${a.nodeArgs.join(' ')}` : ''}${env === '' ? '' : `, ${env}`}`);
  }
  say(
    `node_exporter pid ${exporter.pid} (127.0.0.1:${nePort}), nats-server pid ${procs.nats.pid} (${natsUrl}); ` +
      `running ${DURATION_S} s, measuring the last ${DURATION_S - WARMUP_S} s`,
  );

  const scrapes: Scrape[] = [];
  const scraper = (async () => {
    for (let k = 0; ; k++) {
      const at = S + k * 1000 + 250;
      if (at > tB) return;
      await sleepUntil(at);
      const start = Date.now();
      try {
        const res = await fetch(neUrl, { signal: AbortSignal.timeout(5000) });
        const body = await res.arrayBuffer();
        scrapes.push({ start, end: Date.now(), bytes: body.byteLength, ok: res.ok });
      } catch {
        scrapes.push({ start, end: Date.now(), bytes: 0, ok: false });
      }
    }
  })();

  const maxRss = { agents: agents.map(() => 0), exporter: 0, nats: 0, idle: 0 };
  /** CPU ticks of the agents and node_exporter each second, for the per-slice trend */
  const perSecond: { agents: number[]; exporter: number; rss: number[] }[] = [];
  const sampleRss = (): void => {
    agents.forEach((c, i) => {
      if (alive(c)) maxRss.agents[i] = Math.max(maxRss.agents[i] as number, memKiB(c.pid as number).rss);
    });
    if (alive(exporter)) maxRss.exporter = Math.max(maxRss.exporter, memKiB(exporter.pid as number).rss);
    maxRss.nats = Math.max(maxRss.nats, memKiB(procs.nats?.pid as number).rss);
    if (alive(idle)) maxRss.idle = Math.max(maxRss.idle, memKiB(idle.pid as number).rss);
  };
  let stopRss = false;
  const rssSampler = (async () => {
    for (let k = 0; !stopRss; k++) {
      await sleepUntil(S + k * 1000 + 750);
      if (stopRss) return;
      try {
        sampleRss();
        perSecond.push({ agents: agents.map((c) => cpuTicks(c.pid as number)), exporter: cpuTicks(exporter.pid as number), rss: agents.map((c) => memKiB(c.pid as number).rss) });
      } catch {
        // a process went away; read() reports it
      }
    }
  })();

  /** Sleeps until t, failing early when an agent or node_exporter exits. */
  const waitUntil = async (t: number): Promise<void> => {
    while (Date.now() < t) {
      const failure = exitedEarly();
      if (failure !== undefined) throw new Error(failure);
      await sleep(Math.min(500, t - Date.now()));
    }
  };

  const read = async (): Promise<Reading> => {
    const failure = exitedEarly();
    if (failure !== undefined) throw new Error(failure);
    const at = Date.now();
    const r = {
      agents: agents.map((c) => cpuTicksSplit(c.pid as number)),
      exporter: cpuTicksSplit(exporter.pid as number),
      nats: cpuTicks(procs.nats?.pid as number),
      idle: cpuTicks(idle.pid as number),
    };
    const subjects = await Promise.all(procs.agents.map((a) => hostSubjectCounts(jsm, a.host, STREAM)));
    return { ...r, subjects, at };
  };

  try {
    await waitUntil(tA);
    const a = await read();
    await waitUntil(tB);
    const b = await read();
    sampleRss();
    const end = {
      agents: agents.map((c) => memKiB(c.pid as number)),
      exporter: memKiB(exporter.pid as number),
      nats: memKiB(procs.nats.pid),
      idle: memKiB(idle.pid as number),
    };
    stopRss = true;
    await Promise.all([scraper, rssSampler]);
    report(a, b, end, maxRss, scrapes, perSecond);
  } finally {
    stopRss = true;
    await Promise.allSettled([scraper, rssSampler]);
  }
}

/** CPU ms per second (= per 1 s tick, per scrape) in 10 s slices from the start: shows the JIT warming up; and each agent's highest RSS in each slice. */
function slices(perSecond: readonly { agents: number[]; exporter: number; rss: number[] }[]): void {
  const ms = (ticks: number): number => (ticks * 1000) / CLK_TCK;
  const rows = [...procs.agents.map((a) => ({ name: a.label, cells: [] as string[] })), { name: 'node_exporter', cells: [] as string[] }];
  for (let i = 0; i + 10 < perSecond.length; i += 10) {
    const x = perSecond[i] as { agents: number[]; exporter: number };
    const y = perSecond[i + 10] as { agents: number[]; exporter: number };
    const values = [...x.agents.map((v, j) => (y.agents[j] as number) - v), y.exporter - x.exporter];
    values.forEach((v, j) => rows[j]?.cells.push(fmt(ms(v) / 10, 1)));
  }
  if (rows[0]?.cells.length === 0) return;
  say('CPU ms per second in 10 s slices from the start:');
  for (const r of rows) say(`  ${r.name.padEnd(14)} ${r.cells.join('  ')}`);
  say('highest RSS (1 s samples) in 10 s slices from the start, MiB:');
  procs.agents.forEach((a, j) => {
    const cells: string[] = [];
    for (let i = 0; i < perSecond.length; i += 10) cells.push(fmt(Math.max(...perSecond.slice(i, i + 10).map((x) => x.rss[j] as number)) / 1024, 1));
    say(`  ${a.label.padEnd(14)} ${cells.join('  ')}`);
  });
}

function report(
  a: Reading,
  b: Reading,
  end: { agents: { rss: number; hwm: number }[] } & Record<'exporter' | 'nats' | 'idle', { rss: number; hwm: number }>,
  maxRss: { agents: number[] } & Record<'exporter' | 'nats' | 'idle', number>,
  scrapes: readonly Scrape[],
  perSecond: readonly { agents: number[]; exporter: number; rss: number[] }[],
): void {
  const ms = (ticks: number): number => (ticks * 1000) / CLK_TCK;
  const windowS = (b.at - a.at) / 1000;
  const mib = (kib: number): string => fmt(kib / 1024, 1);
  const share = (x: number): number => (x / (windowS * 1000)) * 100;

  const inWindow = scrapes.filter((s) => s.start >= a.at && s.end <= b.at);
  const okScrapes = inWindow.filter((s) => s.ok);
  const scrapeBytes = okScrapes.length > 0 ? okScrapes.reduce((s, x) => s + x.bytes, 0) / okScrapes.length : Number.NaN;
  const scrapeMs = okScrapes.length > 0 ? okScrapes.reduce((s, x) => s + (x.end - x.start), 0) / okScrapes.length : Number.NaN;
  const neMs = ms(b.exporter.user + b.exporter.system - a.exporter.user - a.exporter.system);
  const nePerScrape = neMs / okScrapes.length;
  const natsMs = ms(b.nats - a.nats);
  const idleMs = ms(b.idle - a.idle);

  say('');
  say(`window ${fmt(windowS, 1)} s (t=${WARMUP_S}.55 s to t=${DURATION_S}.55 s); CPU from /proc/<pid>/stat, ${CLK_TCK} ticks/s (10 ms resolution at 100)`);
  const agents = procs.agents.map((ag, i) => {
    // Ticks: frames per sampler subject over the window (every active sampler publishes once a tick).
    const perSubject: { subject: string; frames: number }[] = [];
    for (const [subject, n] of b.subjects[i] as Map<string, number>) perSubject.push({ subject, frames: n - ((a.subjects[i] as Map<string, number>).get(subject) ?? 0) });
    const frames = perSubject.reduce((s, x) => s + x.frames, 0);
    const sorted = perSubject.map((x) => x.frames).sort((x, y) => x - y);
    const ticks = sorted[Math.floor(sorted.length / 2)] ?? 0;
    const uneven = perSubject.filter((x) => x.frames !== ticks);
    say(`${ag.label}: ${perSubject.length} sampler subjects, ${frames} frames in the window, ${ticks} ticks (median frames per subject)`);
    if (uneven.length > 0) say(`  subjects off the median: ${uneven.map((x) => `${x.subject.split('.').pop()}=${x.frames}`).join(', ')}`);
    const s0 = a.agents[i] as Split;
    const s1 = b.agents[i] as Split;
    const cpuMs = ms(s1.user + s1.system - s0.user - s0.system);
    return { ag, ticks, frames, cpuMs, user: ms(s1.user - s0.user), system: ms(s1.system - s0.system), perTick: cpuMs / ticks, end: end.agents[i] as { rss: number; hwm: number }, max: maxRss.agents[i] as number };
  });
  say(`node_exporter: ${okScrapes.length} scrapes in the window (${inWindow.length - okScrapes.length} failed), ${fmt(scrapeBytes / 1024, 1)} KiB and ${fmt(scrapeMs, 1)} ms wall each`);
  say('');
  const header = [...agents.map((x) => (x.ag.label === 'agent' ? 'rezolus agent' : 'against agent')), 'node_exporter', 'nats-server (info)', 'idle node (floor)'];
  const rows: string[][] = [
    ['', ...header],
    ['CPU over the window, ms', ...agents.map((x) => fmt(x.cpuMs, 0)), fmt(neMs, 0), fmt(natsMs, 0), fmt(idleMs, 0)],
    [
      'CPU user / system, ms',
      ...agents.map((x) => `${fmt(x.user, 0)} / ${fmt(x.system, 0)}`),
      `${fmt(ms(b.exporter.user - a.exporter.user), 0)} / ${fmt(ms(b.exporter.system - a.exporter.system), 0)}`,
      '',
      '',
    ],
    ['events in the window', ...agents.map((x) => `${x.ticks} ticks`), `${okScrapes.length} scrapes`, `${agents.reduce((s, x) => s + x.frames, 0)} frames`, `${fmt(windowS, 0)} wake-ups`],
    ['CPU per event, ms', ...agents.map((x) => fmt(x.perTick, 3)), fmt(nePerScrape, 3), '', fmt(idleMs / windowS, 3)],
    ['share of one core, %', ...agents.map((x) => fmt(share(x.cpuMs), 3)), fmt(share(neMs), 3), fmt(share(natsMs), 3), fmt(share(idleMs), 3)],
    ['RSS at end, MiB', ...agents.map((x) => mib(x.end.rss)), mib(end.exporter.rss), mib(end.nats.rss), mib(end.idle.rss)],
    ['RSS max (1 s samples), MiB', ...agents.map((x) => mib(x.max)), mib(maxRss.exporter), mib(maxRss.nats), mib(maxRss.idle)],
    ['VmHWM (kernel peak), MiB', ...agents.map((x) => mib(x.end.hwm)), mib(end.exporter.hwm), mib(end.nats.hwm), mib(end.idle.hwm)],
  ];
  const w = (rows[0] as string[]).map((_, i) => Math.max(...rows.map((r) => (r[i] ?? '').length)));
  for (const r of rows) say(r.map((c, i) => (i === 0 ? c.padEnd(w[0] as number) : c.padStart(w[i] as number))).join('  '));
  say('');
  // Ticks per second of wall time: an agent at 10 Hz is compared per second with a scrape a second.
  const ticksPerScrape = INTERVAL_MS < 1000 ? 1000 / INTERVAL_MS : 1;
  for (const x of agents) {
    say(`${x.ag.label}: CPU per ${ticksPerScrape === 1 ? 'tick' : `${ticksPerScrape} ticks`} / node_exporter CPU per scrape = ${fmt((x.perTick * ticksPerScrape) / nePerScrape, 3)}`);
  }
  const [mine, other] = agents;
  if (mine !== undefined && other !== undefined) {
    say(`agent / against, same window: CPU per tick ${fmt(mine.perTick / other.perTick, 3)}, RSS at end ${fmt(mine.end.rss / other.end.rss, 3)}, VmHWM ${fmt(mine.end.hwm / other.end.hwm, 3)}`);
  }
  if (mine !== undefined && AGAINST === undefined) {
    say(`  (ecosystem.md §5.1 measured node_exporter at ${REFERENCE_NE_MS_PER_SCRAPE} ms per scrape; against that: ${fmt(mine.perTick / REFERENCE_NE_MS_PER_SCRAPE, 3)})`);
  }
  slices(perSecond);
  say('');
  if (mine === undefined) return;
  let missed = 0;
  const miss = (line: string): void => {
    missed++;
    say(`TARGET MISSED: ${line}`);
  };
  const ratio = (mine.perTick * ticksPerScrape) / nePerScrape;
  const rssMib = mine.end.rss / 1024;
  const maxMib = mine.max / 1024;
  if (SAMPLER_SET === 'procfs') {
    if (!(ratio <= TARGET_RATIO)) miss(`procfs samplers: CPU ratio ${fmt(ratio, 3)} > ${TARGET_RATIO} (agent ${fmt(mine.perTick, 3)} ms/tick, node_exporter ${fmt(nePerScrape, 3)} ms/scrape)`);
    if (!(rssMib <= TARGET_RSS_MIB)) miss(`agent RSS at end ${fmt(rssMib, 1)} MiB > ${TARGET_RSS_MIB} MiB`);
    if (!(maxMib <= TARGET_RSS_MIB)) miss(`agent max RSS ${fmt(maxMib, 1)} MiB > ${TARGET_RSS_MIB} MiB`);
  } else if (SAMPLER_SET === 'all') {
    if (!(share(mine.cpuMs) <= TARGET_SHARE_PCT)) miss(`every sampler at ${INTERVAL}: ${fmt(share(mine.cpuMs), 3)} % of a core > ${TARGET_SHARE_PCT} %`);
    if (!(rssMib <= TARGET_RSS_ALL_MIB)) miss(`agent RSS at end ${fmt(rssMib, 1)} MiB > ${TARGET_RSS_ALL_MIB} MiB`);
    if (!(maxMib <= TARGET_RSS_ALL_MIB)) miss(`agent max RSS ${fmt(maxMib, 1)} MiB > ${TARGET_RSS_ALL_MIB} MiB`);
  }
  if (missed === 0 && SAMPLER_SET === 'procfs') say(`targets met: CPU ratio <= ${TARGET_RATIO}, agent RSS <= ${TARGET_RSS_MIB} MiB`);
  if (missed === 0 && SAMPLER_SET === 'all') say(`targets met: <= ${TARGET_SHARE_PCT} % of a core, RSS <= ${TARGET_RSS_ALL_MIB} MiB`);
}

const watchdog = setTimeout(() => {
  process.stderr.write('agent-cpu: watchdog expired, cleaning up\n');
  void cleanup().finally(() => process.exit(1));
}, (DURATION_S + 180) * 1000);
watchdog.unref();

let code = 0;
try {
  await run();
} catch (error) {
  process.stderr.write(`agent-cpu failed: ${error instanceof Error ? error.message : String(error)}\n`);
  code = 1;
} finally {
  await cleanup();
}
process.exit(code);
