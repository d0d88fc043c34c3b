import test from 'ava';
import { jetstreamManager } from '@nats-io/jetstream';
import type { NatsConnection } from '@nats-io/nats-core';
import { connectBus } from '../../src/bus/connect.js';
import { descriptorBucket } from '../../src/bus/kv.js';
import { Publisher } from '../../src/bus/publisher.js';
import { bundleFrames, encodeBundle } from '../../src/frame/bundle.js';
import { bundleBytes } from '../../src/frame/bundle-bytes.js';
import { ensureStream, type StreamOptions } from '../../src/bus/stream.js';
import { NoStreamError } from '../../src/errors.js';
import { silentLogger } from '../../src/log/logger.js';
import { startTestNats, type TestNats } from '../helpers/nats.js';
import { until } from '../helpers/until.js';

const STREAM: StreamOptions = {
  name: 'REZOLUS', maxAgeMs: 15 * 60_000, maxBytes: 64 * 1024 * 1024, maxMsgsPerSubject: 100_000, duplicateWindowMs: 120_000, replicas: 1,
};

async function setup(server: TestNats, maxBufferBytes: number): Promise<{ nc: NatsConnection; publisher: Publisher }> {
  const log = silentLogger();
  const nc = await connectBus({ url: server.url, name: 'test', log });
  await ensureStream(await jetstreamManager(nc), STREAM, log);
  const descriptors = await descriptorBucket(nc, { ttlMs: 3_600_000, replicas: 1 });
  const publisher = new Publisher({ nc, descriptors, host: 'h1', maxBufferBytes, log, timeoutMs: 1000 });
  return { nc, publisher };
}

/** Reads every stored frame payload of a subject in stream order. */
async function storedPayloads(nc: NatsConnection, subject: string): Promise<number[]> {
  const jsm = await jetstreamManager(nc);
  const info = await jsm.streams.info('REZOLUS');
  const out: number[] = [];
  for (let seq = info.state.first_seq; seq <= info.state.last_seq; seq++) {
    const m = await jsm.streams.getMessage('REZOLUS', { seq }).catch(() => null);
    if (m !== null && m.subject === subject) out.push(new DataView(m.data.buffer, m.data.byteOffset).getUint32(0));
  }
  return out;
}

function frame(i: number): Uint8Array {
  const b = new Uint8Array(64);
  new DataView(b.buffer).setUint32(0, i);
  return b;
}

test.serial('a broker crash loses nothing that fits the buffer, stores each frame once, in order', async (t) => {
  let server = await startTestNats();
  const { nc, publisher } = await setup(server, 8 * 1024 * 1024);
  const subject = 'rezolus.metrics.h1.cpu_usage';
  publisher.putDescriptor('0123456789abcdef', '{"v":1}');
  const N = 150;
  for (let i = 1; i <= N; i++) {
    publisher.publishFrame(subject, frame(i), 'h1.cpu_usage.1.', i);
    if (i === 50) server = await server.crashAndRestart(800); // frames keep coming while the server is down
    await new Promise((r) => setTimeout(r, 10));
  }
  t.true(await publisher.flush(30_000), 'buffer flushed after the restart');
  const stored = await storedPayloads(nc, subject);
  t.is(stored.length, N);
  t.deepEqual(stored, Array.from({ length: N }, (_, k) => k + 1));
  t.is(publisher.stats.dropped, 0);
  t.true(publisher.stats.retries > 0, 'the outage was seen and retried');
  t.is(publisher.stats.published, N);
  t.is(publisher.stats.buffered, 0);
  await publisher.close();
  await nc.close();
  await server.dispose();
});

test.serial('when the buffer overflows during an outage the oldest frames go, counted, the rest arrive in order', async (t) => {
  let server = await startTestNats();
  const { nc, publisher } = await setup(server, 256 * 1024);
  const subject = 'rezolus.metrics.h2.cpu_usage';
  publisher.publishFrame(subject, frame(0), 'h2.cpu_usage.1.', 0);
  t.true(await publisher.flush(5000));
  server.process.kill('SIGKILL');
  await new Promise((r) => server.process.once('exit', r));
  // 2000 frames of 64 bytes (+ ITEM_OVERHEAD_BYTES each) do not fit 256 KiB
  for (let i = 1; i <= 2000; i++) publisher.publishFrame(subject, frame(i), 'h2.cpu_usage.1.', i);
  t.true(publisher.stats.dropped > 1000);
  t.true(publisher.stats.bufferedBytes <= 256 * 1024 + 400);
  server = await startTestNats(server.port, server.dataDir);
  t.true(await publisher.flush(30_000));
  const stored = await storedPayloads(nc, subject);
  // in order, each once: frame 0, the frames that were in flight when the server died, then the newest
  t.true(stored.every((v, i) => i === 0 || v > (stored[i - 1] as number)), 'strictly increasing');
  t.is(stored.length, 1 + 2000 - publisher.stats.dropped, 'nothing lost beyond what was counted as dropped');
  t.is(stored[0], 0);
  t.is(stored.at(-1), 2000);
  const newest = stored.slice(-500);
  t.deepEqual(newest, Array.from({ length: 500 }, (_, k) => 1501 + k), 'the newest frames are the ones kept');
  await publisher.close();
  await nc.close();
  await server.dispose();
});

