import test from 'ava';
import { Worker } from 'node:worker_threads';
import { H2_BUCKETS } from '../../src/metrics/histogram.js';
import { loadNative } from '../../src/native/index.js';
import { liveSlots } from '../../src/samplers/kernel/per-cgroup.js';
import { totalCount } from '../../src/metrics/histogram.js';
import { CounterBankView, HistogramView, PackedView } from '../../src/samplers/kernel/views.js';
import { OldCounterBankView, OldHistogramView, OldPackedView, oldLiveSlots, oldTouched } from '../helpers/kernel-views-old.js';
import { prng } from '../helpers/prng.js';

// The native-scan readers of mmapped maps against the JS readers they
// replaced (test/helpers/kernel-views-old.ts), on buffers of random sparse
// contents with values at the edges: near 2^32 (where the old reader re-read
// for a carry), around 2^53 (where a count clamps and a packed word becomes a
// bigint) and up to 2^64 - 1.

const EDGES: bigint[] = [
  1n, 2n, 0xffff_0000n, 0xffff_0001n, 0xffff_ffffn, 0x1_0000_0000n, 0x1_0000_0001n, 0x1_ffff_ffffn,
  (1n << 53n) - 1n, 1n << 53n, (1n << 53n) + 1n, (1n << 53n) + 3n, 1n << 63n, (1n << 64n) - 1n,
];

/** A u64 array of `words`, about `density` of them non-zero: small counts, large ones and the edges. */
function randomWords(rand: () => number, words: number, density: number): BigUint64Array<ArrayBuffer> {
  const w = new BigUint64Array(new ArrayBuffer(words * 8));
  for (let i = 0; i < words; i++) {
    if (rand() >= density) continue;
    const pick = rand();
    if (pick < 0.5) w[i] = BigInt(1 + Math.floor(rand() * 1000));
    else if (pick < 0.8) w[i] = BigInt(Math.floor(rand() * 2 ** 32)) * BigInt(Math.floor(rand() * 2 ** 21)) + 1n;
    else w[i] = EDGES[Math.floor(rand() * EDGES.length)]!;
  }
  return w;
}

test('HistogramView.read equals the old reader on random sparse histograms with edge values', (t) => {
  const rand = prng(19);
  let nonZero = 0;
  let clamped = 0;
  for (let round = 0; round < 200; round++) {
    const count = 1 + (round % 4);
    const density = [0, 0.01, 0.05, 0.2, 0.6, 1][round % 6]!;
    const words = randomWords(rand, count * H2_BUCKETS, density);
    for (let k = 0; k < count; k++) {
      const want = new OldHistogramView(words.buffer, k).read();
      const view = new HistogramView(words.buffer, k);
      const got = view.read();
      t.deepEqual(got, want);
      t.is(view.total, totalCount(want), 'the total read beside it');
      nonZero += want.index.length;
      clamped += want.count.filter((c) => c === Number.MAX_SAFE_INTEGER).length;
    }
  }
  // the contents did reach every case
  t.true(nonZero > 50_000, `${nonZero} non-zero buckets`);
  t.true(clamped > 500, `${clamped} clamped buckets`);
});

test('HistogramView.read: the last bucket, a full histogram and an empty one', (t) => {
  const words = new BigUint64Array(new ArrayBuffer(2 * H2_BUCKETS * 8));
  words[H2_BUCKETS - 1] = (1n << 64n) - 1n;
  for (let i = H2_BUCKETS; i < 2 * H2_BUCKETS; i++) words[i] = BigInt(i);
  const first = new HistogramView(words.buffer, 0).read();
  t.deepEqual(first.index, [H2_BUCKETS - 1]);
  t.deepEqual(first.count, [Number.MAX_SAFE_INTEGER]);
  const second = new HistogramView(words.buffer, 1).read();
  t.is(second.index.length, H2_BUCKETS);
  t.is(second.count[H2_BUCKETS - 1], 2 * H2_BUCKETS - 1);
  t.deepEqual(second, new OldHistogramView(words.buffer, 1).read());
  t.deepEqual(new HistogramView(new ArrayBuffer(H2_BUCKETS * 8)).read().index, []);
});

