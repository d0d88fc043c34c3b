/**
 * What the recorder costs, end to end through the compiled CLI:
 *
 *  1. replay: a fleet window in the JetStream stream → one Parquet file with
 *     `rezolus record --since … --hosts 'sim-*'`. Default 100 hosts × 10
 *     samplers × 15 min at 1 Hz (900 000 frames): the 8 registry samplers
 *     that work on the fixture root plus 2 synthetic ones in the shape of
 *     the eBPF samplers to come (11 latency histograms in all). Target ≥ 50 000 frames/s,
 *     process start and file finish included.
 *     The same fleet again with the histograms replaced by counters (the
 *     procfs-only shape of today's agent) unless --histograms-only.
 *  2. one host for an hour: 3600 ticks of this host's own samplers (read
 *     from the live /proc and /sys once, values varied per tick), recorded
 *     live while they are published at --speed × real time (default 60: an
 *     hour in a minute): recorder CPU seconds, peak RSS (target ≤ 150 MB),
 *     file size. Then the same window replayed at read speed, the worst
 *     case for memory (frames arrive as fast as the writer takes them).
 *
 *   npx tsx test/bench/record.ts                       # about 3 minutes
 *   npx tsx test/bench/record.ts --hosts 20 --minutes 5 --host-minutes 10 --speed 120
 *   npx tsx test/bench/record.ts --cli /other/build/dist/cli/rezolus.js   # another build, same load
 *   npx tsx test/bench/record.ts --against /old/dist/cli/rezolus.js --rounds 3
 *       # A/B: the fleet window with histograms published once, then replayed
 *       # by this build and the other one in turn, --rounds times each;
 *       # prints each run and the ratio of the medians (this build / other)
 *
 * CPU and peak RSS come from GNU time (`/usr/bin/time`, Debian package
 * `time`, installed when missing and root) around the recorder process.
 * The file is read back with DuckDB and its row count checked.
 *
 * Its own nats-server on a free loopback port with a temporary store; never
 * the shared one. A measurement, not a test: exits 0 when a target is missed
 * and says so.
 */
