/**
 * What `rezolus status` costs on a fleet: --hosts simulated hosts (default
 * 1000, SimFleet: the fixture root's samplers) with --ticks frames each in
 * the window, a status record per host in the shape of the agent's (26
 * samplers), 5 % of the hosts with a firing alert, and a durable consumer.
 *
 *  1. gatherStatus + assess + format in this process, --rounds times:
 *     wall time, this process's CPU, nats-server's CPU;
 *  2. the peer it replaces: the newest message of every frame subject
 *     fetched one request each (STREAM.MSG.GET last_by_subj, as a script
 *     would), one at a time and 64 in flight;
 *  3. the compiled CLI, `node dist/cli/rezolus.js status --json`, spawn to
 *     exit.
 *
 *   npx tsx test/bench/status.ts                  # 1000 hosts, about a minute
 *   npx tsx test/bench/status.ts --hosts 200 --ticks 10
 *
 * Its own nats-server on a free loopback port with a temporary store; never
 * the shared one. A measurement, not a test: exits 0 and prints TARGET
 * MISSED when the CLI takes over 5 s for the fleet.
 */
import { spawnSync } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { cpus, tmpdir } from 'node:os';
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import { AckPolicy, jetstreamManager } from '@nats-io/jetstream';
import { Kvm } from '@nats-io/kv';
import { connect } from '@nats-io/transport-node';
import { alertStateBucket } from '../../src/alert/bus.js';
import { alertKey } from '../../src/alert/contract.js';
import { statusBucket } from '../../src/bus/kv.js';
import { METRICS_PREFIX, STATUS_BUCKET } from '../../src/bus/subjects.js';
import { loadAgentConfig } from '../../src/config/agent.js';
import { silentLogger } from '../../src/log/logger.js';
import { SAMPLER_NAMES } from '../../src/samplers/registry.js';
import { assessStatus, formatStatus, gatherStatus } from '../../src/status/index.js';
import { startNatsServer } from '../../src/up/nats-server.js';
import { SimFleet } from '../helpers/sim-fleet.js';
import { CLK_TCK, ENTRY, NATS_SERVER_BIN, cpuTicks, ensureBuilt, fmt, say } from './common.js';

const { values: args } = parseArgs({
  options: {
    hosts: { type: 'string', default: '1000' },
    ticks: { type: 'string', default: '20' },
    rounds: { type: 'string', default: '5' },
  },
});
const HOSTS = Number(args.hosts);
const TICKS = Number(args.ticks);
const ROUNDS = Number(args.rounds);
for (const [name, v] of [['hosts', HOSTS], ['ticks', TICKS], ['rounds', ROUNDS]] as const) {
  if (!Number.isInteger(v) || v < 1) throw new Error(`--${name} must be a positive integer`);
}
const CLI_TARGET_MS = 5000;
const WATCHDOG_MS = 15 * 60_000;

const median = (xs: number[]): number => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)] ?? Number.NaN;

/** A status record like the agent's: every registry sampler, a few of them unsupported with a reason. */
function statusRecord(host: string, i: number): string {
  const now = new Date().toISOString();
  return JSON.stringify({
    host, state: 'running', instance: (0x51000000 + i).toString(16), version: '0.1.0', started: now, updated: now,
    samplers: SAMPLER_NAMES.map((name, k) => ({
      name, interval_ms: 1000, refreshes: 3600, errors: 0, skipped: 0, seq: 3600,
      ...(k % 5 === 0 ? { state: 'unsupported', reason: 'needs BPF: the kernel has no BTF (/sys/kernel/btf/vmlinux is missing)' } : { state: 'active' }),
    })),
    publisher: { published: 100_000, buffered: 0, buffered_bytes: 0, dropped: 0, retries: 0, refused: 0 },
  });
}

