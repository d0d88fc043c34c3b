/**
 * A bundle (the frames of one tick in one message) is taken frame by frame,
 * each checked as if it had come alone on its sampler's subject of the
 * bundle's host: what a consumer gets is the same frames, the same bytes.
 */
import test from 'ava';
import { bundleSubject, metricsSubject } from '../../src/bus/subjects.js';
import { encodeBundle } from '../../src/frame/bundle.js';
import { encodeFrame } from '../../src/frame/codec.js';
import { describe, type EncodedDescriptor } from '../../src/frame/descriptor.js';
import type { Descriptor, Frame } from '../../src/frame/types.js';
import { silentLogger } from '../../src/log/logger.js';
import { NO_LABELS } from '../../src/metrics/point.js';
import { emptySkipStats, type DescriptorLookup } from '../../src/sources/checks.js';
import { FrameIntake } from '../../src/sources/intake.js';

const D: Record<string, EncodedDescriptor> = Object.fromEntries(
  ['cpu_usage', 'memory_meminfo', 'network_traffic'].map((s) => [s, describe(s, [{ metric: { name: `${s}_x`, kind: 'gauge', unit: 'count', labels: [], description: 'x' }, labels: NO_LABELS, value: 0 }])]),
);

/** Descriptors by hash; `slow` ones answer only after a turn of the event loop (a bucket read). */
function lookup(slow: ReadonlySet<string> = new Set()): DescriptorLookup {
  const byHash = new Map<string, Descriptor>(Object.values(D).map((d) => [d.hash, JSON.parse(d.json) as Descriptor]));
  return {
    peek: (hash) => (slow.has(hash) ? undefined : byHash.get(hash)),
    resolve: async (hash) => {
      await new Promise((r) => setImmediate(r));
      return byHash.get(hash);
    },
  };
}

function frame(host: string, sampler: string, seq: number): Uint8Array {
  const ns = BigInt(seq) * 1_000_000_000n;
  return encodeFrame({ host, sampler, instance: 5, seq, beginNs: ns, endNs: ns + 1n, descriptor: (D[sampler] as EncodedDescriptor).hash }, [seq * 10]);
}

function intakeOf(slow?: ReadonlySet<string>) {
  const used: { frame: Frame; bytes: Uint8Array }[] = [];
  const skipped = emptySkipStats();
  const intake = new FrameIntake(lookup(slow), skipped, (f, bytes) => void used.push({ frame: f, bytes }), silentLogger());
  return { intake, used, skipped };
}

test('every frame of a bundle is handed over with its own bytes, as if it had come alone', async (t) => {
  const { intake, used, skipped } = intakeOf();
  const frames = [frame('web01', 'cpu_usage', 1), frame('web01', 'memory_meminfo', 1), frame('web01', 'network_traffic', 1)];
  const wait = intake.take(bundleSubject('web01'), encodeBundle(frames));
  t.is(wait, undefined, 'descriptors at hand: used at once');
  t.deepEqual(used.map((u) => [u.frame.host, u.frame.sampler, u.frame.seq, u.frame.values[0]]), [
    ['web01', 'cpu_usage', 1, 10],
    ['web01', 'memory_meminfo', 1, 10],
    ['web01', 'network_traffic', 1, 10],
  ]);
  t.true(used.every((u, i) => Buffer.from(u.bytes).equals(frames[i] as Uint8Array)), 'the bytes a recorder keeps are the frame\'s own');
  t.deepEqual(skipped, emptySkipStats());
});

test('a frame naming another host, or not a frame, is counted and left out; the rest of its bundle is used', async (t) => {
  const { intake, used, skipped } = intakeOf();
  const bundle = encodeBundle([frame('web01', 'cpu_usage', 1), frame('db01', 'memory_meminfo', 1), new Uint8Array(40).fill(0xc1), frame('web01', 'network_traffic', 1)]);
  intake.take(bundleSubject('web01'), bundle);
  t.deepEqual(used.map((u) => u.frame.sampler), ['cpu_usage', 'network_traffic']);
  t.is(skipped.wrongSubject, 1);
  t.is(skipped.garbage, 1);
});

test('a bundle that is not an array of bin is garbage once; a bundle on a sampler\'s subject is garbage; a frame on the bundle subject is garbage', (t) => {
  const { intake, used, skipped } = intakeOf();
  intake.take(bundleSubject('web01'), Uint8Array.of(0x92, 0xc4, 0x05, 1));
  t.is(skipped.garbage, 1);
  // an element too short for a frame refuses the whole bundle, its good frames with it
  intake.take(bundleSubject('web01'), encodeBundle([frame('web01', 'cpu_usage', 1), Uint8Array.of(1, 2, 3)]));
  t.is(skipped.garbage, 2);
  intake.take(metricsSubject('web01', 'cpu_usage'), encodeBundle([frame('web01', 'cpu_usage', 1)]));
  t.is(skipped.garbage, 3);
  intake.take(bundleSubject('web01'), frame('web01', 'cpu_usage', 2));
  t.is(skipped.garbage, 4);
  t.is(used.length, 0);
});

test('bundles and frames alone of one host mix: each sampler in seq order, a repeat is out of order', async (t) => {
  const { intake, used, skipped } = intakeOf(new Set([(D.memory_meminfo as EncodedDescriptor).hash]));
  const waits = [
    intake.take(bundleSubject('web01'), encodeBundle([frame('web01', 'cpu_usage', 1), frame('web01', 'memory_meminfo', 1)])),
    intake.take(metricsSubject('web01', 'memory_meminfo'), frame('web01', 'memory_meminfo', 2)),
    intake.take(bundleSubject('web01'), encodeBundle([frame('web01', 'cpu_usage', 2), frame('web01', 'memory_meminfo', 3)])),
    intake.take(bundleSubject('web01'), encodeBundle([frame('web01', 'cpu_usage', 2)])),
  ];
  t.not(waits[0], undefined, 'a bundle with a frame that waits for its descriptor is a promise');
  await Promise.all(waits);
  t.deepEqual(used.filter((u) => u.frame.sampler === 'memory_meminfo').map((u) => u.frame.seq), [1, 2, 3], 'not overtaken while its descriptor was read');
  t.deepEqual(used.filter((u) => u.frame.sampler === 'cpu_usage').map((u) => u.frame.seq), [1, 2]);
  t.is(skipped.outOfOrder, 1);
});
