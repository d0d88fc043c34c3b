/**
 * Issue 7, part 2: three nats-server processes from docker/nats/cluster.conf form a
 * JetStream cluster; the stream has 3 replicas. The stream leader is killed
 * with kill -9 while an agent publishes and an exporter and a recorder
 * consume: no frame is lost or stored twice, the exporter keeps serving, and
 * a hindsight snapshot taken after the failover holds the whole window.
 * Issue 14: a node that loses its whole store is rebuilt from the others.
 */
import test from 'ava';
import { jetstreamManager } from '@nats-io/jetstream';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { runAgent, type RunningAgent } from '../../src/agent/main.js';
import { connectBus } from '../../src/bus/connect.js';
import { DescriptorCache } from '../../src/sources/descriptors.js';
import { openDescriptorBucket } from '../../src/bus/kv.js';
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
import { until } from '../helpers/until.js';

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
    // read whole: a body left unread keeps its connection busy, and the exporter's stop waits for it
    const scrape = await fetch(exporter.url);
    await scrape.arrayBuffer();
    statuses.push(scrape.status);
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
  t.true(live.written && live.rows > 0, `live recording: written ${live.written}, ${live.rows} rows`);

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
  t.true(s.written, `snapshot: written ${s.written}, ${s.rows} rows`);
  const duck = await Duck.open();
  const rows = await duck.rows(`SELECT timestamp FROM read_parquet('${snapshot}') ORDER BY timestamp`);
  const steps = rows.slice(1).map((r, i) => Number((r.timestamp as bigint) - (rows[i]?.timestamp as bigint)) / 1e6);
  t.true(steps.every((x) => x === INTERVAL_MS), `row steps (ms): ${[...new Set(steps)].join(',')}`);
  // The window is the agent's own, from its first stored frame to its last: the time before its first frame
  // (connecting, and creating an R3 stream, took seconds on a busy machine) is not part of it.
  const spanMs = Number((rows.at(-1)?.timestamp as bigint) - (rows[0]?.timestamp as bigint)) / 1e6;
  const begins = frames.map((f) => f.beginNs);
  const framesSpanMs = Number(begins.reduce((a, b) => (b > a ? b : a)) - begins.reduce((a, b) => (b < a ? b : a))) / 1e6;
  t.true(spanMs >= framesSpanMs - 2 * INTERVAL_MS, `the snapshot spans ${spanMs} ms of the stored frames' ${framesSpanMs} ms (the run took ${endedAt - startedAt} ms)`);
  t.log(`leader ${leader} killed; publishing caught up after ${resumedMs} ms; ${frames.length} frames stored; ${agent.publisher.stats.retries} retries; live recording ${live.rows} rows, snapshot ${rows.length} rows spanning ${spanMs} ms of the frames' ${framesSpanMs} ms`);
  await nc.close();
});

/** Messages of a stream as one node itself holds them (its own replica), from its monitoring port. */
async function nodeMessages(httpPort: number, stream: string): Promise<number> {
  const r = await fetch(`http://127.0.0.1:${httpPort}/jsz?streams=true`).catch(() => undefined);
  if (r === undefined || !r.ok) return -1;
  const jsz = (await r.json()) as { account_details?: { stream_detail?: { name: string; state: { messages: number } }[] }[] };
  for (const a of jsz.account_details ?? []) for (const s of a.stream_detail ?? []) if (s.name === stream) return s.state.messages;
  return -1;
}

/** Waits until every replica of each stream is current (a restarted node has caught up). */
async function allCurrent(jsm: Awaited<ReturnType<typeof jetstreamManager>>, streams: readonly string[], ms: number): Promise<boolean> {
  const deadline = Date.now() + ms;
  while (Date.now() < deadline) {
    let ok = true;
    for (const s of streams) {
      const info = await retryOnTimeout(() => jsm.streams.info(s)).catch(() => undefined);
      const replicas = info?.cluster?.replicas ?? [];
      if (info?.cluster?.leader === undefined || replicas.length !== 2 || !replicas.every((r) => r.current && (r.lag ?? 0) === 0)) ok = false;
    }
    if (ok) return true;
    await sleep(250);
  }
  return false;
}

