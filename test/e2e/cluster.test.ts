/**
 * Issue 7, part 2: three nats-server processes from config/cluster form a
 * JetStream cluster; the stream has 3 replicas. The stream leader is killed
 * with kill -9 while an agent publishes and an exporter and a recorder
 * consume: no frame is lost or stored twice, the exporter keeps serving, and
 * a hindsight snapshot taken after the failover holds the whole window.
 */
import test from 'ava';
import { jetstreamManager } from '@nats-io/jetstream';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { runAgent, type RunningAgent } from '../../src/agent/main.js';
import { connectBus } from '../../src/bus/connect.js';
import { retryOnTimeout } from '../../src/bus/retry.js';
import { loadAgentConfig } from '../../src/config/agent.js';
import { loadExporterConfig } from '../../src/config/exporter.js';
import { runExporter, type RunningExporter } from '../../src/exporter/main.js';
import { silentLogger } from '../../src/log/logger.js';
import { runRecord, type RunningRecord } from '../../src/record/main.js';
import { SAMPLER_NAMES } from '../../src/samplers/registry.js';
import { startCluster, type TestCluster } from '../helpers/cluster.js';
import { Duck } from '../helpers/duckdb.js';
import { NO_KERNEL, PROC, SYS } from '../helpers/fixtures.js';
import { auditSeqs, readStoredFrames } from '../helpers/stream.js';

const sleep = (ms: number): Promise<void> => new Promise((r) => setTimeout(r, ms));
const INTERVAL_MS = 250;
const HOST = 'cluster-agent';

let cluster: TestCluster;
let dir: string;
let agent: RunningAgent | undefined;
let exporter: RunningExporter | undefined;
let recorder: RunningRecord | undefined;

test.before(async () => {
  cluster = await startCluster();
  dir = mkdtempSync(join(tmpdir(), 'rezolus-cluster-out-'));
});

test.after.always(async () => {
  await agent?.stop().catch(() => undefined);
  await recorder?.abort().catch(() => undefined);
  await exporter?.stop().catch(() => undefined);
  await cluster?.dispose();
  rmSync(dir, { recursive: true, force: true });
});

/** Waits until the cluster has a JetStream meta leader (a fresh cluster elects one within a second or so). */
async function jetStreamReady(url: string): Promise<void> {
  const nc = await connectBus({ url, name: 'probe', log: silentLogger() });
  try {
    for (let i = 0; i < 100; i++) {
      try {
        await (await jetstreamManager(nc, { timeout: 1000 })).getAccountInfo();
        return;
      } catch {
        await sleep(200);
      }
    }
    throw new Error('no JetStream meta leader after 20 s');
  } finally {
    await nc.close();
  }
}

function framesCounter(body: string): number | undefined {
  const m = new RegExp(`^rezolus_publish_frames\\S*\\{[^}]*host="${HOST}"[^}]*\\} (\\d+)`, 'm').exec(body);
  return m === null ? undefined : Number(m[1]);
}