async function main(): Promise<void> {
  const dir = mkdtempSync(join(tmpdir(), 'rezolus-bench-status-'));
  const server = await startNatsServer({ binary: NATS_SERVER_BIN, port: 0, dataDir: dir });
  const watchdog = setTimeout(() => {
    say('watchdog: the benchmark ran too long; stopping');
    void server.stop().finally(() => process.exit(1));
  }, WATCHDOG_MS);
  const nc = await connect({ servers: server.url });
  let sim: SimFleet | undefined;
  try {
    say(`CPU: ${cpus()[0]?.model ?? '?'} × ${cpus().length}`);
    const agent = loadAgentConfig(undefined, SAMPLER_NAMES, { host: 'bench', natsUrl: server.url });
    sim = await SimFleet.start({ natsUrl: server.url, hosts: HOSTS, agent });
    const t0 = Date.now();
    for (let tick = 1; tick <= TICKS; tick++) await sim.publishTick(tick);
    say(`fleet: ${HOSTS} hosts × ${sim.samplers.length} samplers × ${TICKS} ticks = ${sim.published} frames published in ${((Date.now() - t0) / 1000).toFixed(1)} s`);
    const status = await statusBucket(nc, { ttlMs: 3_600_000, replicas: 1 });
    await Promise.all(sim.hosts.map((h, i) => status.put(h, statusRecord(h, i))));
    const alerts = await alertStateBucket(nc, 1, undefined);
    const now = Date.now();
    for (let i = 0; i < HOSTS; i += 20) {
      const host = sim.hosts[i] as string;
      await alerts.put(alertKey(host, 'memory_low', '_'), JSON.stringify({
        v: 1, rule: 'memory_low', host, series: {}, state: 'firing', previous: 'pending', seq: 2, activeAt: now - 5000, firedAt: now - 2000,
        value: 50, threshold: 100, unit: 'bytes', severity: 'page', labels: {}, summary: 'low', evaluator: 'bench', at: now, published: true,
      }));
    }
    const jsm = await jetstreamManager(nc);
    await jsm.consumers.add('REZOLUS', { durable_name: 'bench-rec', ack_policy: AckPolicy.Explicit, filter_subject: `${METRICS_PREFIX}.sim-000.>` });
    const kvs = await new Kvm(nc).open(STATUS_BUCKET);
    say(`status records: ${(await kvs.status()).values}, bytes ${(await kvs.status()).size}`);

    // 1. in process
    const walls: number[] = [];
    const cpu: number[] = [];
    const serverCpu: number[] = [];
    let hostsSeen = 0;
    let subjects = 0;
    for (let round = 0; round < ROUNDS; round++) {
      const c0 = process.cpuUsage();
      const s0 = cpuTicks(server.process.pid as number);
      const w0 = performance.now();
      const snap = await gatherStatus({ url: server.url, stream: 'REZOLUS', hosts: '*', log: silentLogger() });
      const report = assessStatus(snap, { silentAfterMs: 3_600_000, hosts: '*' });
      const text = formatStatus(report);
      walls.push(performance.now() - w0);
      const c = process.cpuUsage(c0);
      cpu.push((c.user + c.system) / 1000);
      serverCpu.push(((cpuTicks(server.process.pid as number) - s0) * 1000) / CLK_TCK);
      hostsSeen = report.summary.hosts;
      subjects = report.stream.subject_count;
      if (round === 0) say(`report: ${report.summary.hosts} hosts, ${report.stream.subject_count} subjects, ${report.summary.alerts_firing} alerts firing, ${report.consumers.length} durable consumer, ${text.length} characters of text`);
    }
    if (hostsSeen !== HOSTS) say(`TARGET MISSED: the report has ${hostsSeen} hosts, not ${HOSTS}`);
    say(`status in process: median ${fmt(median(walls), 0)} ms, max ${fmt(Math.max(...walls), 0)} ms wall; this process ${fmt(median(cpu), 0)} ms CPU, nats-server ${fmt(median(serverCpu), 0)} ms CPU (medians of ${ROUNDS})`);

    // 2. the peer: one request per subject
    const names = Object.keys((await jsm.streams.info('REZOLUS', { subjects_filter: `${METRICS_PREFIX}.>` })).state.subjects ?? {});
    if (names.length !== subjects) say(`note: ${names.length} subjects by info, ${subjects} in the report`);
    let w0 = performance.now();
    let s0 = cpuTicks(server.process.pid as number);
    for (const subject of names) await jsm.streams.getMessage('REZOLUS', { last_by_subj: subject });
    say(`peer, one MSG.GET last_by_subj per subject (${names.length}), one at a time: ${fmt(performance.now() - w0, 0)} ms wall, nats-server ${fmt(((cpuTicks(server.process.pid as number) - s0) * 1000) / CLK_TCK, 0)} ms CPU`);
    w0 = performance.now();
    s0 = cpuTicks(server.process.pid as number);
    for (let i = 0; i < names.length; i += 64) {
      await Promise.all(names.slice(i, i + 64).map((subject) => jsm.streams.getMessage('REZOLUS', { last_by_subj: subject })));
    }
    say(`peer, the same 64 in flight: ${fmt(performance.now() - w0, 0)} ms wall, nats-server ${fmt(((cpuTicks(server.process.pid as number) - s0) * 1000) / CLK_TCK, 0)} ms CPU`);

    // 3. the compiled CLI
    ensureBuilt();
    const runs: number[] = [];
    for (let round = 0; round < ROUNDS; round++) {
      const t = performance.now();
      const r = spawnSync(process.execPath, [ENTRY, 'status', '--nats', server.url, '--json', '--silent-after', '1h'], { encoding: 'utf8', maxBuffer: 256 << 20 });
      runs.push(performance.now() - t);
      if (r.status !== 0) say(`CLI exited ${r.status}: ${r.stderr.trim().split('\n')[0] ?? ''}`);
      else if ((JSON.parse(r.stdout) as { summary: { hosts: number } }).summary.hosts !== HOSTS) say('TARGET MISSED: the CLI report misses hosts');
    }
    const cli = median(runs);
    say(`CLI status --json, spawn to exit: median ${fmt(cli, 0)} ms, max ${fmt(Math.max(...runs), 0)} ms (target ≤ ${CLI_TARGET_MS} ms)`);
    if (cli > CLI_TARGET_MS) say(`TARGET MISSED: the CLI took ${fmt(cli, 0)} ms for ${HOSTS} hosts`);
  } finally {
    clearTimeout(watchdog);
    await sim?.close();
    await nc.close();
    await server.stop();
    rmSync(dir, { recursive: true, force: true });
  }
}

await main();