test.serial('one node loses its store: it is rebuilt from the others, and with another node killed after it the stream and descriptors are whole', async (t) => {
  t.timeout(150_000);
  await agent?.stop().catch(() => undefined);
  agent = undefined;
  for (const n of cluster.nodes) if (n.process.exitCode !== null || n.process.signalCode !== null) await cluster.restart(n.name);
  await jetStreamReady(cluster.url);
  const host = 'cluster-wiped';
  const config = loadAgentConfig(undefined, SAMPLER_NAMES, { host, natsUrl: cluster.url, intervalMs: INTERVAL_MS });
  agent = await runAgent(
    { ...config, procfs: PROC, sysfs: SYS, kernel: NO_KERNEL, http: undefined, stream: { ...config.stream, replicas: 3 } },
    silentLogger(),
  );
  const nc = await connectBus({ url: cluster.url, name: 'observer', log: silentLogger() });
  const jsm = await jetstreamManager(nc);
  const streams = ['REZOLUS', 'KV_rezolus_descriptors', 'KV_rezolus_status'];
  t.true(await allCurrent(jsm, streams, 60_000), 'three current replicas before the wipe');
  await sleep(3000);

  // wipe a follower of the stream: it comes back empty and catches up
  const leader = (await retryOnTimeout(() => jsm.streams.info('REZOLUS'))).cluster?.leader ?? '';
  const wiped = cluster.nodes.map((n) => n.name).find((n) => n !== leader) ?? 'n1';
  const held = (await retryOnTimeout(() => jsm.streams.info('REZOLUS'))).state.messages;
  await cluster.wipe(wiped);
  const wipedAt = Date.now();
  const node = cluster.node(wiped);
  t.true(await until(async () => (await nodeMessages(node.httpPort, 'REZOLUS')) >= held, 60_000), `${wiped} holds the ${held} messages the stream had when its store was wiped`);
  const caughtUpMs = Date.now() - wipedAt;
  t.true(await allCurrent(jsm, streams, 60_000), `${wiped} is a current replica of every stream again`);
  await sleep(2000);

  // now kill another node: the wiped one is part of every quorum from here on
  const other = cluster.nodes.map((n) => n.name).find((n) => n !== wiped) ?? 'n2';
  await cluster.kill(other);
  await sleep(4000);
  await agent.agent.stop();
  t.true(await agent.publisher.flush(30_000), 'everything acked with the wiped node in the quorum');
  const made = new Map(agent.agent.status().filter((s) => s.seq > 0).map((s) => [s.name, s.seq]));
  const frames = (await retryOnTimeout(() => readStoredFrames(nc))).filter((f) => f.subject.includes(`.${host}.`));
  const audit = auditSeqs(frames, frames[0]?.instance ?? -1);
  t.is(audit.totalMissing, 0, `missing: ${JSON.stringify([...audit.missing].filter(([, v]) => v.length > 0))}`);
  t.is(audit.totalDuplicates, 0);
  for (const [sampler, seq] of made) t.is(audit.last.get(sampler), seq, `${sampler} ends with the agent's last frame`);
  t.is(agent.publisher.stats.dropped, 0);
  // every descriptor the frames name is readable from the buckets the surviving pair holds
  const cache = new DescriptorCache(await openDescriptorBucket(nc), silentLogger());
  // a lookup during the buckets' leader election (the killed node may have led them) times out and is asked again, as a consumer does
  for (const h of new Set(frames.map((f) => f.descriptor))) {
    t.true(await until(async () => (await cache.resolve(h, host)) !== undefined, 30_000), `descriptor ${h}`);
  }
  t.log(`${wiped} wiped (leader ${leader}), caught up in ${caughtUpMs} ms; then ${other} killed; ${frames.length} frames, none lost`);
  await nc.close();
  await agent.stop();
  agent = undefined;
  await cluster.restart(other);
});