test.serial('kill -9 of the stream leader: 0 frames lost or doubled, the exporter serves throughout, the snapshot holds the whole window', async (t) => {
  t.timeout(120_000);
  await jetStreamReady(cluster.url);
  const config = loadAgentConfig(undefined, SAMPLER_NAMES, { host: HOST, natsUrl: cluster.url, intervalMs: INTERVAL_MS });
  const startedAt = Date.now();
  agent = await runAgent(
    { ...config, procfs: PROC, sysfs: SYS, kernel: NO_KERNEL, http: undefined, stream: { ...config.stream, replicas: 3 } },
    silentLogger(),
  );
  exporter = await runExporter(
    loadExporterConfig(undefined, { natsUrl: cluster.url, listen: { host: '127.0.0.1', port: 0 }, intervalMs: 1000 }),
    silentLogger(),
  );
  await exporter.following;
  recorder = await runRecord(
    { natsUrl: cluster.url, hosts: HOST, intervalMs: INTERVAL_MS, durationMs: undefined, output: join(dir, 'live.parquet') },
    silentLogger(),
  );

  const nc = await connectBus({ url: cluster.url, name: 'observer', log: silentLogger() });
  const jsm = await jetstreamManager(nc);
  const before = await jsm.streams.info('REZOLUS');
  t.is(before.config.num_replicas, 3);
  t.is(before.cluster?.replicas?.length, 2, 'a leader and two replicas');
  await sleep(4000);

  const leader = (await jsm.streams.info('REZOLUS')).cluster?.leader ?? '';
  t.true(['n1', 'n2', 'n3'].includes(leader), `stream leader: ${leader}`);
  const killedAt = Date.now();
  const publishedAtKill = agent.publisher.stats.published;
  await cluster.kill(leader);

  // The exporter keeps answering while the cluster elects a new leader.
  const statuses: number[] = [];
  let resumedMs: number | undefined;
  while (Date.now() - killedAt < 15_000) {
    statuses.push((await fetch(exporter.url)).status);
    if (resumedMs === undefined && agent.publisher.stats.published > publishedAtKill + 20 && agent.publisher.stats.buffered < 20) {
      resumedMs = Date.now() - killedAt;
    }
    await sleep(250);
  }
  t.true(statuses.every((s) => s === 200), `exporter statuses during the failover: ${[...new Set(statuses)].join(',')}`);
  t.not(resumedMs, undefined, 'publishing caught up within 15 s of the kill');
  const newLeader = (await retryOnTimeout(() => jsm.streams.info('REZOLUS'))).cluster?.leader ?? '';
  t.true(newLeader !== '' && newLeader !== leader, `new leader ${newLeader}`);

  // The exporter follows frames published after the failover.
  const c1 = framesCounter(await (await fetch(exporter.url)).text());
  await sleep(2500);
  const c2 = framesCounter(await (await fetch(exporter.url)).text());
  t.true(c1 !== undefined && c2 !== undefined && c2 > c1, `rezolus_publish_frames served by the exporter: ${c1} then ${c2}`);

  await agent.agent.stop();
  t.true(await agent.publisher.flush(20_000), 'everything acked');
  const endedAt = Date.now();
  const made = new Map(agent.agent.status().filter((s) => s.seq > 0).map((s) => [s.name, s.seq]));
  const frames = await readStoredFrames(nc);
  const audit = auditSeqs(frames, frames[0]?.instance ?? -1);
  t.is(audit.totalMissing, 0, `missing: ${JSON.stringify([...audit.missing].filter(([, v]) => v.length > 0))}`);
  t.is(audit.totalDuplicates, 0);
  t.is(audit.outOfOrder, 0, 'stored in seq order, sampler by sampler');
  for (const [sampler, seq] of made) t.is(audit.last.get(sampler), seq, `${sampler} ends with the agent's last frame`);
  t.is(agent.publisher.stats.dropped, 0);

  // The live recorder kept recording across its own reconnect.
  recorder.stop();
  const live = await recorder.done;
  recorder = undefined;
  t.true(live.written && live.rows > 0);

  // A hindsight snapshot after the failover: every interval from the agent's first frame to its last.
  const snapshot = join(dir, 'snapshot.parquet');
  const dump = await runRecord(
    {
      natsUrl: cluster.url, hosts: HOST, intervalMs: INTERVAL_MS, durationMs: undefined, output: snapshot,
      replay: { stream: 'REZOLUS', sinceNs: BigInt(startedAt - 1000) * 1_000_000n, untilNs: BigInt(endedAt) * 1_000_000n },
    },
    silentLogger(),
  );
  const s = await dump.done;
  t.true(s.written);
  const duck = await Duck.open();
  const rows = await duck.rows(`SELECT timestamp FROM read_parquet('${snapshot}') ORDER BY timestamp`);
  const steps = rows.slice(1).map((r, i) => Number((r.timestamp as bigint) - (rows[i]?.timestamp as bigint)) / 1e6);
  t.true(steps.every((x) => x === INTERVAL_MS), `row steps (ms): ${[...new Set(steps)].join(',')}`);
  const spanMs = Number((rows.at(-1)?.timestamp as bigint) - (rows[0]?.timestamp as bigint)) / 1e6;
  t.true(spanMs >= endedAt - startedAt - 3000, `the snapshot spans ${spanMs} ms of the ${endedAt - startedAt} ms run`);
  t.log(`leader ${leader} killed; publishing caught up after ${resumedMs} ms; ${frames.length} frames stored; ${agent.publisher.stats.retries} retries; live recording ${live.rows} rows, snapshot ${rows.length} rows`);
  await nc.close();
});
