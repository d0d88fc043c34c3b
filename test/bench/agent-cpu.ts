/**
 * CPU and memory of the compiled agent (all samplers, 1 s interval, publishing
 * to a private nats-server) side by side with Debian's prometheus-node-exporter
 * scraped once a second, over the same window on the same machine.
 *
 *   npx tsx test/bench/agent-cpu.ts            # 60 s
 *   npx tsx test/bench/agent-cpu.ts 10         # quick check (also --duration 10)
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
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import { jetstreamManager, type JetStreamManager } from '@nats-io/jetstream';
import type { NatsConnection } from '@nats-io/nats-core';
import { connect } from '@nats-io/transport-node';
import { freePort, startNatsServer, type NatsServer } from '../../src/up/nats-server.js';
import {
  agentArgs, alive, CLK_TCK, cpuTicks, cpuTicksSplit, ensureBuilt, fmt, memKiB, NATS_SERVER_BIN, ROOT, say, sleep,
  sleepUntil, stderrTail, stopChild, waitFor,
} from './common.js';

const NODE_EXPORTER_BIN = '/usr/bin/prometheus-node-exporter';
const STREAM = 'REZOLUS';
const WARMUP_S = 5;
const TARGET_RATIO = 0.3;
const TARGET_RSS_MIB = 70;
/** node_exporter as measured in /work/shared/research/ecosystem.md §5.1 */
const REFERENCE_NE_MS_PER_SCRAPE = 7.0;

// ---------------------------------------------------------------- arguments

const { values: flags, positionals } = parseArgs({
  options: { duration: { type: 'string', short: 'd' }, help: { type: 'boolean', short: 'h' } },
  allowPositionals: true,
});
if (flags.help === true) {
  process.stdout.write('usage: npx tsx test/bench/agent-cpu.ts [SECONDS | --duration SECONDS]   (default 60, at least 8)\n');
  process.exit(0);
}
const DURATION_S = Number(flags.duration ?? positionals[0] ?? 60);
if (!Number.isInteger(DURATION_S) || DURATION_S < WARMUP_S + 3 || DURATION_S > 3600) {
  process.stderr.write(`agent-cpu: duration must be a whole number of seconds in [${WARMUP_S + 3}, 3600], got "${flags.duration ?? positionals[0]}"\n`);
  process.exit(2);
}

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

async function subjectCounts(jsm: JetStreamManager): Promise<Map<string, number>> {
  const info = await jsm.streams.info(STREAM, { subjects_filter: '>' });
  return new Map(Object.entries(info.state.subjects ?? {}));
}

// ---------------------------------------------------------------- the run

interface Processes {
  dataDir?: string;
  nats?: NatsServer;
  agent?: ChildProcess;
  exporter?: ChildProcess;
  idle?: ChildProcess;
  nc?: NatsConnection;
}

const procs: Processes = {};
let cleaning: Promise<void> | undefined;

