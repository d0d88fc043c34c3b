/**
 * Hostile input at the decoder: the structural msgpack check, and 100 000
 * generated hostile messages (test/helpers/hostile-frames.ts) through the
 * consumers' own path (frameOnSubject with a descriptor cache): every one is
 * rejected with the reason the generator meant, decodeFrame and resolveFrame
 * throw nothing but FrameDecodeError, and good frames interleaved are all taken.
 */
import test from 'ava';
import type { KV } from '@nats-io/kv';
import { DescriptorCache } from '../../src/sources/descriptors.js';
import { SeqGuard } from '../../src/sources/order.js';
import { metricsSubject } from '../../src/bus/subjects.js';
import { emptySkipStats, frameOnSubject, type SkipStats } from '../../src/sources/checks.js';
import { decodeFrame, encodeFrame, FrameDecodeError, resolveFrame } from '../../src/frame/codec.js';
import { msgpackProblem } from '../../src/frame/msgpack-check.js';
import { silentLogger } from '../../src/log/logger.js';
import { goodValues, HOSTILE_DESCRIPTORS, HostileFrames, TARGET, TARGET_HASH, TARGET_SAMPLER, type HostileReason } from '../helpers/hostile-frames.js';

/** A descriptor bucket holding the generator's descriptors (what the cache reads). */
function fakeBucket(): KV {
  const held = new Map(HOSTILE_DESCRIPTORS.map(([hash, json]) => [hash, json]));
  return {
    get: async (key: string) => {
      const json = held.get(key);
      if (json === undefined) return null;
      const value = new TextEncoder().encode(json);
      return { value, string: () => json };
    },
  } as unknown as KV;
}

const b = (...xs: number[]): Uint8Array => Uint8Array.from(xs);

test('msgpackProblem: declared lengths beyond the message, depth, ext types and trailing bytes', (t) => {
  t.is(msgpackProblem(b(0x81, 0xa1, 0x78, 0x92, 0x01, 0xc0), 8), undefined, '{x: [1, nil]}');
  t.is(msgpackProblem(b(), 8), 'truncated');
  t.is(msgpackProblem(b(0xdd, 0xff, 0xff, 0xff, 0xff, 0x01), 8), 'a declared length runs past the end');
  t.is(msgpackProblem(b(0xdf, 0x00, 0x00, 0x00, 0x02, 0x01, 0x01, 0x01), 8), 'a declared length runs past the end', 'map32 of 2 needs 4 values');
  t.is(msgpackProblem(b(0xdb, 0xff, 0xff, 0xff, 0xff, 0x61), 8), 'truncated', 'str32 of 4 GiB');
  t.is(msgpackProblem(b(0xdc, 0x00), 8), 'truncated', 'array16 header cut short');
  t.is(msgpackProblem(b(0xcb, 0, 0, 0), 8), 'truncated', 'float64 cut short');
  t.is(msgpackProblem(b(0x91, 0x91, 0x91, 0x01), 3), undefined, 'three deep');
  t.is(msgpackProblem(b(0x91, 0x91, 0x91, 0x91, 0x01), 3), 'nested deeper than 3');
  t.is(msgpackProblem(new Uint8Array(1_000_001).fill(0x91), 8), 'nested deeper than 8', 'a million nested arrays: no recursion, no stack overflow');
  t.is(msgpackProblem(b(0xd4, 0x01, 0x00), 8), 'extension type 0xd4');
  t.is(msgpackProblem(b(0xc1), 8), 'byte 0xc1 (never used by msgpack)');
  t.is(msgpackProblem(b(0x01, 0x02), 8), 'bytes after the value');
  t.is(msgpackProblem(b(0x90), 8), undefined, 'an empty array');
});

test('decodeFrame refuses a declared length the bytes cannot hold before msgpack decodes it (the pre-check names it)', (t) => {
  const header = { host: 'h', sampler: TARGET_SAMPLER, instance: 1, seq: 1, beginNs: 1n, endNs: 2n, descriptor: TARGET_HASH };
  const prefix = encodeFrame(header, []).subarray(0, -1);
  const bytes = new Uint8Array(prefix.byteLength + 5);
  bytes.set(prefix);
  bytes.set([0xdd, 0x0f, 0xff, 0xff, 0xff], prefix.byteLength); // x: an array of 268 million values, none sent
  // the message comes from msgpack-check.ts: msgpackr itself would say something else (or try to build the array)
  t.throws(() => decodeFrame(bytes), { instanceOf: FrameDecodeError, message: /declared length/ });
});

