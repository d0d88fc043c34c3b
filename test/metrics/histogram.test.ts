import test from 'ava';
import {
  DEFAULT_PERCENTILES,
  GROUPING_POWER,
  MAX_VALUE_POWER,
  bucketCount,
  downsample,
  fromDense,
  fromValues,
  indexToRange,
  isValidSparse,
  percentiles,
  subtract,
  toDense,
  totalCount,
  valueToIndex,
} from '../../src/metrics/histogram.js';
import type { SparseHistogram } from '../../src/metrics/histogram.js';

const U64_MAX = (1n << 64n) - 1n;
const pow2 = (k: number): bigint => 1n << BigInt(k);

/** Sparse histogram literal with the default config. */
const sparse = (index: number[], count: number[], g = 3, m = 64): SparseHistogram => ({
  groupingPower: g,
  maxValuePower: m,
  index,
  count,
});

test('constants', (t) => {
  t.is(GROUPING_POWER, 3);
  t.is(MAX_VALUE_POWER, 64);
  t.deepEqual([...DEFAULT_PERCENTILES], [0.5, 0.9, 0.99, 0.999, 0.9999]);
});

test('bucketCount for g = 0..7, m = 64', (t) => {
  const expected = [65, 128, 252, 496, 976, 1920, 3776, 7424];
  t.deepEqual(
    expected.map((_, g) => bucketCount(g, 64)),
    expected,
  );
  t.is(bucketCount(0, 1), 2);
  t.is(bucketCount(2, 10), 36);
});

test('bucketCount rejects invalid configs', (t) => {
  for (const [g, m] of [
    [-1, 64],
    [3, 65],
    [3, 3],
    [4, 3],
    [1.5, 64],
    [3, Number.NaN],
    [60, 64],
  ] as const) {
    const err = t.throws(() => bucketCount(g, m), { instanceOf: RangeError });
    t.true(err?.message.includes(String(g)), err?.message);
  }
});

test('valueToIndex: exact region 0..15 and first groups for g=3', (t) => {
  for (let v = 0; v < 16; v++) t.is(valueToIndex(v), v);
  t.is(valueToIndex(16), 16);
  t.is(valueToIndex(17), 16);
  t.is(valueToIndex(18), 17);
  t.is(valueToIndex(31), 23);
  t.is(valueToIndex(32), 24);
  t.is(valueToIndex(35), 24);
  t.is(valueToIndex(36), 25);
  t.is(valueToIndex(63), 31);
  t.is(valueToIndex(64), 32);
  t.is(valueToIndex(1000), 63);
  t.deepEqual(indexToRange(63), { lower: 960n, upper: 1023n });
  t.deepEqual(indexToRange(15), { lower: 15n, upper: 15n });
  t.deepEqual(indexToRange(16), { lower: 16n, upper: 17n });
  t.deepEqual(indexToRange(0), { lower: 0n, upper: 0n });
});

test('valueToIndex: every power-of-two boundary for g=3', (t) => {
  for (let k = 4; k <= 63; k++) {
    // 2^k starts group k−3 (first bucket index (k−2)·8); 2^k − 1 ends the previous group.
    const first = (k - 2) * 8;
    t.is(valueToIndex(pow2(k)), first, `2^${k}`);
    t.is(valueToIndex(pow2(k) - 1n), first - 1, `2^${k} - 1`);
    if (k < 53) {
      t.is(valueToIndex(2 ** k), first, `number 2^${k}`);
      t.is(valueToIndex(2 ** k - 1), first - 1, `number 2^${k} - 1`);
    }
    t.is(indexToRange(first).lower, pow2(k));
    t.is(indexToRange(first - 1).upper, pow2(k) - 1n);
  }
  t.is(valueToIndex(pow2(63)), 488);
  t.is(valueToIndex(2 ** 63), 488); // an exact double above 2^53 is accepted
  t.is(valueToIndex(U64_MAX), 495);
  t.deepEqual(indexToRange(495), { lower: pow2(63) + 7n * pow2(60), upper: U64_MAX });
});

test('valueToIndex: number and bigint paths agree around 2^53', (t) => {
  for (const v of [2 ** 53 - 1, 2 ** 53 - 2, 2 ** 52 + 12345, 2 ** 53, 2 ** 53 + 2]) {
    t.is(valueToIndex(v), valueToIndex(BigInt(v)), String(v));
  }
  // Precision above 2^53: neighbours on both sides of a bucket edge in bigint.
  const edge = indexToRange(400).lower; // width 2^48 buckets
  t.is(valueToIndex(edge), 400);
  t.is(valueToIndex(edge - 1n), 399);
});

