/**
 * stop() and done of the sources against the FrameSource contract
 * (source.ts): no frame is handed to the handler once `done` has resolved;
 * `done` resolves when the source has ended, and nothing it started runs on
 * unwatched or holds a connection. Descriptor lookups and the bucket's open
 * are slowed or gated (the link's descriptors() is wrapped) only to make the
 * timing deterministic. (Found by a review of the FrameSource refactor.)
 */
import test from 'ava';
import { jetstream, jetstreamManager } from '@nats-io/jetstream';
import { descriptorBucket } from '../../src/bus/kv.js';
import { ensureStream } from '../../src/bus/stream.js';
import type { Descriptor } from '../../src/frame/types.js';
import { silentLogger } from '../../src/log/logger.js';
import type { DescriptorLookup } from '../../src/sources/checks.js';
import { BusLink } from '../../src/sources/link.js';
import { LiveSource } from '../../src/sources/live.js';
import { ReplaySource } from '../../src/sources/replay.js';
import { connectBus } from '../../src/bus/connect.js';
import { startTestNats, type TestNats } from '../helpers/nats.js';
import { DESCRIPTOR, frameOf } from './frames.js';

const sleep = (ms: number): Promise<void> => new Promise((r) => setTimeout(r, ms));

async function provisioned(server: TestNats): Promise<BusLink> {
  const log = silentLogger();
  const link = await BusLink.open({ url: server.url, name: 'review', waitOnFirstConnect: false }, log);
  await ensureStream(await jetstreamManager(link.nc), { name: 'REZOLUS', maxAgeMs: 600_000, maxBytes: 64 << 20, maxMsgsPerSubject: 10_000, duplicateWindowMs: 60_000, replicas: 1 }, log);
  const kv = await descriptorBucket(link.nc, { ttlMs: 3_600_000, replicas: 1 });
  await kv.put(`h1.${DESCRIPTOR.hash}`, DESCRIPTOR.json);
  return link;
}

/** The link's descriptor lookups, each `ms` slower and never from the cache at once. */
function slowLookups(link: BusLink, ms: number): void {
  const original = link.descriptors.bind(link);
  Object.assign(link, {
    descriptors: async (...args: Parameters<BusLink['descriptors']>) => {
      const inner = await original(...args);
      if (inner === undefined) return undefined;
      const slow: DescriptorLookup = {
        peek: () => undefined,
        resolve: async (hash: string, host: string): Promise<Descriptor | undefined> => {
          await sleep(ms);
          return inner.resolve(hash, host);
        },
      };
      return slow;
    },
  });
}

test.serial('LiveSource: a frame whose lookup is running when stop() comes is not handed over after done', async (t) => {
  const server = await startTestNats();
  const link = await provisioned(server);
  try {
    slowLookups(link, 300);
    const source = new LiveSource({ bus: link, hosts: '*' }, silentLogger());
    let doneResolved = false;
    const handedAfterDone: number[] = [];
    await source.start((f) => {
      if (doneResolved) handedAfterDone.push(f.seq);
    });
    const f = frameOf('h1', 1);
    link.nc.publish(f.subject, f.data);
    await link.nc.flush();
    await sleep(50); // the message is in, its lookup runs
    source.stop();
    await source.done;
    doneResolved = true;
    await sleep(500);
    t.deepEqual(handedAfterDone, [], 'frames handed to the handler after done resolved');
  } finally {
    await link.close();
    await server.dispose();
  }
});

