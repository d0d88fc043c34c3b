/**
 * Issue 14, parts 1 and 2: the bus loses its store. A server that comes back
 * on the same address with an empty store (the disk was lost, or a new node
 * took the address) gets its stream and buckets back from the agent, which
 * then flushes what it buffered meanwhile and puts its descriptors again;
 * the exporter and the hindsight service recover by themselves. A
 * descriptor bucket emptied under a running agent is refilled within
 * seconds. A per-host user that may not create them says so once and keeps
 * buffering within its bound until an admin does.
 */
import test from 'ava';
import { jetstreamManager } from '@nats-io/jetstream';
import { Kvm } from '@nats-io/kv';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { runAgent } from '../../src/agent/main.js';
import { connectBus } from '../../src/bus/connect.js';
import { DescriptorCache } from '../../src/sources/descriptors.js';
import { descriptorBucket, openDescriptorBucket } from '../../src/bus/kv.js';
import { DESCRIPTOR_BUCKET } from '../../src/bus/subjects.js';
import { loadAgentConfig } from '../../src/config/agent.js';
import { loadExporterConfig } from '../../src/config/exporter.js';
import { loadHindsightConfig } from '../../src/config/hindsight.js';
import { runExporter } from '../../src/exporter/main.js';
import { runHindsight } from '../../src/hindsight/main.js';
import { silentLogger } from '../../src/log/logger.js';
import { SAMPLER_NAMES } from '../../src/samplers/registry.js';
import { startAuthNats } from '../helpers/auth-nats.js';
import { NO_KERNEL, PROC, SYS } from '../helpers/fixtures.js';
import { startTestNats, type TestNats } from '../helpers/nats.js';
import { capturingLogger, type security } from '../helpers/security.js';
import { auditSeqs, readStoredFrames } from '../helpers/stream.js';
import { until } from '../helpers/until.js';

const sleep = (ms: number): Promise<void> => new Promise((r) => setTimeout(r, ms));
const WARN = 40;

function agentConfig(host: string, url: string, intervalMs: number) {
  const config = loadAgentConfig(undefined, SAMPLER_NAMES, { host, natsUrl: url, intervalMs });
  return { ...config, procfs: PROC, sysfs: SYS, kernel: NO_KERNEL, http: undefined };
}

/** Kills a server with kill -9 and starts an empty one (a new store) on the same port. */
async function replaceWithEmpty(server: TestNats, configFile?: string): Promise<TestNats> {
  server.process.kill('SIGKILL');
  await new Promise((r) => server.process.once('exit', r));
  rmSync(server.dataDir, { recursive: true, force: true });
  return startTestNats(server.port, undefined, configFile);
}

/** The descriptor hashes the stored frames name. */
async function storedHashes(url: string, sec?: ReturnType<typeof security>): Promise<Set<string>> {
  const nc = await connectBus({ url, name: 'hashes', log: silentLogger(), security: sec });
  try {
    return new Set((await readStoredFrames(nc)).map((f) => f.descriptor));
  } finally {
    await nc.close();
  }
}