test('PackedView.nonZero and liveSlots equal the old per-slot reads, bigints past 2^53 included', (t) => {
  const rand = prng(4096);
  const slots = 4096;
  let live = 0;
  let bigInodes = 0;
  for (let round = 0; round < 40; round++) {
    const width = 1 + (round % 3) * 4;
    const inodes = randomWords(rand, slots, [0.002, 0.02, 0.3, 1][round % 4]!);
    const counters = randomWords(rand, slots * width, 0.5);
    const want = oldLiveSlots(new OldPackedView(counters.buffer, slots * width), new OldPackedView(inodes.buffer, slots), width, slots);
    const got = liveSlots(new PackedView(counters.buffer, slots * width), new PackedView(inodes.buffer, slots), width, slots);
    t.deepEqual(got, want);
    const packed = new PackedView(inodes.buffer, slots).nonZero();
    const old = new OldPackedView(inodes.buffer, slots);
    const ids = [...Array(slots).keys()].filter((i) => old.get(i) !== 0);
    t.deepEqual(packed.index, ids);
    t.deepEqual(packed.value, ids.map((i) => old.get(i)));
    live += want.length;
    bigInodes += packed.value.filter((v) => typeof v === 'bigint').length;
  }
  t.true(live > 5000, `${live} live slots`);
  t.true(bigInodes > 100, `${bigInodes} inodes past 2^53`);
});

test('liveSlots stops at `slots` and skips slots whose counters are all zero', (t) => {
  const inodes = new BigUint64Array(new ArrayBuffer(16 * 8));
  const counters = new BigUint64Array(new ArrayBuffer(32 * 8));
  inodes[1] = 7n;
  inodes[3] = 9n;
  inodes[12] = 11n;
  counters[2] = 5n; // slot 1, counter 0
  counters[24] = 6n; // slot 12: past `slots`
  const got = liveSlots(new PackedView(counters.buffer, 32), new PackedView(inodes.buffer, 16), 2, 8);
  t.deepEqual(got, [{ id: 1, inode: 7, values: [5, 0] }]);
});

test('liveSlots of striped counters sums each slot\'s copies (CPU c adds to copy c % stripes), past 2^53 as bigints', (t) => {
  const stripes = 3;
  const width = 2;
  const slots = 4;
  const inodes = new BigUint64Array(slots);
  const counters = new BigUint64Array(slots * stripes * width);
  const at = (id: number, copy: number, k: number): number => (id * stripes + copy) * width + k;
  inodes[0] = 5n;
  inodes[2] = 6n;
  inodes[3] = 8n;
  counters[at(0, 0, 0)] = 1n;
  counters[at(0, 1, 0)] = 10n;
  counters[at(0, 2, 1)] = 100n;
  counters[at(1, 0, 0)] = 99n; // slot 1 has no cgroup (inode 0)
  counters[at(2, 2, 1)] = 2n ** 53n;
  counters[at(2, 1, 1)] = 1n; // the sum passes 2^53: a bigint
  // slot 3 is all zeros in every copy: left out
  const got = liveSlots(new PackedView(counters.buffer, counters.length), new PackedView(inodes.buffer, slots), width, slots, stripes);
  t.deepEqual(got, [
    { id: 0, inode: 5, values: [11, 100] },
    { id: 2, inode: 6, values: [0, 2n ** 53n + 1n] },
  ]);
  // on a host of 2 CPUs only copies 0 and 1 are written: copy 2 is not read
  t.deepEqual(liveSlots(new PackedView(counters.buffer, counters.length), new PackedView(inodes.buffer, slots), width, slots, stripes, 2), [
    { id: 0, inode: 5, values: [11, 0] },
    { id: 2, inode: 6, values: [0, 1] },
  ]);
  // read as one copy per slot, the same words are another layout: copies are not summed
  t.notDeepEqual(liveSlots(new PackedView(counters.buffer, counters.length), new PackedView(inodes.buffer, slots), width, slots), got);
});

