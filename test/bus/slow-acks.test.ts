/**
 * A server that acks more slowly than the configured timeout (an overloaded
 * JetStream). A responder on a subject no stream captures stands in for it:
 * it answers every publish with a JetStream pub-ack, `delayMs` late.
 */
import test from 'ava';
import type { NatsConnection } from '@nats-io/nats-core';
import { AckedPublisher } from '../../src/bus/acks.js';
import { connectBus } from '../../src/bus/connect.js';
import { descriptorBucket } from '../../src/bus/kv.js';
import { Publisher } from '../../src/bus/publisher.js';
import { silentLogger } from '../../src/log/logger.js';
import { startTestNats, type TestNats } from '../helpers/nats.js';

let server: TestNats;
test.before(async () => {
  server = await startTestNats();
});
test.after.always(async () => {
  await server?.dispose();
});

/** Acks every message on `subject` after delayMs; counts deliveries per Nats-Msg-Id. */
function slowAcker(nc: NatsConnection, subject: string, delayMs: number): Map<string, number> {
  const seen = new Map<string, number>();
  let seq = 0;
  nc.subscribe(subject, {
    callback: (_e, msg) => {
      const id = msg.headers?.get('Nats-Msg-Id') ?? '';
      const first = !seen.has(id);
      seen.set(id, (seen.get(id) ?? 0) + 1);
      const ack = { stream: 'SLOW', seq: first ? ++seq : seq, duplicate: !first };
      setTimeout(() => msg.respond(JSON.stringify(ack)), delayMs);
    },
  });
  return seen;
}

test.serial('an ack later than the timeout raises the timeout, so the next publish waits for it', async (t) => {
  const log = silentLogger();
  const nc = await connectBus({ url: server.url, name: 'slow-acks', log });
  slowAcker(nc, 'slow1.>', 700);
  await nc.flush();
  const acks = new AckedPublisher(nc, 100);
  t.is(acks.timeoutMs, 100);
  await t.throwsAsync(acks.publish('slow1.a', new Uint8Array(8), 'id-1'), { message: /no publish ack within 100 ms/ });
  // the late ack of id-1 arrives ~700 ms after its publish
  await new Promise((r) => setTimeout(r, 1200));
  t.true(acks.timeoutMs > 700, `timeout ${acks.timeoutMs} ms after a 700 ms ack`);
  const ack = await acks.publish('slow1.a', new Uint8Array(8), 'id-2');
  t.false(ack.duplicate);
  acks.close();
  await nc.close();
});

test.serial('a publisher whose server is always slower than its timeout still gets every frame acked, without a retry storm', async (t) => {
  const log = silentLogger();
  const nc = await connectBus({ url: server.url, name: 'slow-publisher', log });
  const seen = slowAcker(nc, 'slow2.>', 600);
  await nc.flush();
  const descriptors = await descriptorBucket(nc, { ttlMs: 3_600_000, replicas: 1 });
  const publisher = new Publisher({ nc, descriptors, host: 'h1', maxBufferBytes: 8 * 1024 * 1024, log, timeoutMs: 150 });
  const N = 40;
  for (let i = 1; i <= N; i++) {
    publisher.publishFrame('slow2.h1.cpu', new Uint8Array(32), 'h1.cpu.1.', i);
    if (i % 10 === 0) await new Promise((r) => setTimeout(r, 200));
  }
  // With a fixed 150 ms timeout every attempt times out before its 600 ms ack: the buffer never drains.
  t.true(await publisher.flush(30_000), `buffer drained (retries ${publisher.stats.retries})`);
  t.is(publisher.stats.published - publisher.stats.duplicates, N, "each frame stored once (a late ack and a later attempt's duplicate ack both counted)");
  t.is(seen.size, N, 'every frame reached the server');
  const deliveries = [...seen.values()].reduce((a, b) => a + b, 0);
  t.true(deliveries <= 2 * N, `${deliveries} deliveries for ${N} frames`);
  await publisher.close();
  await nc.close();
});

