/**
 * Issue 7, part 1: a real agent keeps sampling through a kill -9 of its
 * nats-server and, once the server is back on the same store, every frame
 * sequence number of every sampler is in the stream exactly once. With a
 * tiny buffer the frames it drops are exactly the ones missing.
 */
import test, { type ExecutionContext } from 'ava';
import { connectBus } from '../../src/bus/connect.js';
import { runAgent, type RunningAgent } from '../../src/agent/main.js';
import { loadAgentConfig } from '../../src/config/agent.js';
import { silentLogger } from '../../src/log/logger.js';
import { SAMPLER_NAMES } from '../../src/samplers/registry.js';
import { NO_KERNEL, PROC, SYS } from '../helpers/fixtures.js';
import { startTestNats, type TestNats } from '../helpers/nats.js';
import { selfFigures } from '../helpers/agent-http.js';
import { until } from '../helpers/until.js';
import { auditSeqs, readStoredFrames } from '../helpers/stream.js';

const sleep = (ms: number): Promise<void> => new Promise((r) => setTimeout(r, ms));

async function startAgent(server: TestNats, intervalMs: number, bufferMaxBytes: number): Promise<RunningAgent> {
  const config = loadAgentConfig(undefined, SAMPLER_NAMES, { host: `outage-${intervalMs}`, natsUrl: server.url, intervalMs });
  return runAgent(
    { ...config, procfs: PROC, sysfs: SYS, kernel: NO_KERNEL, bufferMaxBytes, http: { host: '127.0.0.1', port: 0 } },
    silentLogger(),
  );
}

async function outage(t: ExecutionContext, intervalMs: number): Promise<void> {
  let server = await startTestNats();
  const agent = await startAgent(server, intervalMs, 64 * 1024 * 1024);
  try {
    await sleep(3000);
    const killedAt = BigInt(Date.now()) * 1_000_000n;
    server.process.kill('SIGKILL');
    await new Promise((r) => server.process.once('exit', r));
    await sleep(15_000);
    const bufferedMid = agent.publisher.stats.buffered;
    const shownMid = (await selfFigures(agent.httpPort ?? 0)).rezolus_publish_buffered ?? -1;
    await sleep(15_000);
    const restartedAt = BigInt(Date.now()) * 1_000_000n;
    server = await startTestNats(server.port, server.dataDir);
    t.true(await until(() => agent.publisher.stats.buffered === 0 && agent.publisher.stats.published > 0, 60_000), 'the buffer drains after the restart');
    await agent.agent.stop();
    t.true(await agent.publisher.flush(10_000));

    const made = new Map(agent.agent.status().filter((s) => s.seq > 0).map((s) => [s.name, s.seq]));
    t.true(made.size >= 8, `samplers that made frames: ${[...made.keys()].join(', ')}`);
    const perTick = made.size;
    t.true(bufferedMid >= perTick * Math.floor(10_000 / intervalMs), `frames buffered 15 s into the outage: ${bufferedMid}`);
    t.true(shownMid > 0, `rezolus_publish_buffered on the agent's HTTP during the outage: ${shownMid}`);
    t.is(agent.publisher.stats.dropped, 0);

    const nc = await connectBus({ url: server.url, name: 'audit', log: silentLogger() });
    const frames = await readStoredFrames(nc);
    await nc.close();
    const instance = frames[0]?.instance ?? -1;
    t.true(frames.every((f) => f.instance === instance), 'one agent instance');
    const audit = auditSeqs(frames, instance);
    t.is(audit.totalMissing, 0, `missing: ${JSON.stringify([...audit.missing].filter(([, v]) => v.length > 0))}`);
    t.is(audit.totalDuplicates, 0, `duplicated: ${JSON.stringify([...audit.duplicates].filter(([, v]) => v.length > 0))}`);
    t.is(audit.outOfOrder, 0, 'stored in seq order, sampler by sampler');
    for (const [sampler, seq] of made) t.is(audit.last.get(sampler), seq, `${sampler}: the stream ends with the agent's last frame`);

    // It kept sampling while the server was down: frames acquired during the outage, at the cadence.
    const during = frames.filter((f) => f.sampler === 'cpu_usage' && f.beginNs > killedAt && f.beginNs < restartedAt);
    const expected = Number(restartedAt - killedAt) / 1e6 / intervalMs;
    t.true(during.length >= expected * 0.9, `cpu_usage frames acquired during the ${Number(restartedAt - killedAt) / 1e9} s outage: ${during.length}, expected ~${expected}`);
    t.log(`${intervalMs} ms: ${frames.length} frames stored, ${bufferedMid} buffered mid-outage, ${agent.publisher.stats.retries} retries, ${agent.publisher.stats.duplicates} acked as duplicates`);
  } finally {
    await agent.stop().catch(() => undefined);
    await server.dispose();
  }
}

test('kill -9 of the nats-server for 30 s at 1 Hz: every frame of every sampler is stored exactly once', async (t) => {
  t.timeout(150_000);
  await outage(t, 1000);
});

test('kill -9 of the nats-server for 30 s at 10 Hz: every frame of every sampler is stored exactly once', async (t) => {
  t.timeout(150_000);
  await outage(t, 100);
});

test('with a tiny buffer the oldest frames go and the count is exact: made = stored + dropped', async (t) => {
  t.timeout(90_000);
  let server = await startTestNats();
  const agent = await startAgent(server, 100, 48 * 1024);
  try {
    await sleep(1500);
    server.process.kill('SIGKILL');
    await new Promise((r) => server.process.once('exit', r));
    await sleep(6000);
    const droppedMid = agent.publisher.stats.dropped;
    t.true(agent.publisher.stats.bufferedBytes <= 48 * 1024 + 8192, `buffered bytes stay near the bound: ${agent.publisher.stats.bufferedBytes}`);
    server = await startTestNats(server.port, server.dataDir);
    t.true(await until(() => agent.publisher.stats.buffered === 0, 60_000));
    await agent.agent.stop();
    t.true(await agent.publisher.flush(10_000));
    const made = agent.agent.status().reduce((n, s) => n + s.seq, 0);
    const nc = await connectBus({ url: server.url, name: 'audit', log: silentLogger() });
    const frames = await readStoredFrames(nc);
    await nc.close();
    const audit = auditSeqs(frames, frames[0]?.instance ?? -1);
    const lastMissing = audit.totalMissing + [...agent.agent.status()].reduce((n, s) => n + (s.seq - (audit.last.get(s.name) ?? 0)), 0);
    t.true(droppedMid > 100, `frames dropped during the outage: ${droppedMid}`);
    t.is(audit.totalDuplicates, 0);
    t.is(frames.length, made - agent.publisher.stats.dropped, 'every frame made is stored or counted as dropped');
    t.is(lastMissing, agent.publisher.stats.dropped, 'the missing seqs are exactly the dropped count');
    t.log(`made ${made}, stored ${frames.length}, dropped ${agent.publisher.stats.dropped}`);
  } finally {
    await agent.stop().catch(() => undefined);
    await server.dispose();
  }
});