test('a server that comes back with an empty store: stream and buckets recreated, the buffer flushed, descriptors back, exporter and hindsight recover', async (t) => {
  t.timeout(150_000);
  let server = await startTestNats();
  const dir = mkdtempSync(join(tmpdir(), 'rezolus-store-loss-'));
  const { log, lines } = capturingLogger();
  const agent = await runAgent(agentConfig('lost-store', server.url, 100), log);
  const exporter = await runExporter(
    loadExporterConfig(undefined, { natsUrl: server.url, listen: { host: '127.0.0.1', port: 0 }, intervalMs: 1000 }),
    silentLogger(),
  );
  await exporter.following;
  const hindsight = await runHindsight(
    { ...loadHindsightConfig(undefined, { natsUrl: server.url, listen: { host: '127.0.0.1', port: 0 }, output: join(dir, 'h.parquet'), hosts: 'lost-store', intervalMs: 100 }), durationMs: 60_000 },
    silentLogger(),
  );
  try {
    await sleep(2500);
    const seqAtKill = new Map(agent.agent.status().map((s) => [s.name, s.seq]));
    server = await replaceWithEmpty(server);
    const restartedAt = Date.now();

    // The agent recreates the stream and buckets and flushes everything it buffered.
    t.true(await until(() => agent.publisher.stats.buffered === 0 && Date.now() - restartedAt > 1000, 30_000), `buffer drained: ${agent.publisher.stats.buffered} left`);
    const recoveredMs = Date.now() - restartedAt;
    const nc = await connectBus({ url: server.url, name: 'audit', log: silentLogger() });
    const jsm = await jetstreamManager(nc);
    t.true((await jsm.streams.info('REZOLUS')).state.messages > 0, 'the stream is back and holds frames');
    const warned = lines.filter((l) => l.level >= WARN && /recreat|missing/i.test(l.msg));
    t.true(warned.length >= 1, `the agent says at warn level that it found the stream or buckets missing: ${JSON.stringify(lines.filter((l) => l.level >= WARN).map((l) => l.msg))}`);

    await agent.agent.stop();
    t.true(await agent.publisher.flush(10_000));
    // Every frame made since the kill is stored once, in order (the frames acked before it were lost with the store).
    const frames = await readStoredFrames(nc);
    const audit = auditSeqs(frames, frames[0]?.instance ?? -1);
    for (const s of agent.agent.status().filter((x) => x.seq > 0)) {
      const stored = frames.filter((f) => f.sampler === s.name).map((f) => f.seq);
      const first = Math.min(...stored);
      t.true(first <= (seqAtKill.get(s.name) ?? 0) + 1, `${s.name}: stored from seq ${first}, made ${seqAtKill.get(s.name)} before the kill`);
      t.is(new Set(stored).size, s.seq - first + 1, `${s.name}: every seq from ${first} to ${s.seq} once`);
    }
    t.is(audit.totalDuplicates, 0);
    t.is(audit.outOfOrder, 0);
    t.is(agent.publisher.stats.dropped, 0);

    // Every descriptor the stored frames name is in the new bucket.
    const cache = new DescriptorCache(await openDescriptorBucket(nc), silentLogger());
    const raw = await readStoredFrames(nc);
    const hashes = new Set(raw.map((f) => f.descriptor));
    for (const h of hashes) t.not(await cache.resolve(h, 'lost-store'), undefined, `descriptor ${h} is back`);

    // The exporter follows the new server's frames and stops meeting unknown descriptors.
    const unknownAfter = exporter.skipped.unknownDescriptor;
    t.true(await until(async () => /rezolus_exporter_frames_total|cpu_usage/.test(await (await fetch(exporter.url)).text()), 5000));
    t.is(exporter.skipped.unknownDescriptor, unknownAfter, 'no frame with an unknown descriptor after the recovery');

    // The hindsight service dumps the new window with every frame decoded.
    const dump = await hindsight.dump('test');
    t.true(dump.written && dump.rows > 0, `dump after recovery: ${dump.rows} rows`);
    t.is(dump.skipped.unknownDescriptor, 0);
    t.log(`recovered ${recoveredMs} ms after the empty server started; ${frames.length} frames stored; dump ${dump.rows} rows; exporter skipped ${JSON.stringify(exporter.skipped)}`);
    await nc.close();
  } finally {
    await agent.stop().catch(() => undefined);
    await hindsight.stop().catch(() => undefined);
    await exporter.stop().catch(() => undefined);
    await server.dispose();
    rmSync(dir, { recursive: true, force: true });
  }
});