test.serial('frames published before any stream exists are retried until one does, then stored once', async (t) => {
  const server = await startTestNats();
  const log = silentLogger();
  const nc = await connectBus({ url: server.url, name: 'test', log });
  const descriptors = await descriptorBucket(nc, { ttlMs: 3_600_000, replicas: 1 });
  const publisher = new Publisher({ nc, descriptors, host: 'h3', maxBufferBytes: 1024 * 1024, log, timeoutMs: 500 });
  const subject = 'rezolus.metrics.h3.cpu_usage';
  for (let i = 1; i <= 5; i++) publisher.publishFrame(subject, frame(i), 'h3.cpu_usage.1.', i);
  await new Promise((r) => setTimeout(r, 400));
  t.true(publisher.stats.retries > 0, 'no stream: the server answers 503 and the frame is retried');
  t.is(publisher.stats.published, 0);
  await ensureStream(await jetstreamManager(nc), STREAM, log);
  t.true(await publisher.flush(10_000));
  t.deepEqual(await storedPayloads(nc, subject), [1, 2, 3, 4, 5]);
  await publisher.close();
  await nc.close();
  await server.dispose();
});

test.serial('a failure followed by successes in the same window still gets retried', async (t) => {
  const server = await startTestNats();
  const { nc, publisher } = await setup(server, 1024 * 1024);
  // nothing captures "late.*" yet: that publish fails at once (503) while the frames behind it succeed
  publisher.publishFrame('late.one', frame(1), 'late.one.', 1);
  for (let i = 1; i <= 5; i++) publisher.publishFrame('rezolus.metrics.h4.cpu_usage', frame(i), 'h4.cpu_usage.1.', i);
  await new Promise((r) => setTimeout(r, 300));
  t.is(publisher.stats.published, 5);
  await (await jetstreamManager(nc)).streams.add({ name: 'LATE', subjects: ['late.*'] });
  t.true(await publisher.flush(10_000), 'the failed frame is retried until a stream takes it');
  t.is(publisher.stats.published, 6);
  await publisher.close();
  await nc.close();
  await server.dispose();
});

test.serial('bundles in lent bytes through a broker crash: each stored once, whole and in order, though acked bytes carry later bundles', async (t) => {
  let server = await startTestNats();
  const { nc, publisher } = await setup(server, 8 * 1024 * 1024);
  const subject = 'rezolus.metrics.h1._bundle';
  const N = 120;
  const lent = new Set<ArrayBufferLike>();
  // bundle i: three frames of 64 bytes, each frame's bytes all (i * 3 + k) % 251 after its number
  const frameOf = (i: number, k: number): Uint8Array => {
    const f = frame(i).subarray(0, 64);
    f.fill((i * 3 + k) % 251, 4);
    return f;
  };
  for (let i = 1; i <= N; i++) {
    const data = encodeBundle([0, 1, 2].map((k) => frameOf(i, k)), (n) => bundleBytes.take(n));
    lent.add(data.buffer);
    publisher.publishBundle(subject, data, 'h1._bundle.1.', i, 3);
    if (i === 40) server = await server.crashAndRestart(800); // bundles keep coming while the server is down
    await new Promise((r) => setTimeout(r, 10));
  }
  t.true(await publisher.flush(30_000), 'buffer flushed after the restart');
  // the bundles of the outage each needed bytes of their own; once acked, their bytes carry the next
  t.true(bundleBytes.kept > 0, 'acked bytes are kept for the next bundle');
  t.true(lent.has(bundleBytes.take(100).buffer), 'the next bundle is written into bytes an acked one had');
  const jsm = await jetstreamManager(nc);
  const info = await jsm.streams.info('REZOLUS');
  const seen: number[] = [];
  for (let seq = info.state.first_seq; seq <= info.state.last_seq; seq++) {
    const m = await jsm.streams.getMessage('REZOLUS', { seq }).catch(() => null);
    if (m === null || m.subject !== subject) continue;
    const frames = bundleFrames(m.data);
    const i = new DataView(frames[0]?.buffer ?? new ArrayBuffer(4), frames[0]?.byteOffset).getUint32(0);
    t.deepEqual(frames.map((f) => Buffer.from(f).toString('hex')), [0, 1, 2].map((k) => Buffer.from(frameOf(i, k)).toString('hex')), `bundle ${i} intact`);
    seen.push(i);
  }
  t.deepEqual(seen, Array.from({ length: N }, (_, k) => k + 1));
  t.true(publisher.stats.retries > 0, 'the outage was seen and retried');
  t.like(publisher.stats, { published: 3 * N, dropped: 0, buffered: 0 });
  await publisher.close();
  await nc.close();
  await server.dispose();
});