test('valueToIndex rejects out-of-range and non-integer values', (t) => {
  for (const v of [-1, -1n, 1.5, Number.NaN, Number.POSITIVE_INFINITY, 2 ** 64, U64_MAX + 1n]) {
    t.throws(() => valueToIndex(v), { instanceOf: RangeError }, String(v));
  }
  // Smaller max value power: 2^m − 1 is the last value.
  t.is(valueToIndex(1023, 3, 10), bucketCount(3, 10) - 1);
  t.is(valueToIndex(1023n, 3, 10), bucketCount(3, 10) - 1);
  t.throws(() => valueToIndex(1024, 3, 10), { instanceOf: RangeError });
  t.throws(() => valueToIndex(1024n, 3, 10), { instanceOf: RangeError });
  t.deepEqual(indexToRange(bucketCount(3, 10) - 1, 3, 10).upper, 1023n);
});

test('indexToRange rejects bad indices', (t) => {
  for (const i of [-1, 496, 0.5, Number.NaN]) {
    t.throws(() => indexToRange(i), { instanceOf: RangeError }, String(i));
  }
  t.notThrows(() => indexToRange(495));
});

test('ranges tile the u64 space and round-trip exhaustively for g = 0..7', (t) => {
  for (let g = 0; g <= 7; g++) {
    const n = bucketCount(g, 64);
    let expectedLower = 0n;
    let failures = 0;
    for (let i = 0; i < n; i++) {
      const { lower, upper } = indexToRange(i, g, 64);
      if (lower !== expectedLower || upper < lower) failures++;
      if (valueToIndex(lower, g, 64) !== i || valueToIndex(upper, g, 64) !== i) failures++;
      // Number fast path agrees where it applies.
      if (upper <= BigInt(Number.MAX_SAFE_INTEGER) && valueToIndex(Number(upper), g, 64) !== i) failures++;
      // Width bound: at most 2^-g of the lower bound beyond the exact region.
      if (lower >= pow2(g + 1) && (upper - lower + 1n) * pow2(g) > lower) failures++;
      expectedLower = upper + 1n;
    }
    t.is(failures, 0, `g=${g}`);
    t.is(expectedLower, pow2(64), `g=${g} ends at 2^64 − 1`);
  }
  // Exact region size is 2^(g+1), and the first width-2 bucket follows it.
  t.deepEqual(indexToRange(4, 1, 64), { lower: 4n, upper: 5n });
  t.deepEqual(indexToRange(2, 0, 64), { lower: 2n, upper: 3n });
  t.deepEqual(indexToRange(64, 0, 64), { lower: pow2(63), upper: U64_MAX });
});

test('ranges also tile smaller max value powers', (t) => {
  for (const [g, m] of [
    [0, 1],
    [2, 3],
    [3, 10],
    [5, 20],
  ] as const) {
    let next = 0n;
    for (let i = 0; i < bucketCount(g, m); i++) {
      const r = indexToRange(i, g, m);
      t.is(r.lower, next);
      t.is(valueToIndex(r.upper, g, m), i);
      next = r.upper + 1n;
    }
    t.is(next, pow2(m));
  }
});

test('fromDense / toDense round trip', (t) => {
  const dense = new Array<number | bigint>(496).fill(0);
  dense[0] = 3;
  dense[63] = 7n;
  dense[495] = 1;
  const h = fromDense(dense);
  t.deepEqual(h, sparse([0, 63, 495], [3, 7, 1]));
  t.true(isValidSparse(h));
  const back = toDense(h);
  t.is(back.length, 496);
  t.deepEqual(back, dense.map(Number));
  t.deepEqual(fromDense(back), h);
  t.deepEqual(fromDense(new Array<number>(496).fill(0)), sparse([], []));
  t.throws(() => fromDense(new Array<number>(495).fill(0)), { instanceOf: RangeError });
  t.throws(() => fromDense([...back.slice(0, 495), -1]), { instanceOf: RangeError });
  t.throws(() => fromDense([...back.slice(0, 495), 1.5]), { instanceOf: RangeError });
  t.throws(() => fromDense([...back.slice(0, 495), 1n << 60n]), { instanceOf: RangeError });
  t.is(toDense(sparse([1], [2], 0, 1)).length, 2);
});

test('fromValues and totalCount', (t) => {
  const h = fromValues([1000, 5, 5, 960n, 1023, 0]);
  t.deepEqual(h, sparse([0, 5, 63], [1, 2, 3]));
  t.is(totalCount(h), 6);
  t.is(totalCount(sparse([], [])), 0);
  t.true(isValidSparse(h));
});