test('a descriptor bucket emptied under a running agent is refilled within seconds', async (t) => {
  t.timeout(60_000);
  const server = await startTestNats();
  const agent = await runAgent(agentConfig('emptied', server.url, 250), silentLogger());
  const nc = await connectBus({ url: server.url, name: 'admin', log: silentLogger() });
  try {
    await sleep(1500);
    const jsm = await jetstreamManager(nc);
    const wanted = await storedHashes(server.url);
    t.true(wanted.size >= 8, `descriptors in use: ${wanted.size}`);
    // every descriptor a stored frame names is one the agent made (a frame's bytes written over would name another)
    const made = new Set(agent.agent.recentDescriptors().map((d) => d.hash));
    t.deepEqual([...wanted].filter((h) => !made.has(h)), [], 'stored frames name only descriptors of the agent');
    await jsm.streams.purge(`KV_${DESCRIPTOR_BUCKET}`);
    t.is((await jsm.streams.info(`KV_${DESCRIPTOR_BUCKET}`)).state.messages, 0, 'emptied');
    const purgedAt = Date.now();
    const kv = await openDescriptorBucket(nc);
    const missing = async (): Promise<string[]> => {
      const out: string[] = [];
      for (const h of wanted) if ((await kv.get(`emptied.${h}`)) === null) out.push(h);
      return out;
    };
    const back = await until(async () => (await missing()).length === 0, 20_000);
    if (!back) {
      const recent = agent.agent.recentDescriptors().map((d) => `${d.hash} put ${Date.now() - d.putAt} ms ago`);
      t.log(`missing after 20 s: ${(await missing()).join(', ')}; the agent's recent descriptors: ${recent.join('; ')}`);
    }
    t.true(back, 'every descriptor in use is back');
    const ms = Date.now() - purgedAt;
    t.true(ms < 15_000, `refilled after ${ms} ms`);
    // a consumer that never saw them decodes the agent's frames
    const cache = new DescriptorCache(kv, silentLogger());
    for (const h of wanted) t.not(await cache.resolve(h, 'emptied'), undefined);
    t.log(`${wanted.size} descriptors back ${ms} ms after the purge`);
  } finally {
    await nc.close();
    await agent.stop().catch(() => undefined);
    await server.dispose();
  }
});

test('a per-host user that may not recreate the stream says so once at warn level, buffers within its bound, and flushes once an admin creates it', async (t) => {
  t.timeout(120_000);
  const dir = mkdtempSync(join(tmpdir(), 'rezolus-store-loss-auth-'));
  const auth = await startAuthNats(dir, ['h1']);
  let server = auth.server;
  const admin = auth.user('rezolus-admin');
  await auth.provision();
  const { log, lines } = capturingLogger();
  const bound = 256 * 1024;
  const agent = await runAgent({ ...agentConfig('h1', server.url, 100), bufferMaxBytes: bound, nats: auth.user('agent-h1') }, log);
  try {
    await sleep(1500);
    // the agent's user reads back its own descriptors (the probe that finds an emptied bucket), nobody else's
    const own = await connectBus({ url: server.url, name: 'as-agent', log: silentLogger(), security: auth.user('agent-h1', { inboxPrefix: '_INBOX_h1' }) });
    const ownKv = await descriptorBucket(own, { ttlMs: agentConfig('h1', server.url, 100).descriptorTtlMs, replicas: 1 });
    const [hash] = await storedHashes(server.url, admin);
    t.not(await ownKv.get(`h1.${hash}`), null, 'an agent may read its own descriptor');
    await t.throwsAsync(ownKv.get(`h2.${hash}`), undefined, 'and not another host\'s');
    await own.close();
    server = await replaceWithEmpty(server, auth.configFile);
    t.true(await until(() => agent.publisher.stats.dropped > 0, 60_000), 'the buffer fills while nothing can be stored');
    await sleep(3000);
    t.true(agent.publisher.stats.bufferedBytes <= bound + 16 * 1024, `buffered bytes stay within the bound: ${agent.publisher.stats.bufferedBytes}`);
    const refusals = lines.filter((l) => l.level >= WARN && /may not create/i.test(l.msg));
    t.is(refusals.length, 1, `said once at warn level: ${JSON.stringify(lines.filter((l) => l.level >= WARN).map((l) => l.msg))}`);

    await auth.provision(); // the admin's connection is back on the new server
    t.true(await until(() => agent.publisher.stats.buffered === 0, 30_000), `flushed once the admin created the stream: ${agent.publisher.stats.buffered} left`);
    const frames = await readStoredFrames(auth.admin);
    t.true(frames.length > 0);
    const kv = await openDescriptorBucket(auth.admin);
    const hashes = new Set(frames.map((f) => f.descriptor));
    for (const h of hashes) t.not(await kv.get(`h1.${h}`), null, `descriptor ${h} put again`);
    t.log(`${frames.length} frames stored after the admin recreated the stream; ${agent.publisher.stats.dropped} dropped from the ${bound} B buffer`);
  } finally {
    await agent.stop().catch(() => undefined);
    await auth.admin.close().catch(() => undefined);
    await server.dispose();
    rmSync(dir, { recursive: true, force: true });
  }
});