test.serial('a frame larger than the server max_payload is dropped and counted, not retried ahead of the frames behind it', async (t) => {
  const server = await startTestNats();
  const { nc, publisher } = await setup(server, 8 * 1024 * 1024);
  const subject = 'rezolus.metrics.h5.cpu_usage';
  publisher.publishFrame(subject, frame(1), 'h5.cpu_usage.1.', 1);
  publisher.publishFrame(subject, new Uint8Array(1024 * 1024 + 1), 'h5.cpu_usage.1.', 2);
  for (let i = 3; i <= 10; i++) publisher.publishFrame(subject, frame(i), 'h5.cpu_usage.1.', i);
  t.true(await publisher.flush(10_000), 'the frames behind the big one are not stalled');
  t.deepEqual(await storedPayloads(nc, subject), [1, 3, 4, 5, 6, 7, 8, 9, 10]);
  t.is(publisher.stats.dropped, 1);
  t.is(publisher.stats.published, 9);
  await publisher.close();
  await nc.close();
  await server.dispose();
});

test.serial('a descriptor larger than the server max_payload is dropped, not retried ahead of every frame behind it', async (t) => {
  const server = await startTestNats();
  const { nc, publisher } = await setup(server, 8 * 1024 * 1024);
  const subject = 'rezolus.metrics.h1.cpu_usage';
  t.is(publisher.maxPayload(), 1024 * 1024, 'the server\'s max_payload, for the agent to check descriptors against');
  publisher.putDescriptor('0123456789abcdef', 'x'.repeat(1024 * 1024 + 10));
  for (let i = 1; i <= 5; i++) publisher.publishFrame(subject, frame(i), 'h1.cpu_usage.1.', i);
  t.true(await publisher.flush(10_000), 'the frames behind it are not stalled');
  t.deepEqual(await storedPayloads(nc, subject), [1, 2, 3, 4, 5]);
  t.is(publisher.stats.descriptorsPut, 0);
  await publisher.close();
  await nc.close();
  await server.dispose();
});

test.serial('a stream and bucket gone from the server: a retry reports NoStreamError with the subject, and an urgent descriptor is put before every frame still buffered', async (t) => {
  const server = await startTestNats();
  const log = silentLogger();
  const nc = await connectBus({ url: server.url, name: 'test', log });
  try {
    const jsm = await jetstreamManager(nc);
    await ensureStream(jsm, STREAM, log);
    const descriptors = await descriptorBucket(nc, { ttlMs: 3_600_000, replicas: 1 });
    const noStream: string[] = [];
    /** frames acked when each descriptor put was acked */
    const putAt: number[] = [];
    let publisher: Publisher | undefined;
    // what the store keeper does: the descriptor again, ahead of the buffered frames
    const onRetry = (error: unknown): void => {
      if (error instanceof NoStreamError && noStream.push(error.subject) === 1) publisher?.putDescriptor('0123456789abcdef', '{"v":1}', true);
    };
    const kv = new Proxy(descriptors, {
      get: (target, prop, receiver) => (prop === 'put' ? async (k: string, v: string) => {
        const revision = await target.put(k, v);
        putAt.push(publisher?.stats.published ?? -1);
        return revision;
      } : Reflect.get(target, prop, receiver)),
    });
    publisher = new Publisher({ nc, descriptors: kv, host: 'h1', maxBufferBytes: 8 * 1024 * 1024, log, timeoutMs: 1000, onRetry });
    const subject = 'rezolus.metrics.h1.cpu_usage';
    for (let i = 1; i <= 5; i++) publisher.publishFrame(subject, frame(i), 'h1.cpu_usage.1.', i);
    t.true(await publisher.flush(10_000));
    await jsm.streams.delete('REZOLUS');
    await jsm.streams.delete('KV_rezolus_descriptors');
    for (let i = 6; i <= 25; i++) {
      publisher.publishFrame(subject, frame(i), 'h1.cpu_usage.1.', i);
      await new Promise((r) => setTimeout(r, 10));
    }
    t.true(await until(() => noStream.length > 0, 10_000), 'the publisher reported the missing stream');
    t.is(noStream[0], subject);
    await ensureStream(jsm, STREAM, log);
    await descriptorBucket(nc, { ttlMs: 3_600_000, replicas: 1 });
    t.true(await publisher.flush(30_000), 'flushed once the stream and bucket are back');
    t.deepEqual(putAt, [5], 'the descriptor was put once, before any frame made after the loss was acked');
    t.deepEqual(await storedPayloads(nc, subject), Array.from({ length: 20 }, (_, k) => k + 6), 'every frame made after the loss, once, in order');
    t.is(publisher.stats.dropped, 0);
    await publisher.close();
  } finally {
    await nc.close();
    await server.dispose();
  }
});

