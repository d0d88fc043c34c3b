import test from 'ava';
import { jetstreamManager } from '@nats-io/jetstream';
import { connectBus } from '../../src/bus/connect.js';
import { DescriptorCache } from '../../src/sources/descriptors.js';
import { descriptorBucket } from '../../src/bus/kv.js';
import { FrameIntake } from '../../src/sources/intake.js';
import { emptySkipStats } from '../../src/sources/checks.js';
import { encodeFrame } from '../../src/frame/codec.js';
import { hashDescriptorJson } from '../../src/frame/descriptor.js';
import { silentLogger } from '../../src/log/logger.js';
import { startTestNats } from '../helpers/nats.js';

/** A cgroup sampler's descriptor with these cgroups (a short-lived cgroup flips it and back). */
function descriptorJson(cgroups: readonly string[]): string {
  return JSON.stringify({
    v: 1,
    sampler: 'cgroup_cpu',
    metrics: { cgroup_cpu_usage: { kind: 'counter', unit: 'nanoseconds', labels: ['cgroup'], description: 'CPU time of the cgroup' } },
    series: cgroups.map((c) => ['cgroup_cpu_usage', [c]]),
  });
}

test('live frames are used in arrival order: one waiting for its descriptor is not overtaken and dropped as out of order', async (t) => {
  const server = await startTestNats();
  const log = silentLogger();
  const nc = await connectBus({ url: server.url, name: 'test', log });
  try {
    await jetstreamManager(nc);
    const kv = await descriptorBucket(nc, { ttlMs: 3_600_000, replicas: 1 });
    const d1 = descriptorJson(['a']);
    const d2 = descriptorJson(['a', 'job-17']);
    const h1 = hashDescriptorJson(d1);
    const h2 = hashDescriptorJson(d2);
    await kv.put(h1, d1);
    await kv.put(h2, d2);
    const cache = new DescriptorCache(kv, log);
    t.not(await cache.resolve(h1, 'h'), undefined, 'D1 is cached from earlier frames; D2 is not');
    const used: number[] = [];
    const skipped = emptySkipStats();
    const intake = new FrameIntake(cache, skipped, (f) => void used.push(f.seq), log);
    const sub = nc.subscribe('rezolus.metrics.h.>', { callback: (_e, m) => void intake.take(m.subject, m.data) });
    const frame = (seq: number, hash: string, n: number): Uint8Array =>
      encodeFrame({ host: 'h', sampler: 'cgroup_cpu', instance: 7, seq, beginNs: BigInt(seq), endNs: BigInt(seq) + 1n, descriptor: hash }, new Array<number>(n).fill(seq));
    // back to back, as after an outage: 11 needs a bucket read, 12 and 13 do not
    for (const [seq, hash, n] of [[10, h1, 1], [11, h2, 2], [12, h1, 1], [13, h1, 1]] as const) nc.publish('rezolus.metrics.h.cgroup_cpu', frame(seq, hash, n));
    await nc.flush();
    for (let i = 0; i < 50 && used.length < 4; i++) await new Promise((r) => setTimeout(r, 20));
    t.deepEqual(used, [10, 11, 12, 13]);
    t.deepEqual(skipped, emptySkipStats());
    sub.unsubscribe();
  } finally {
    await nc.close();
    await server.dispose();
  }
});