test('a descriptor bucket recreated by hand, small and allowing rollups: frames keep flowing, nothing piles up, and rollups are turned off again', async (t) => {
  t.timeout(90_000);
  const server = await startTestNats();
  const { log, lines } = capturingLogger();
  const agent = await runAgent({ ...agentConfig('small-bucket', server.url, 100), bufferMaxBytes: 512 * 1024 }, log);
  const nc = await connectBus({ url: server.url, name: 'admin', log: silentLogger() });
  try {
    await sleep(1500);
    const jsm = await jetstreamManager(nc);
    await jsm.streams.delete(`KV_${DESCRIPTOR_BUCKET}`);
    // what `nats kv add` or a client's defaults make: rollups allowed; and too small for every descriptor
    await new Kvm(nc).create(DESCRIPTOR_BUCKET, { history: 1, max_bytes: 3000 });
    t.true((await jsm.streams.info(`KV_${DESCRIPTOR_BUCKET}`)).config.allow_rollup_hdrs);
    // frames JetStream acked (a bundle's frames each): the stream's message count is a bundle a tick
    const stored = async (): Promise<number> => agent.publisher.stats.published;
    await sleep(3000);
    const a = await stored();
    await sleep(6000);
    const b = await stored();
    t.true(b - a >= 300, `frames keep being stored while descriptors are refused: ${b - a} in 6 s at 10 samplers x 10 Hz`);
    t.is(agent.publisher.stats.dropped, 0, 'no frame dropped from the buffer');
    t.true(agent.publisher.stats.buffered < 200, `the queue does not pile up: ${agent.publisher.stats.buffered} items`);
    t.false((await jsm.streams.info(`KV_${DESCRIPTOR_BUCKET}`)).config.allow_rollup_hdrs === true, 'the agent turned rollups off again');
    const warned = lines.filter((l) => l.level >= WARN && /missing from the descriptor bucket/.test(l.msg));
    const refused = lines.filter((l) => l.level >= WARN && /refused a descriptor/.test(l.msg));
    t.is(warned.length, 1, 'missing descriptors said once');
    t.is(refused.length, 1, 'the bucket\'s refusal said once');
    t.log(`${b - a} frames stored in 6 s; ${agent.publisher.stats.refused} descriptor puts refused by the full bucket`);
  } finally {
    await nc.close();
    await agent.stop().catch(() => undefined);
    await server.dispose();
  }
});

test('a per-host user whose stream alone is deleted (buckets kept) says so once at warn level and flushes when the admin recreates it', async (t) => {
  t.timeout(90_000);
  const dir = mkdtempSync(join(tmpdir(), 'rezolus-store-loss-auth-'));
  const auth = await startAuthNats(dir, ['h2']);
  try {
    await auth.provision();
    const { log, lines } = capturingLogger();
    const agent = await runAgent({ ...agentConfig('h2', auth.server.url, 100), nats: auth.user('agent-h2') }, log);
    try {
      await sleep(1500);
      const jsm = await jetstreamManager(auth.admin);
      await jsm.streams.delete('REZOLUS');
      const said = (): typeof lines => lines.filter((l) => l.level >= WARN && /REZOLUS missing .* may not create/.test(l.msg));
      t.true(await until(() => said().length > 0, 20_000), `said at warn level: ${JSON.stringify(lines.filter((l) => l.level >= WARN).map((l) => l.msg))}`);
      await sleep(5000);
      t.is(said().length, 1, 'once');
      await auth.provision();
      t.true(await until(() => agent.publisher.stats.buffered === 0, 30_000), 'flushed once the admin recreated the stream');
      t.true((await jsm.streams.info('REZOLUS')).state.messages > 0);
    } finally {
      await agent.stop().catch(() => undefined);
    }
  } finally {
    await auth.dispose();
    rmSync(dir, { recursive: true, force: true });
  }
});