test.serial('a publish in flight when the server dies fails at once, not after the (long) timeout', async (t) => {
  const own = await startTestNats();
  const log = silentLogger();
  const nc = await connectBus({ url: own.url, name: 'dies', log });
  try {
    // a 60 s timeout, as the adaptive one can be after a slow spell; a subscriber takes the publish and never answers
    nc.subscribe('nobody.>', { callback: () => {} });
    const acks = new AckedPublisher(nc, 60_000);
    const sent = Date.now();
    const p = acks.publish('nobody.a', new Uint8Array(8), 'dies-1');
    await nc.flush();
    own.process.kill('SIGKILL');
    await t.throwsAsync(p, { message: /disconnected from NATS before the publish ack/ });
    t.true(Date.now() - sent < 50_000, `failed after ${Date.now() - sent} ms`);
    acks.close();
  } finally {
    await nc.close().catch(() => {});
    await own.dispose().catch(() => {});
  }
});

test.serial('frames whose ack comes late are not sent again: a slow server gets each frame about once', async (t) => {
  const log = silentLogger();
  const nc = await connectBus({ url: server.url, name: 'late-acks', log });
  const seen = slowAcker(nc, 'slow3.>', 500);
  await nc.flush();
  const descriptors = await descriptorBucket(nc, { ttlMs: 3_600_000, replicas: 1 });
  const publisher = new Publisher({ nc, descriptors, host: 'h1', maxBufferBytes: 8 * 1024 * 1024, log, timeoutMs: 150 });
  const N = 30;
  // one tick's worth at once: every one of them times out before its 500 ms ack
  for (let i = 1; i <= N; i++) publisher.publishFrame('slow3.h1.cpu', new Uint8Array(32), 'h1.cpu.1.', i);
  t.true(await publisher.flush(30_000), 'buffer drained');
  t.is(seen.size, N);
  const deliveries = [...seen.values()].reduce((a, b) => a + b, 0);
  // the oldest is sent again alone to probe the server; the late acks of the rest mark them stored
  t.true(deliveries <= N + 3, `${deliveries} deliveries for ${N} frames (retries ${publisher.stats.retries})`);
  t.is(publisher.stats.published - publisher.stats.duplicates, N);
  t.is(publisher.stats.buffered, 0);
  await publisher.close();
  await nc.close();
});

test.serial('a publish after close() fails at once (no sweep would ever time it out); one before it is rejected by close', async (t) => {
  const log = silentLogger();
  const nc = await connectBus({ url: server.url, name: 'closed-acks', log });
  // a subject nobody answers: no stream, no responder
  const acks = new AckedPublisher(nc, 60_000);
  const before = acks.publish('silent.a', new Uint8Array(8), 'id-before');
  acks.close();
  await t.throwsAsync(before, { message: /publisher closed/ });
  await t.throwsAsync(acks.publish('silent.b', new Uint8Array(8), 'id-after'), { message: /publisher closed/ });
  await nc.close();
});

test.serial('a wall clock stepped back does not hold off a timeout: deadlines are on the monotonic clock', async (t) => {
  const log = silentLogger();
  const nc = await connectBus({ url: server.url, name: 'clock-step', log });
  // a responder that never answers: the publish can only end by its timeout
  nc.subscribe('mute.>', { callback: () => {} });
  await nc.flush();
  const acks = new AckedPublisher(nc, 300);
  const realNow = Date.now;
  const sent = performance.now();
  const p = acks.publish('mute.a', new Uint8Array(8), 'id-step');
  Date.now = () => realNow() - 60_000; // an NTP step of one minute back
  try {
    await t.throwsAsync(p, { message: /no publish ack within 300 ms/ });
  } finally {
    Date.now = realNow;
  }
  const took = performance.now() - sent;
  t.true(took < 1500, `timed out after ${Math.round(took)} ms`);
  acks.close();
  await nc.close();
});