test.serial('a bundle above the stream\'s max_msg_size goes again a frame to a bundle: every frame stored once and in order, none dropped', async (t) => {
  const server = await startTestNats();
  const { nc, publisher } = await setup(server, 8 * 1024 * 1024);
  try {
    const jsm = await jetstreamManager(nc);
    // an operator's stream limit below what the agent bundles (it keeps bundles under max_payload only)
    await jsm.streams.update('REZOLUS', { ...(await jsm.streams.info('REZOLUS')).config, max_msg_size: 200 });
    const subject = 'rezolus.metrics.h1._bundle';
    // a tick at a time, as an agent sends them (bundles sent back to back, as after an outage, may be
    // stored in another order: a split one's frames go after those already in flight)
    for (const [seq, frames] of [[1, [1, 2, 3, 4, 5]], [2, [6]], [3, [7, 8]]] as const) {
      publisher.publishBundle(subject, encodeBundle(frames.map(frame)), 'h1._bundle.1.', seq, frames.length);
      t.true(await publisher.flush(10_000));
    }
    const stored: number[] = [];
    const info = await jsm.streams.info('REZOLUS');
    for (let seq = info.state.first_seq; seq <= info.state.last_seq; seq++) {
      const m = await jsm.streams.getMessage('REZOLUS', { seq });
      t.true((m?.data.byteLength ?? 0) <= 200);
      for (const f of bundleFrames(m?.data ?? new Uint8Array(0))) stored.push(new DataView(f.buffer, f.byteOffset).getUint32(0));
    }
    t.deepEqual(stored, [1, 2, 3, 4, 5, 6, 7, 8], 'each frame once, in the order queued');
    t.like(publisher.stats, { published: 8, dropped: 0, buffered: 0 });
    // a single frame above the limit still cannot fit: dropped and counted, the rest goes on
    publisher.publishBundle(subject, encodeBundle([new Uint8Array(300)]), 'h1._bundle.1.', 4, 1);
    publisher.publishBundle(subject, encodeBundle([frame(9)]), 'h1._bundle.1.', 5, 1);
    t.true(await publisher.flush(10_000));
    t.like(publisher.stats, { published: 9, dropped: 1, buffered: 0 });
  } finally {
    await publisher.close();
    await nc.close();
    await server.dispose();
  }
});

test.serial('acked frames are not kept: the queue holds a few dozen items after hundreds were published', async (t) => {
  const server = await startTestNats();
  const { nc, publisher } = await setup(server, 8 * 1024 * 1024);
  t.teardown(async () => {
    await publisher.close();
    await nc.close();
    await server.dispose();
  });
  for (let i = 1; i <= 400; i++) {
    publisher.publishFrame('rezolus.metrics.h1.cpu_usage', frame(i), 'h1.cpu_usage.1.', i);
    if (i % 20 === 0) t.true(await publisher.flush(10_000));
  }
  t.true(await publisher.flush(10_000));
  t.is(publisher.stats.published, 400);
  // 1024 acked items (and their bytes) stayed before: 400 here
  t.true(publisher.held <= 40, `${publisher.held} items held`);
});

test.serial("a bundle above the stream's max_msg_size goes again a frame a message, counted once, with a buffer so small that queuing its frames evicts", async (t) => {
  const server = await startTestNats();
  const { nc, publisher } = await setup(server, 1400);
  t.teardown(async () => {
    await publisher.close();
    await nc.close();
    await server.dispose();
  });
  const jsm = await jetstreamManager(nc);
  const info = await jsm.streams.info('REZOLUS');
  await jsm.streams.update('REZOLUS', { ...info.config, max_msg_size: 300 });
  const subject = 'rezolus.metrics.h1._bundle';
  publisher.publishBundle(subject, encodeBundle([1, 2, 3, 4].map((i) => frame(i).subarray(0, 100))), 'h1._bundle.1.', 1, 4);
  publisher.publishBundle(subject, encodeBundle([frame(5).subarray(0, 50)]), 'h1._bundle.1.', 2, 1);
  publisher.publishBundle(subject, encodeBundle([frame(6).subarray(0, 50)]), 'h1._bundle.1.', 3, 1);
  t.true(await publisher.flush(10_000));
  const s = publisher.stats;
  t.is(s.buffered, 0, 'nothing left, and never below nothing');
  t.is(s.bufferedBytes, 0);
  t.is(s.published + s.dropped, 6, `every frame published or dropped once: ${JSON.stringify(s)}`);
});
