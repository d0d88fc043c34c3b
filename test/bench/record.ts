/**
 * What the recorder costs, end to end through the compiled CLI:
 *
 *  1. replay: a fleet window in the JetStream stream → one Parquet file with
 *     `rezolus record --since … --hosts 'sim-*'`. Default 100 hosts × 10
 *     samplers × 15 min at 1 Hz (900 000 frames): the 8 registry samplers
 *     that work on the fixture root plus 2 synthetic ones in the shape of
 *     the eBPF samplers to come (11 latency histograms in all). Target ≥ 50 000 frames/s,
 *     process start and file finish included.
 *  2. one host for an hour: 3600 ticks of this host's own samplers (read
 *     from the live /proc and /sys once, values varied per tick) replayed
 *     into a file: recorder CPU seconds, peak RSS (target ≤ 150 MB), file
 *     size. A live recording does the same work spread over the hour; the
 *     replay is the worst case for memory, since frames arrive as fast as
 *     the writer takes them.
 *
 *   npx tsx test/bench/record.ts                       # about 2–3 minutes
 *   npx tsx test/bench/record.ts --hosts 20 --minutes 5 --host-minutes 10
 *   npx tsx test/bench/record.ts --cli /other/build/dist/cli/rezolus.js   # another build, same load
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
import { startNatsServer, type NatsServer } from '../../src/up/nats-server.js';
import { SimFleet } from '../helpers/sim-fleet.js';
import { ENTRY, NATS_SERVER_BIN, ensureBuilt, fmt, say } from './common.js';

const { values: args } = parseArgs({
  options: {
    hosts: { type: 'string', default: '100' },
    minutes: { type: 'string', default: '15' },
    'host-minutes': { type: 'string', default: '60' },
    cli: { type: 'string' },
  },
});
const HOSTS = Number(args.hosts);
const MINUTES = Number(args.minutes);
const HOST_MINUTES = Number(args['host-minutes']);
for (const [name, v] of [['hosts', HOSTS], ['minutes', MINUTES], ['host-minutes', HOST_MINUTES]] as const) {
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
function syntheticSamplers(): { name: string; points: Point[] }[] {
  const sched = metric({ name: 'bench_scheduler', kind: 'histogram', unit: 'nanoseconds', labels: ['state'], description: 'Synthetic scheduler latency (bench)' });
  const calls = metric({ name: 'bench_syscall', kind: 'counter', unit: 'count', labels: ['op'], description: 'Synthetic syscalls (bench)' });
  const latency = metric({ name: 'bench_syscall_latency', kind: 'histogram', unit: 'nanoseconds', labels: ['op'], description: 'Synthetic syscall latency (bench)' });
  const ops = ['read', 'write', 'poll', 'lock', 'time', 'sleep', 'socket', 'other'];
  return [
    { name: 'bench_scheduler', points: ['runqueue', 'running', 'offcpu'].map((state, k) => ({ metric: sched, labels: { state }, value: spread(1000 * (k + 1)) })) },
    {
      name: 'bench_syscall',
      points: ops.flatMap((op, k) => [
        { metric: calls, labels: { op }, value: 1000 * (k + 1) },
        { metric: latency, labels: { op }, value: spread(100 * (k + 1)) },
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

/** Runs the recorder CLI under GNU time; its figures come from the last line of stderr. */
async function timedRecord(recordArgs: string[]): Promise<Run> {
  const child = spawn(TIME_BIN, ['-f', 'BENCH %e %U %S %M', process.execPath, CLI, 'record', '--log-level', 'warn', ...recordArgs], {
    stdio: ['ignore', 'ignore', 'pipe'],
  });
  let stderr = '';
  child.stderr.on('data', (d: Buffer) => (stderr += d.toString()));
  const watchdog = setTimeout(() => child.kill('SIGKILL'), 20 * 60_000);
  const code = await new Promise<number | null>((r) => child.once('exit', (c) => r(c)));
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

async function publishWindow(fleet: SimFleet, ticks: number): Promise<number> {
  const began = Date.now();
  let frames = 0;
  for (let tick = 1; tick <= ticks; tick++) frames += await fleet.publishTick(tick);
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
  say(`  ${name}: ${fmt(frames / run.wallS, 0)} frames/s end to end; ${rows.rows} rows (expected ${expectRows}), ${rows.columns} columns, ${fmt(size / 1024 / 1024, 2)} MiB, ${fmt(size / Math.max(1, rows.rows), 0)} B/row`);
  if (rows.rows !== expectRows) say(`  ${name}: ROW COUNT MISMATCH`);
}

async function main(): Promise<void> {
  if (args.cli === undefined) ensureBuilt();
  ensureTime();
  const dir = mkdtempSync(join(tmpdir(), 'rezolus-bench-record-'));
  let server: NatsServer | undefined;
  try {
    say(`recorder: ${CLI}`);
    // a server per part: both publish sim-000 with the same message ids, which the dedup window would drop
    server = await startNatsServer({ binary: NATS_SERVER_BIN, port: 0, dataDir: join(dir, 'nats-fleet') });
    let agent = loadAgentConfig(undefined, SAMPLER_NAMES, { host: 'bench', natsUrl: server.url });

    // 1. the fleet window
    const ticks = MINUTES * 60;
    say(`replay: ${HOSTS} hosts × 10 samplers × ${MINUTES} min at 1 Hz`);
    const fleet = await SimFleet.start({
      natsUrl: server.url, hosts: HOSTS, agent, samplers: SAMPLER_NAMES,
      startNs: BigInt(Date.now() - ticks * 1000 - 60_000) * 1_000_000n,
      synthetic: syntheticSamplers(),
    });
    if (fleet.samplers.length !== 10) say(`  note: ${fleet.samplers.length} samplers, not 10`);
    const frames = await publishWindow(fleet, ticks);
    await fleet.close();
    const stored = await streamMessages(server.url);
    if (stored !== frames) say(`  note: the stream holds ${stored} messages of ${frames}`);
    const out1 = join(dir, 'fleet.parquet');
    const run1 = await timedRecord(['--nats', server.url, '--since', '10m', '--hosts', 'sim-*', '--interval', '1s', '-o', out1]);
    report('replay', run1, stored, out1, await countRows(out1), HOSTS * ticks);
    const rate = stored / run1.wallS;
    if (rate < 50_000) say(`  TARGET MISSED: replay ${fmt(rate, 0)} frames/s < 50 000`);
    rmSync(out1, { force: true });
    await server.stop();
    server = await startNatsServer({ binary: NATS_SERVER_BIN, port: 0, dataDir: join(dir, 'nats-host') });
    agent = loadAgentConfig(undefined, SAMPLER_NAMES, { host: 'bench', natsUrl: server.url });

    // 2. one host, an hour
    const hostTicks = HOST_MINUTES * 60;
    say(`one host: this host's samplers × ${HOST_MINUTES} min at 1 Hz`);
    const host = await SimFleet.start({
      natsUrl: server.url, hosts: 1, agent, procRoot: '/proc', sysRoot: '/sys',
      startNs: BigInt(Date.now() - hostTicks * 1000 - 60_000) * 1_000_000n,
    });
    say(`  ${host.samplers.length} samplers, ${host.samplers.reduce((n, s) => n + s.points.length, 0)} series`);
    const hostFrames = await publishWindow(host, hostTicks);
    await host.close();
    const out2 = join(dir, 'host.parquet');
    const run2 = await timedRecord(['--nats', server.url, '--since', '10m', '--hosts', 'sim-000', '--interval', '1s', '-o', out2]);
    report('1 host', run2, hostFrames, out2, await countRows(out2), hostTicks);
    if (run2.maxRssKiB / 1024 > 150 * 1e6 / 1024 / 1024) say(`  TARGET MISSED: peak RSS ${fmt(run2.maxRssKiB / 1024, 1)} MiB > 150 MB`);
  } finally {
    await server?.stop();
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