function cleanup(): Promise<void> {
  cleaning ??= (async () => {
    await procs.nc?.close().catch(() => undefined);
    await Promise.all([stopChild(procs.agent), stopChild(procs.exporter), stopChild(procs.idle)]);
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
  readonly agent: number;
  readonly exporter: number;
  readonly nats: number;
  readonly idle: number;
  readonly agentSplit: Split;
  readonly exporterSplit: Split;
  readonly subjects: Map<string, number>;
  readonly at: number;
}

interface Scrape {
  readonly start: number;
  readonly end: number;
  readonly bytes: number;
  readonly ok: boolean;
}

async function run(): Promise<void> {
  ensureBuilt();
  ensureNodeExporter();

  procs.dataDir = mkdtempSync(join(tmpdir(), 'rezolus-bench-cpu-'));
  procs.nats = await startNatsServer({ binary: NATS_SERVER_BIN, port: 0, dataDir: procs.dataDir });
  const natsUrl = procs.nats.url;

  const agent = spawn(
    process.execPath,
    agentArgs(natsUrl),
    { cwd: ROOT, stdio: ['ignore', 'ignore', 'pipe'], env: { ...process.env, REZOLUS_NATS_URL: '' } },
  );
  procs.agent = agent;
  const agentLog = stderrTail(agent);

  const nePort = await freePort();
  const exporter = spawn(NODE_EXPORTER_BIN, [`--web.listen-address=127.0.0.1:${nePort}`], { stdio: ['ignore', 'ignore', 'pipe'] });
  procs.exporter = exporter;
  const exporterLog = stderrTail(exporter);
  const neUrl = `http://127.0.0.1:${nePort}/metrics`;

  // The floor of the runtime: a Node process that only wakes once a second.
  const idle = spawn(process.execPath, ['-e', 'setInterval(() => {}, 1000)'], { stdio: 'ignore' });
  procs.idle = idle;

  const exitedEarly = (): string | undefined => {
    if (!alive(agent)) return `the agent exited (${agent.exitCode ?? agent.signalCode}): ${agentLog()}`;
    if (!alive(idle)) return 'the idle node baseline exited';
    if (!alive(exporter)) return `node_exporter exited (${exporter.exitCode ?? exporter.signalCode}): ${exporterLog()}`;
    return undefined;
  };

  procs.nc = await connect({ servers: natsUrl, name: 'rezolus-bench-agent-cpu' });
  const jsm = await jetstreamManager(procs.nc);
  await waitFor('agent publishing', 20_000, async () => (await jsm.streams.info(STREAM)).state.messages > 0, exitedEarly);
  await waitFor('node_exporter answering', 10_000, async () => (await fetch(neUrl, { signal: AbortSignal.timeout(2000) })).ok, exitedEarly);

  // Timeline on whole wall-clock seconds S: the agent ticks at S+k, node_exporter
  // is scraped at S+k+0.25, the two readings are taken at S+5.5 and S+DURATION+0.5,
  // so no tick or scrape straddles a reading.
  const S = Math.ceil(Date.now() / 1000) * 1000 + 1000;
  const tA = S + WARMUP_S * 1000 + 500;
  const tB = S + DURATION_S * 1000 + 500;
  say(
    `agent pid ${agent.pid}, node_exporter pid ${exporter.pid} (127.0.0.1:${nePort}), nats-server pid ${procs.nats.pid} (${natsUrl}); ` +
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

  const rss = { agent: 0, exporter: 0, nats: 0, idle: 0 };
  /** CPU ticks of the agent and node_exporter each second, for the per-slice trend */
  const perSecond: { agent: number; exporter: number }[] = [];
  const sampleRss = (): void => {
    if (alive(agent)) rss.agent = Math.max(rss.agent, memKiB(agent.pid as number).rss);
    if (alive(exporter)) rss.exporter = Math.max(rss.exporter, memKiB(exporter.pid as number).rss);
    rss.nats = Math.max(rss.nats, memKiB(procs.nats?.pid as number).rss);
    if (alive(idle)) rss.idle = Math.max(rss.idle, memKiB(idle.pid as number).rss);
  };
  let stopRss = false;
  const rssSampler = (async () => {
    for (let k = 0; !stopRss; k++) {
      await sleepUntil(S + k * 1000 + 750);
      if (stopRss) return;
      try {
        sampleRss();
        perSecond.push({ agent: cpuTicks(agent.pid as number), exporter: cpuTicks(exporter.pid as number) });
      } catch {
        // a process went away; read() reports it
      }
    }
  })();

  /** Sleeps until t, failing early when the agent or node_exporter exits. */
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
    const agentSplit = cpuTicksSplit(agent.pid as number);
    const exporterSplit = cpuTicksSplit(exporter.pid as number);
    const r = {
      agent: agentSplit.user + agentSplit.system,
      exporter: exporterSplit.user + exporterSplit.system,
      nats: cpuTicks(procs.nats?.pid as number),
      idle: cpuTicks(idle.pid as number),
      agentSplit,
      exporterSplit,
    };
    return { ...r, subjects: await subjectCounts(jsm), at };
  };

  try {
    await waitUntil(tA);
    const a = await read();
    await waitUntil(tB);
    const b = await read();
    sampleRss();
    const end = {
      agent: memKiB(agent.pid as number),
      exporter: memKiB(exporter.pid as number),
      nats: memKiB(procs.nats.pid),
      idle: memKiB(idle.pid as number),
    };
    stopRss = true;
    await Promise.all([scraper, rssSampler]);
    report(a, b, end, rss, scrapes, perSecond);
  } finally {
    stopRss = true;
    await Promise.allSettled([scraper, rssSampler]);
  }
}

/** CPU ms per second (= per tick, per scrape) in 10 s slices from the start: shows the JIT warming up. */
function slices(perSecond: readonly { agent: number; exporter: number }[]): void {
  const ms = (ticks: number): number => (ticks * 1000) / CLK_TCK;
  const agent: string[] = [];
  const exporter: string[] = [];
  for (let i = 0; i + 10 < perSecond.length; i += 10) {
    const x = perSecond[i] as { agent: number; exporter: number };
    const y = perSecond[i + 10] as { agent: number; exporter: number };
    agent.push(fmt(ms(y.agent - x.agent) / 10, 1));
    exporter.push(fmt(ms(y.exporter - x.exporter) / 10, 1));
  }
  if (agent.length === 0) return;
  say('CPU ms per tick / per scrape in 10 s slices from the start:');
  say(`  agent          ${agent.join('  ')}`);
  say(`  node_exporter  ${exporter.join('  ')}`);
}

function report(
  a: Reading,
  b: Reading,
  end: Record<'agent' | 'exporter' | 'nats' | 'idle', { rss: number; hwm: number }>,
  maxRss: Record<'agent' | 'exporter' | 'nats' | 'idle', number>,
  scrapes: readonly Scrape[],
  perSecond: readonly { agent: number; exporter: number }[],
): void {
  const ms = (ticks: number): number => (ticks * 1000) / CLK_TCK;
  const windowS = (b.at - a.at) / 1000;

  // Agent ticks: frames per sampler subject over the window (every active sampler publishes once a tick).
  const perSubject: { subject: string; frames: number }[] = [];
  for (const [subject, n] of b.subjects) perSubject.push({ subject, frames: n - (a.subjects.get(subject) ?? 0) });
  const frames = perSubject.reduce((s, x) => s + x.frames, 0);
  const sorted = perSubject.map((x) => x.frames).sort((x, y) => x - y);
  const ticks = sorted[Math.floor(sorted.length / 2)] ?? 0;
  const uneven = perSubject.filter((x) => x.frames !== ticks);

  const inWindow = scrapes.filter((s) => s.start >= a.at && s.end <= b.at);
  const okScrapes = inWindow.filter((s) => s.ok);
  const scrapeBytes = okScrapes.length > 0 ? okScrapes.reduce((s, x) => s + x.bytes, 0) / okScrapes.length : Number.NaN;
  const scrapeMs = okScrapes.length > 0 ? okScrapes.reduce((s, x) => s + (x.end - x.start), 0) / okScrapes.length : Number.NaN;

  const agentMs = ms(b.agent - a.agent);
  const neMs = ms(b.exporter - a.exporter);
  const natsMs = ms(b.nats - a.nats);
  const idleMs = ms(b.idle - a.idle);
  const share = (x: number): string => fmt((x / (windowS * 1000)) * 100, 3);
  const agentPerTick = agentMs / ticks;
  const nePerScrape = neMs / okScrapes.length;
  const ratio = agentPerTick / nePerScrape;
  const mib = (kib: number): string => fmt(kib / 1024, 1);

  say('');
  say(`window ${fmt(windowS, 1)} s (t=${WARMUP_S}.5 s to t=${DURATION_S}.5 s); CPU from /proc/<pid>/stat, ${CLK_TCK} ticks/s (10 ms resolution at 100)`);
  say(`agent: ${perSubject.length} sampler subjects, ${frames} frames in the window, ${ticks} ticks (median frames per subject)`);
  if (uneven.length > 0) say(`  subjects off the median: ${uneven.map((x) => `${x.subject.split('.').pop()}=${x.frames}`).join(', ')}`);
  say(`node_exporter: ${okScrapes.length} scrapes in the window (${inWindow.length - okScrapes.length} failed), ${fmt(scrapeBytes / 1024, 1)} KiB and ${fmt(scrapeMs, 1)} ms wall each`);
  say('');
  const rows: [string, string, string, string, string][] = [
    ['', 'rezolus agent', 'node_exporter', 'nats-server (info)', 'idle node (floor)'],
    ['CPU over the window, ms', fmt(agentMs, 0), fmt(neMs, 0), fmt(natsMs, 0), fmt(idleMs, 0)],
    [
      'CPU user / system, ms',
      `${fmt(ms(b.agentSplit.user - a.agentSplit.user), 0)} / ${fmt(ms(b.agentSplit.system - a.agentSplit.system), 0)}`,
      `${fmt(ms(b.exporterSplit.user - a.exporterSplit.user), 0)} / ${fmt(ms(b.exporterSplit.system - a.exporterSplit.system), 0)}`,
      '',
      '',
    ],
    ['events in the window', `${ticks} ticks`, `${okScrapes.length} scrapes`, `${frames} frames`, `${ticks} wake-ups`],
    ['CPU per event, ms', fmt(agentPerTick, 3), fmt(nePerScrape, 3), `${fmt(natsMs / ticks, 3)} /tick`, fmt(idleMs / ticks, 3)],
    ['share of one core, %', share(agentMs), share(neMs), share(natsMs), share(idleMs)],
    ['RSS at end, MiB', mib(end.agent.rss), mib(end.exporter.rss), mib(end.nats.rss), mib(end.idle.rss)],
    ['RSS max (1 s samples), MiB', mib(maxRss.agent), mib(maxRss.exporter), mib(maxRss.nats), mib(maxRss.idle)],
    ['VmHWM (kernel peak), MiB', mib(end.agent.hwm), mib(end.exporter.hwm), mib(end.nats.hwm), mib(end.idle.hwm)],
  ];
  const w = [0, 1, 2, 3, 4].map((i) => Math.max(...rows.map((r) => (r[i] as string).length)));
  for (const r of rows) say(r.map((c, i) => (i === 0 ? c.padEnd(w[0] as number) : c.padStart(w[i] as number))).join('  '));
  say('');
  say(`ratio agent CPU per tick / node_exporter CPU per scrape = ${fmt(ratio, 3)} (target <= ${TARGET_RATIO})`);
  say(`  (ecosystem.md §5.1 measured node_exporter at ${REFERENCE_NE_MS_PER_SCRAPE} ms per scrape; against that: ${fmt(agentPerTick / REFERENCE_NE_MS_PER_SCRAPE, 3)})`);
  slices(perSecond);
  say('');
  let missed = 0;
  if (!(ratio <= TARGET_RATIO)) {
    missed++;
    say(`TARGET MISSED: CPU ratio ${fmt(ratio, 3)} > ${TARGET_RATIO} (agent ${fmt(agentPerTick, 3)} ms/tick, node_exporter ${fmt(nePerScrape, 3)} ms/scrape)`);
  }
  if (!(end.agent.rss / 1024 <= TARGET_RSS_MIB)) {
    missed++;
    say(`TARGET MISSED: agent RSS at end ${mib(end.agent.rss)} MiB > ${TARGET_RSS_MIB} MiB`);
  }
  if (!(maxRss.agent / 1024 <= TARGET_RSS_MIB)) {
    missed++;
    say(`TARGET MISSED: agent max RSS ${mib(maxRss.agent)} MiB > ${TARGET_RSS_MIB} MiB`);
  }
  if (missed === 0) say(`all targets met: CPU ratio <= ${TARGET_RATIO}, agent RSS <= ${TARGET_RSS_MIB} MiB`);
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