test('CounterBankView.touched equals the old search for slots whose total is not zero', (t) => {
  const rand = prng(256);
  let touched = 0;
  for (let round = 0; round < 60; round++) {
    const cpus = 1 + (round % 8);
    const width = round % 2 === 0 ? 256 : 10;
    const words = randomWords(rand, cpus * width, [0, 0.001, 0.01, 0.1, 0.5][round % 5]!);
    const got = new CounterBankView(words.buffer, width, cpus).touched();
    t.deepEqual(got, oldTouched(new OldCounterBankView(words.buffer, width, cpus), 0, width - 1));
    touched += got.length;
  }
  t.true(touched > 1000, `${touched} slots touched`);
  // a slot counted on the last CPU only
  const bank = new BigUint64Array(new ArrayBuffer(3 * 4 * 8));
  bank[2 * 4 + 3] = 1n;
  t.deepEqual(new CounterBankView(bank.buffer, 4, 3).touched(), [3]);
});

test('scanU64 stops when its outputs are full and refuses other array types', (t) => {
  const native = loadNative();
  const src = new BigUint64Array([0n, 1n, 2n, 3n, 4n]);
  const index = new Uint32Array(2);
  const value = new Float64Array(8);
  t.is(native.scanU64(src, index, value), 2);
  t.deepEqual([...index], [1, 2]);
  t.deepEqual([...value.subarray(0, 2)], [1, 2]);
  t.throws(() => native.scanU64(new Uint32Array(4) as unknown as BigUint64Array, index, value), { instanceOf: TypeError });
});

test('scanU64 finds every non-zero word at every length and position, outputs full or not', (t) => {
  const native = loadNative();
  let seed = 7;
  const random = (): number => {
    seed = (seed * 1103515245 + 12345) % 2 ** 31;
    return seed / 2 ** 31;
  };
  let cases = 0;
  for (let length = 0; length <= 21; length++) {
    for (let round = 0; round < 40; round++) {
      const src = new BigUint64Array(length);
      for (let i = 0; i < length; i++) if (random() < 0.3) src[i] = random() < 0.1 ? 2n ** 64n - 1n : BigInt(1 + Math.floor(random() * 1000));
      const want = [...src.entries()].filter(([, v]) => v !== 0n);
      const roomFor = Math.floor(random() * (want.length + 2));
      const index = new Uint32Array(roomFor);
      const value = new Float64Array(roomFor + 3);
      const n = native.scanU64(src, index, value);
      const expect = want.slice(0, roomFor);
      t.is(n, expect.length);
      t.deepEqual([...index.subarray(0, n)], expect.map(([i]) => i));
      t.deepEqual([...value.subarray(0, n)], expect.map(([, v]) => Number(v)));
      cases++;
    }
  }
  t.is(cases, 22 * 40);
});

// A word the kernel adds to while it is read: another thread walks a counter
// across 2^32 again and again; no read may see the high half of one side of
// the carry with the low half of the other (2^32 off).
test('a counter read while another thread carries it across 2^32 is never torn', async (t) => {
  const shared = new SharedArrayBuffer(H2_BUCKETS * 8);
  const words = new BigInt64Array(shared);
  const base = 0x1_0000_0000n - 64n;
  const code = `
    const { workerData } = require('node:worker_threads');
    const w = new BigInt64Array(workerData.shared);
    const flag = new Int32Array(workerData.stop);
    while (Atomics.load(flag, 0) === 0) {
      Atomics.store(w, 7, ${base}n);
      for (let i = 0; i < 128; i++) Atomics.add(w, 7, 1n);
    }`;
  const stop = new SharedArrayBuffer(4);
  const worker = new Worker(code, { eval: true, workerData: { shared, stop } });
  try {
    while (Atomics.load(words, 7) === 0n) await new Promise((r) => setTimeout(r, 1));
    const view = new HistogramView(shared as unknown as ArrayBuffer, 0);
    const lo = Number(base);
    const hi = Number(base + 128n);
    let outside = 0;
    let above = 0;
    for (let i = 0; i < 200_000; i++) {
      const { index, count } = view.read();
      const c = count[0]!;
      if (index.length !== 1 || index[0] !== 7 || c < lo || c > hi) outside++;
      if (c >= 2 ** 32) above++;
    }
    t.is(outside, 0);
    t.log(`${above} of 200000 reads past the carry`);
  } finally {
    Atomics.store(new Int32Array(stop), 0, 1);
    await worker.terminate();
  }
});