import { spawn, spawnSync } from 'node:child_process';
import { existsSync, mkdtempSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import { DuckDBInstance } from '@duckdb/node-api';
import { jetstreamManager } from '@nats-io/jetstream';
import { connect } from '@nats-io/transport-node';
import { loadAgentConfig } from '../../src/config/agent.js';
import { fromValues } from '../../src/metrics/histogram.js';
import { metric } from '../../src/metrics/metric.js';
import { SAMPLER_NAMES } from '../../src/samplers/registry.js';
import type { Point } from '../../src/samplers/types.js';
import { startNatsServer } from '../../src/up/nats-server.js';
import { SimFleet } from '../helpers/sim-fleet.js';
import { ENTRY, NATS_SERVER_BIN, ensureBuilt, fmt, say, sleepUntil } from './common.js';

const { values: args } = parseArgs({
  options: {
    hosts: { type: 'string', default: '100' },
    minutes: { type: 'string', default: '15' },
    'host-minutes': { type: 'string', default: '60' },
    speed: { type: 'string', default: '60' },
    'histograms-only': { type: 'boolean', default: false },
    cli: { type: 'string' },
    against: { type: 'string' },
    rounds: { type: 'string', default: '3' },
  },
});
const HOSTS = Number(args.hosts);
const MINUTES = Number(args.minutes);
const HOST_MINUTES = Number(args['host-minutes']);
const ROUNDS = Number(args.rounds);
const SPEED = Number(args.speed);
for (const [name, v] of [['hosts', HOSTS], ['minutes', MINUTES], ['host-minutes', HOST_MINUTES], ['speed', SPEED]] as const) {
  if (!Number.isInteger(v) || v < 1) throw new Error(`--${name} must be a positive integer`);
}
const CLI = args.cli ?? ENTRY;
const TIME_BIN = '/usr/bin/time';

/** A histogram of 200 values spread over ~30 buckets from `scale` ns up (SimFleet varies its counts per host and tick). */
function spread(scale: number): ReturnType<typeof fromValues> {
  const values: number[] = [];
  for (let i = 0; i < 200; i++) values.push(Math.round(scale * Math.exp((i % 37) / 4)));
  return fromValues(values);
}

/**
 * The synthetic samplers, in the shape of the eBPF ones to come: scheduler
 * (runqueue latency, running and off-CPU time histograms) and syscalls (a
 * counter and a latency histogram for each of 8 classes).
 */
function syntheticSamplers(histograms: boolean): { name: string; points: Point[] }[] {
  const kind = histograms ? 'histogram' : 'counter';
  const sched = metric({ name: 'bench_scheduler', kind, unit: 'nanoseconds', labels: ['state'], description: 'Synthetic scheduler latency (bench)' });
  const calls = metric({ name: 'bench_syscall', kind: 'counter', unit: 'count', labels: ['op'], description: 'Synthetic syscalls (bench)' });
  const latency = metric({ name: 'bench_syscall_latency', kind, unit: 'nanoseconds', labels: ['op'], description: 'Synthetic syscall latency (bench)' });
  const ops = ['read', 'write', 'poll', 'lock', 'time', 'sleep', 'socket', 'other'];
  const value = (scale: number) => (histograms ? spread(scale) : scale * 1000);
  return [
    { name: 'bench_scheduler', points: ['runqueue', 'running', 'offcpu'].map((state, k) => ({ metric: sched, labels: { state }, value: value(1000 * (k + 1)) })) },
    {
      name: 'bench_syscall',
      points: ops.flatMap((op, k) => [
        { metric: calls, labels: { op }, value: 1000 * (k + 1) },
        { metric: latency, labels: { op }, value: value(100 * (k + 1)) },
      ]),
    },
  ];
}

function ensureTime(): void {
  if (existsSync(TIME_BIN)) return;
  if (process.getuid?.() !== 0) throw new Error(`${TIME_BIN} missing: apt-get install time`);
  spawnSync('apt-get', ['install', '-y', '-qq', 'time'], { stdio: 'inherit', env: { ...process.env, DEBIAN_FRONTEND: 'noninteractive' } });
}

interface Run {
  readonly wallS: number;
  readonly userS: number;
  readonly sysS: number;
  readonly maxRssKiB: number;
  readonly code: number | null;
  readonly stderr: string;
}

/**
 * Runs the recorder CLI under GNU time; its figures come from the last line
 * of stderr. With `live`, the recording is live: `live()` runs once the
 * recorder is subscribed, then the recorder gets SIGINT (its process group:
 * GNU time waits on).
 */
async function timedRecord(recordArgs: string[], live?: () => Promise<void>, cli = CLI): Promise<Run> {
  const child = spawn(TIME_BIN, ['-f', 'BENCH %e %U %S %M', process.execPath, cli, 'record', '--log-level', 'info', ...recordArgs], {
    stdio: ['ignore', 'ignore', 'pipe'],
    detached: true,
  });
  let stderr = '';
  child.stderr.on('data', (d: Buffer) => (stderr += d.toString()));
  const watchdog = setTimeout(() => process.kill(-(child.pid as number), 'SIGKILL'), 20 * 60_000);
  const exited = new Promise<number | null>((r) => child.once('exit', (c) => r(c)));
  if (live !== undefined) {
    while (!stderr.includes('"msg":"recording"')) {
      if (child.exitCode !== null) throw new Error(`the recorder exited: ${stderr.slice(-2000)}`);
      await new Promise((r) => setTimeout(r, 50));
    }
    await live();
    await new Promise((r) => setTimeout(r, 1500));
    process.kill(-(child.pid as number), 'SIGINT');
  }
  const code = await exited;
  clearTimeout(watchdog);
  const m = /BENCH ([\d.]+) ([\d.]+) ([\d.]+) (\d+)/.exec(stderr);
  if (m === null) throw new Error(`no figures from ${TIME_BIN}: ${stderr.slice(-2000)}`);
  return { wallS: Number(m[1]), userS: Number(m[2]), sysS: Number(m[3]), maxRssKiB: Number(m[4]), code, stderr };
}

async function countRows(path: string): Promise<{ rows: number; columns: number }> {
  const con = await (await DuckDBInstance.create(':memory:')).connect();
  const rows = (await con.runAndReadAll(`SELECT count(*) AS n FROM read_parquet('${path}')`)).getRowObjects();
  const cols = (await con.runAndReadAll(`DESCRIBE SELECT * FROM read_parquet('${path}')`)).getRowObjects();
  return { rows: Number(rows[0]?.n), columns: cols.length };
}

/** Publishes ticks 1..ticks, at most `perSecond` ticks a second when given. */
async function publishWindow(fleet: SimFleet, ticks: number, perSecond?: number): Promise<number> {
  const began = Date.now();
  let frames = 0;
  for (let tick = 1; tick <= ticks; tick++) {
    if (perSecond !== undefined) await sleepUntil(began + (tick * 1000) / perSecond);
    frames += await fleet.publishTick(tick);
  }
  say(`  published ${frames} frames in ${fmt((Date.now() - began) / 1000, 1)} s`);
  return frames;
}

async function streamMessages(url: string): Promise<number> {
  const nc = await connect({ servers: url });
  const info = await (await jetstreamManager(nc)).streams.info('REZOLUS');
  await nc.close();
  return info.state.messages;
}

function report(name: string, run: Run, frames: number, file: string, rows: { rows: number; columns: number }, expectRows: number): void {
  const size = statSync(file).size;
  say(`  ${name}: exit ${String(run.code)}, ${fmt(run.wallS, 2)} s wall, ${fmt(run.userS + run.sysS, 2)} s CPU (user ${fmt(run.userS, 2)}, sys ${fmt(run.sysS, 2)}), peak RSS ${fmt(run.maxRssKiB / 1024, 1)} MiB`);
  const rate = name === 'live' ? `${frames} frames` : `${fmt(frames / run.wallS, 0)} frames/s end to end`;
  say(`  ${name}: ${rate}; ${rows.rows} rows (expected ${expectRows}), ${rows.columns} columns, ${fmt(size / 1024 / 1024, 2)} MiB, ${fmt(size / Math.max(1, rows.rows), 0)} B/row`);
  if (rows.rows !== expectRows) say(`  ${name}: ROW COUNT MISMATCH`);
}

const median = (xs: number[]): number => {
  const s = [...xs].sort((a, b) => a - b);
  return s[Math.floor(s.length / 2)] ?? Number.NaN;
};

/** The fleet window → one file, at replay speed. With --against, each CLI in turn over the same window. */
async function fleetReplay(dir: string, histograms: boolean): Promise<void> {
  const ticks = MINUTES * 60;
  say(`replay: ${HOSTS} hosts × 10 samplers × ${MINUTES} min at 1 Hz, ${histograms ? 'with 11 latency histograms per host' : 'counters and gauges only'}`);
  // a server per run: every run publishes sim-000… with the same message ids, which the dedup window would drop
  const server = await startNatsServer({ binary: NATS_SERVER_BIN, port: 0, dataDir: join(dir, `nats-fleet-${String(histograms)}`) });
  try {
    const agent = loadAgentConfig(undefined, SAMPLER_NAMES, { host: 'bench', natsUrl: server.url });
    const fleet = await SimFleet.start({
      natsUrl: server.url, hosts: HOSTS, agent, samplers: SAMPLER_NAMES,
      startNs: BigInt(Date.now() - ticks * 1000 - 60_000) * 1_000_000n,
      synthetic: syntheticSamplers(histograms),
    });
    if (fleet.samplers.length !== 10) say(`  note: ${fleet.samplers.length} samplers, not 10`);
    const frames = await publishWindow(fleet, ticks);
    await fleet.close();
    const stored = await streamMessages(server.url);
    if (stored !== frames) say(`  note: the stream holds ${stored} messages of ${frames}`);
    const out = join(dir, 'fleet.parquet');
    const since = '14m'; // the stream keeps 15 min: every round must start within it
    const replay = async (cli: string, name: string): Promise<number> => {
      const run = await timedRecord(['--nats', server.url, '--since', since, '--hosts', 'sim-*', '--interval', '1s', '-o', out], undefined, cli);
      report(name, run, stored, out, await countRows(out), HOSTS * ticks);
      rmSync(out, { force: true });
      return stored / run.wallS;
    };
    if (args.against === undefined) {
      const rate = await replay(CLI, 'replay');
      if (rate < 50_000) say(`  TARGET MISSED: replay ${fmt(rate, 0)} frames/s < 50 000`);
      return;
    }
    const ours: number[] = [];
    const theirs: number[] = [];
    for (let round = 1; round <= ROUNDS; round++) {
      ours.push(await replay(CLI, `replay ${round} this build`));
      theirs.push(await replay(args.against, `replay ${round} --against`));
    }
    say(`  A/B: this build ${ours.map((r) => fmt(r, 0)).join(', ')} frames/s; --against ${theirs.map((r) => fmt(r, 0)).join(', ')} frames/s`);
    say(`  A/B: ratio of the medians ${fmt(median(ours) / median(theirs), 2)}× (this build / --against)`);
  } finally {
    await server.stop();
  }
}

/** One host for an hour: live at --speed, then the same window replayed. */
async function hostHour(dir: string): Promise<void> {
  const ticks = HOST_MINUTES * 60;
  const server = await startNatsServer({ binary: NATS_SERVER_BIN, port: 0, dataDir: join(dir, 'nats-host') });
  try {
    const agent = loadAgentConfig(undefined, SAMPLER_NAMES, { host: 'bench', natsUrl: server.url });
    const host = await SimFleet.start({
      natsUrl: server.url, hosts: 1, agent, procRoot: '/proc', sysRoot: '/sys',
      startNs: BigInt(Date.now() - ticks * 1000 - 60_000) * 1_000_000n,
    });
    say(`one host: this host's ${host.samplers.length} samplers (${host.samplers.reduce((n, s) => n + s.points.length, 0)} series) × ${HOST_MINUTES} min at 1 Hz, live at ${SPEED}× speed`);
    const live = join(dir, 'host-live.parquet');
    let frames = 0;
    const run = await timedRecord(['--nats', server.url, '--hosts', 'sim-000', '--interval', '1s', '-o', live], async () => {
      frames = await publishWindow(host, ticks, SPEED);
    });
    await host.close();
    report('live', run, frames, live, await countRows(live), ticks);
    if (run.maxRssKiB * 1024 > 150e6) say(`  TARGET MISSED: peak RSS ${fmt(run.maxRssKiB / 1024, 1)} MiB > 150 MB`);
    const replayed = join(dir, 'host-replay.parquet');
    const again = await timedRecord(['--nats', server.url, '--since', '10m', '--hosts', 'sim-000', '--interval', '1s', '-o', replayed]);
    report('replay', again, frames, replayed, await countRows(replayed), ticks);
  } finally {
    await server.stop();
  }
}

async function main(): Promise<void> {
  if (args.cli === undefined) ensureBuilt();
  ensureTime();
  const dir = mkdtempSync(join(tmpdir(), 'rezolus-bench-record-'));
  try {
    say(`recorder: ${CLI}`);
    await fleetReplay(dir, true);
    if (args.against !== undefined) return;
    if (!args['histograms-only']) await fleetReplay(dir, false);
    await hostHour(dir);
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

const watchdog = setTimeout(() => {
  say('watchdog: 30 min passed, stopping');
  process.exit(1);
}, 30 * 60_000);
watchdog.unref();
main().then(
  () => process.exit(0),
  (error: unknown) => {
    say(`bench failed: ${error instanceof Error ? error.stack ?? error.message : String(error)}`);
    process.exit(1);
  },
);