test('counters must be non-negative integers; gauges finite; a descriptor of another sampler is refused', (t) => {
  const raw = (x: unknown[]) => decodeFrame(encodeFrame({ host: 'h', sampler: TARGET_SAMPLER, instance: 1, seq: 1, beginNs: 1n, endNs: 2n, descriptor: TARGET_HASH }, x as never));
  t.deepEqual(resolveFrame(raw(goodValues(3)), TARGET).values, goodValues(3));
  t.deepEqual(resolveFrame(raw([2n ** 64n - 1n, 0, -1.5, goodValues(1)[3]]), TARGET).values.slice(0, 3), [2n ** 64n - 1n, 0, -1.5], 'u64 max counter, negative fractional gauge');
  for (const bad of [-1, 1.5, Number.NaN, Number.POSITIVE_INFINITY]) {
    t.throws(() => resolveFrame(raw([bad, 0, 0, goodValues(1)[3]]), TARGET), { instanceOf: FrameDecodeError, message: /value 0 \(fuzz_ops\)/ }, String(bad));
  }
  t.throws(() => resolveFrame(raw([0, 0, Number.NaN, goodValues(1)[3]]), TARGET), { instanceOf: FrameDecodeError, message: /value 2 \(fuzz_level\)/ });
  t.throws(() => resolveFrame(raw(goodValues(1)), { ...TARGET, sampler: 'other' }), { instanceOf: FrameDecodeError, message: /sampler other/ });
  t.throws(() => decodeFrame(encodeFrame({ host: 'h', sampler: 's', instance: 1, seq: 1, beginNs: 3n, endNs: 2n, descriptor: TARGET_HASH }, [])), {
    instanceOf: FrameDecodeError,
    message: /begins after it ends/,
  });
});

test('100 000 hostile messages: each rejected under the reason it was made for, good frames between them all taken', async (t) => {
  const GOOD = 'good-01';
  const gen = new HostileFrames({ seed: 0x7e57_0007, hostileHosts: ['evil-01', 'evil-02', 'evil-03', 'evil-04'], goodHost: GOOD });
  const cache = new DescriptorCache(fakeBucket(), silentLogger());
  const guard = new SeqGuard();
  const skipped = emptySkipStats();
  const wrong: string[] = [];
  const KEY: Record<HostileReason, keyof SkipStats> = { garbage: 'garbage', wrongSubject: 'wrongSubject', unknownDescriptor: 'unknownDescriptor', invalid: 'invalid' };
  let good = 0;
  let taken = 0;
  const t0 = performance.now();
  for (let i = 0; i < 100_000; i++) {
    const msg = gen.next();
    try {
      decodeFrame(msg.data);
    } catch (error) {
      if (!(error instanceof FrameDecodeError)) wrong.push(`${msg.kind}: decodeFrame threw ${String(error)}`);
    }
    const before = skipped[KEY[msg.reason]];
    let frame;
    try {
      frame = await frameOnSubject(msg.subject, msg.data, cache, skipped, guard);
    } catch (error) {
      wrong.push(`${msg.kind}: threw ${String(error)}`);
      continue;
    }
    if (frame !== undefined) wrong.push(`${msg.kind}: taken`);
    else if (skipped[KEY[msg.reason]] !== before + 1) wrong.push(`${msg.kind}: not counted as ${msg.reason} (${JSON.stringify(skipped)})`);
    if (i % 100 === 99) {
      good++;
      const endNs = 1_735_689_600_000_000_000n + BigInt(good) * 100_000_000n;
      const data = encodeFrame({ host: GOOD, sampler: TARGET_SAMPLER, instance: 0x600d, seq: good, beginNs: endNs - 1000n, endNs, descriptor: TARGET_HASH }, goodValues(good));
      const f = await frameOnSubject(metricsSubject(GOOD, TARGET_SAMPLER), data, cache, skipped, guard);
      if (f !== undefined && f.seq === good) {
        t.deepEqual(f.values, goodValues(good));
        taken++;
      }
    }
  }
  const ms = performance.now() - t0;
  t.log(`100k hostile + ${good} good in ${ms.toFixed(0)} ms; by reason ${JSON.stringify(gen.sent)}`);
  t.log(`by kind ${JSON.stringify(Object.fromEntries(gen.byKind))}`);
  t.deepEqual(wrong.slice(0, 20), [], `${wrong.length} messages handled wrongly`);
  t.deepEqual(skipped, { ...gen.sent, outOfOrder: 0 });
  t.is(taken, 1000);
  t.true([...gen.byKind.values()].every((n) => n > 4000), 'every kind is well represented');
});