test('isValidSparse rejects bad inputs', (t) => {
  t.true(isValidSparse(sparse([], [])));
  t.true(isValidSparse(sparse([0, 495], [1, 1])));
  t.false(isValidSparse(sparse([1, 1], [1, 1])), 'duplicate index');
  t.false(isValidSparse(sparse([2, 1], [1, 1])), 'decreasing index');
  t.false(isValidSparse(sparse([496], [1])), 'index past end');
  t.false(isValidSparse(sparse([-1], [1])), 'negative index');
  t.false(isValidSparse(sparse([1.5], [1])), 'fractional index');
  t.false(isValidSparse(sparse([1], [0])), 'zero count');
  t.false(isValidSparse(sparse([1], [-2])), 'negative count');
  t.false(isValidSparse(sparse([1], [0.5])), 'fractional count');
  t.false(isValidSparse(sparse([1], [2 ** 60])), 'unsafe count');
  t.false(isValidSparse(sparse([1, 2], [1])), 'length mismatch');
  t.false(isValidSparse(sparse([1], [1], 3, 65)), 'bad m');
  t.false(isValidSparse(sparse([1], [1], 64, 64)), 'bad g');
});

test('percentiles: empty histogram gives undefined', (t) => {
  t.is(percentiles(sparse([], []), [0.5]), undefined);
  t.is(percentiles(fromValues([]), [...DEFAULT_PERCENTILES]), undefined);
});

test('percentiles: single sample', (t) => {
  t.deepEqual(percentiles(fromValues([7]), [0, 0.5, 1]), [7n, 7n, 7n]);
  t.deepEqual(percentiles(fromValues([1000]), [...DEFAULT_PERCENTILES]), [1023n, 1023n, 1023n, 1023n, 1023n]);
  t.deepEqual(percentiles(fromValues([U64_MAX]), [0.5]), [U64_MAX]);
});

test('percentiles: rank rule on values 1..10', (t) => {
  const h = fromValues([1, 2, 3, 4, 5, 6, 7, 8, 9, 10]);
  t.deepEqual(percentiles(h, [0.5, 0.9, 0.99, 0, 1, 0.1, 0.11, 0.05]), [5n, 9n, 10n, 1n, 10n, 1n, 2n, 1n]);
  // q = 0 reports the first non-empty bucket's upper bound.
  t.deepEqual(percentiles(fromValues([16, 40]), [0]), [17n]);
});

test('percentiles: upper bounds for values beyond the exact region', (t) => {
  const h = fromValues([16, 17, 1000, 1000, 2 ** 40]);
  // ranks: 0.2→1 (16..17), 0.6→3 (960..1023), 1→5 (2^40 bucket).
  t.deepEqual(percentiles(h, [0.2, 0.6, 1]), [17n, 1023n, pow2(40) + pow2(37) - 1n]);
});

test('percentiles preserve the order given', (t) => {
  const values = Array.from({ length: 100 }, (_, i) => i + 1); // 1..100
  const h = fromValues(values);
  const forward = percentiles(h, [0.1, 0.5, 0.9]);
  const backward = percentiles(h, [0.9, 0.5, 0.1]);
  t.deepEqual(forward, [10n, 51n, 95n]);
  t.deepEqual(backward, [95n, 51n, 10n]);
  t.deepEqual(percentiles(h, [0.5, 0.1, 0.5]), [51n, 10n, 51n]);
  t.deepEqual(percentiles(h, []), []);
});

test('percentiles: ceil(q·N) is exact despite float noise', (t) => {
  // Two buckets (values 1 and 2) with counts chosen so that the exact rank is
  // the last sample of bucket 1; an off-by-one rank would report 2 instead.
  // 0.07·100 = 7.000000000000001 in floating point: rank must be 7, not 8.
  const h100 = sparse([1, 2], [7, 93]); // ranks 1..7 → value 1, ranks 8..100 → value 2
  t.deepEqual(percentiles(h100, [0.07]), [1n]);
  t.deepEqual(percentiles(sparse([1, 2], [14, 86]), [0.14]), [1n]);
  t.deepEqual(percentiles(sparse([1, 2], [55, 45]), [0.55]), [1n]);
  t.deepEqual(percentiles(sparse([1, 2], [28, 9972]), [0.0028]), [1n]); // N = 10 000
  // 0.9999 with N = 10 000: rank 9999 (last sample alone above it).
  t.deepEqual(percentiles(sparse([1, 2], [9999, 1]), [0.9999]), [1n]);
  t.deepEqual(percentiles(sparse([1, 2], [9998, 2]), [0.9999]), [2n]);
  // N = 1 000 000: rank 999 900 and 999 000.
  t.deepEqual(percentiles(sparse([1, 2], [999_900, 100]), [0.9999, 0.999]), [1n, 1n]);
  t.deepEqual(percentiles(sparse([1, 2], [999_899, 101]), [0.9999]), [2n]);
  // Tiny q in exponent notation: 1e-7 · 10^7 = 1, 1.5e-7 · 10^7 = 1.5 → 2.
  t.deepEqual(percentiles(sparse([1, 2], [1, 9_999_999]), [1e-7, 1.5e-7]), [1n, 2n]);
  // Just above a whole rank still rounds up.
  t.deepEqual(percentiles(sparse([1, 2], [7, 93]), [0.0701]), [2n]);
});