test.serial('ReplaySource: stop() during start() resolves done only once start() has ended, and leaves no read running and no unhandled rejection', async (t) => {
  const server = await startTestNats();
  const link = await provisioned(server);
  const unhandled: unknown[] = [];
  const onUnhandled = (reason: unknown): void => void unhandled.push(reason);
  process.on('unhandledRejection', onUnhandled);
  try {
    const f = frameOf('h1', 1);
    await jetstream(link.nc).publish(f.subject, f.data);
    // the background read fails: the stream is gone by the time it makes its consumer
    // (any failure of that read would do: a consumer create that times out 5 times, a closed connection)
    const original = link.descriptors.bind(link);
    Object.assign(link, {
      descriptors: async (...args: Parameters<BusLink['descriptors']>) => {
        const cache = await original(...args);
        await (await jetstreamManager(link.nc)).streams.delete('REZOLUS');
        return cache;
      },
    });
    const nowNs = BigInt(Date.now()) * 1_000_000n;
    const source = new ReplaySource({ bus: link, stream: 'REZOLUS', hosts: '*', sinceNs: nowNs - 10_000_000_000n, untilNs: nowNs }, silentLogger());
    const order: string[] = [];
    const started = source.start(() => undefined).then(() => order.push('start() resolved'), (e: unknown) => order.push(`start() rejected: ${String(e)}`));
    source.stop();
    await source.done;
    order.push('done resolved');
    await started;
    await sleep(1000);
    t.log(order.join(' -> '));
    t.log(`unhandled: ${unhandled.map(String).join('; ')}`);
    t.deepEqual(order, ['start() resolved', 'done resolved'], 'done resolves after the source has ended');
    t.deepEqual(unhandled.map(String), [], 'no unhandled rejection');
  } finally {
    process.off('unhandledRejection', onUnhandled);
    await link.close();
    await server.dispose();
  }
});

async function provision(url: string): Promise<void> {
  const log = silentLogger();
  const nc = await connectBus({ url, name: 'admin', log });
  await ensureStream(await jetstreamManager(nc), { name: 'REZOLUS', maxAgeMs: 600_000, maxBytes: 64 << 20, maxMsgsPerSubject: 10_000, duplicateWindowMs: 60_000, replicas: 1 }, log);
  const kv = await descriptorBucket(nc, { ttlMs: 3_600_000, replicas: 1 });
  await kv.put(`h1.${DESCRIPTOR.hash}`, DESCRIPTOR.json);
  await nc.close();
}

test.serial('LiveSource: stop() while the bucket open is in flight (it then succeeds): nothing is followed after done', async (t) => {
  const server = await startTestNats();
  await provision(server.url);
  const log = silentLogger();
  const link = await BusLink.open({ url: server.url, name: 'exporter-like', waitOnFirstConnect: true }, log);
  try {
    // the bucket's open answers only after stop() (a gate, to fix the timing)
    let open!: () => void;
    const gate = new Promise<void>((r) => (open = r));
    const original = link.descriptors.bind(link);
    Object.assign(link, {
      descriptors: async (...args: Parameters<typeof original>) => {
        const cache = await original(...args);
        await gate;
        return cache;
      },
    });
    const handed: number[] = [];
    const source = new LiveSource({ bus: link, hosts: '*', waitForBucket: true }, log);
    const started = source.start((f) => void handed.push(f.seq));
    await sleep(100);
    source.stop();
    await source.done;
    open();
    await started;
    const f = frameOf('h1', 1);
    link.nc.publish(f.subject, f.data);
    await link.nc.flush();
    await sleep(300);
    t.false(source.following, 'subscribed after stop()');
    t.deepEqual(handed, [], 'frames handed after stop() and done');
  } finally {
    await link.close();
    await server.dispose();
  }
});

test.serial('LiveSource: stop() while a source opens its own connection: the connection is closed', async (t) => {
  const server = await startTestNats();
  await provision(server.url);
  const log = silentLogger();
  const opened: BusLink[] = [];
  const open = BusLink.open.bind(BusLink);
  Object.assign(BusLink, {
    open: async (...args: Parameters<typeof open>) => {
      const l = await open(...args);
      opened.push(l);
      return l;
    },
  });
  try {
    const source = new LiveSource({ bus: { url: server.url, name: 'own', waitOnFirstConnect: false }, hosts: '*' }, log);
    const started = source.start(() => undefined);
    source.stop();
    await source.done;
    await started.catch(() => undefined);
    await sleep(500);
    t.is(opened.length, 1);
    t.true(opened[0]?.nc.isClosed() ?? false, 'the source\'s own connection is closed (a process using it can exit)');
  } finally {
    Object.assign(BusLink, { open });
    for (const l of opened) await l.nc.close().catch(() => undefined);
    await server.dispose();
  }
});