test('percentiles: q outside [0, 1] throws', (t) => {
  const h = fromValues([1]);
  for (const q of [-0.1, 1.0001, 50, Number.NaN]) {
    t.throws(() => percentiles(h, [0.5, q]), { instanceOf: RangeError }, String(q));
  }
  t.throws(() => percentiles(sparse([], []), [2]), { instanceOf: RangeError });
});

test('subtract: window between two cumulative histograms', (t) => {
  const previous = fromValues([1, 1, 1000, 5000]);
  const current = fromValues([1, 1, 1, 1000, 1000, 5000, 70000]);
  const window = subtract(current, previous);
  t.deepEqual(window, sparse([1, 63, valueToIndex(70000)], [1, 1, 1]));
  t.is(totalCount(window!), totalCount(current) - totalCount(previous));
  t.deepEqual(percentiles(window!, [1]), [indexToRange(valueToIndex(70000)).upper]);
  // Previous empty: the window is the whole current histogram.
  t.deepEqual(subtract(current, sparse([], [])), current);
});

test('subtract: resets and mismatched configs give undefined', (t) => {
  const a = fromValues([1, 2, 3]);
  t.is(subtract(fromValues([1, 2]), a), undefined, 'bucket disappeared');
  t.is(subtract(sparse([1, 2, 3], [1, 1, 1]), sparse([1, 2, 3], [1, 2, 1])), undefined, 'bucket decreased');
  t.is(subtract(sparse([1], [5]), sparse([1, 400], [1, 1])), undefined, 'trailing bucket missing');
  t.is(subtract(sparse([], []), sparse([0], [1])), undefined);
  t.is(subtract(fromValues([1], 2, 64), fromValues([1], 3, 64)), undefined, 'different g');
  t.is(subtract(fromValues([1], 3, 63), fromValues([1], 3, 64)), undefined, 'different m');
});

test('subtract: identical histograms give an empty window', (t) => {
  const a = fromValues([1, 5, 1000, 1000]);
  const w = subtract(a, a);
  t.deepEqual(w, sparse([], []));
  t.is(totalCount(w!), 0);
  t.true(isValidSparse(w!));
  t.is(percentiles(w!, [0.5]), undefined);
});

test('downsample preserves totals and re-adds at the lower bound', (t) => {
  const values = [0, 1, 2, 3, 15, 16, 17, 31, 1000, 1023, 123_456_789, 2 ** 52, U64_MAX];
  const h = fromValues(values);
  for (let g2 = 0; g2 < 3; g2++) {
    const d = downsample(h, g2);
    t.is(d.groupingPower, g2);
    t.is(d.maxValuePower, 64);
    t.true(isValidSparse(d));
    t.is(totalCount(d), totalCount(h));
    // Each value lands in the g2 bucket holding its g3 bucket's lower bound,
    // which here is the same g2 bucket as the value itself (nested layouts).
    const expected = fromValues(values.map((v) => indexToRange(valueToIndex(v)).lower), g2, 64);
    t.deepEqual(d, expected);
    t.deepEqual(d, fromValues(values, g2, 64));
  }
  // 1000 sits in g3 bucket [960, 1023]; at g=1 that is bucket [768, 1023].
  const d1 = downsample(fromValues([1000]), 1);
  t.is(d1.index.length, 1);
  t.deepEqual(indexToRange(d1.index[0]!, 1, 64), { lower: 768n, upper: 1023n });
});

test('downsample to g=0 gives power-of-two buckets', (t) => {
  const h = fromValues([0, 1, 2, 3, 4, 7, 8, 1000, 1023, 1024, U64_MAX]);
  const d = downsample(h, 0);
  t.deepEqual(d, sparse([0, 1, 2, 3, 4, 10, 11, 64], [1, 1, 2, 2, 1, 2, 1, 1], 0, 64));
  t.deepEqual(
    d.index.map((i) => indexToRange(i, 0, 64)),
    [
      { lower: 0n, upper: 0n },
      { lower: 1n, upper: 1n },
      { lower: 2n, upper: 3n },
      { lower: 4n, upper: 7n },
      { lower: 8n, upper: 15n },
      { lower: 512n, upper: 1023n },
      { lower: 1024n, upper: 2047n },
      { lower: pow2(63), upper: U64_MAX },
    ],
  );
  t.deepEqual(percentiles(d, [0.5, 1]), [7n, U64_MAX]);
});

test('downsample rejects a target that is not coarser', (t) => {
  const h = fromValues([1]);
  for (const g2 of [3, 4, -1, 1.5]) t.throws(() => downsample(h, g2), { instanceOf: RangeError }, String(g2));
  t.deepEqual(downsample(sparse([], []), 2), sparse([], [], 2, 64));
});
