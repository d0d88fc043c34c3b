/**
 * The h2 histogram (base-2 log-linear buckets) as Rezolus defines it
 * (see ../shared/research/rezolus.md §2).
 *
 * A configuration is a grouping power `g` and a max value power `m`
 * (0 ≤ g < m ≤ 64). Values below 2^(g+1) get one bucket each; every further
 * power-of-two range [2^p, 2^(p+1)) is split into 2^g equal buckets, so a
 * bucket is never wider than 2^-g of its lower bound. The largest value is
 * 2^m − 1 and there are (m − g + 1)·2^g buckets in all (496 for g=3, m=64).
 *
 * Values and bucket bounds may need all 64 bits, so bounds are bigints and
 * values may be given as bigints; plain numbers are accepted below 2^53
 * (and as exact integers above it). Bucket counts are plain numbers (safe
 * integers). Everything here is pure: inputs are never mutated.
 */

/** The only configuration on the wire today: grouping power 3, max value power 64, 496 buckets. */
export const GROUPING_POWER = 3;
export const MAX_VALUE_POWER = 64;

/** The quantile set Rezolus uses everywhere (exporter summaries, annotate, viewer). */
export const DEFAULT_PERCENTILES = [0.5, 0.9, 0.99, 0.999, 0.9999] as const;

/**
 * A cumulative histogram in sparse form: only non-empty buckets, `index`
 * strictly increasing, `count[i]` the count of bucket `index[i]`.
 */
export interface SparseHistogram {
  readonly groupingPower: number;
  readonly maxValuePower: number;
  readonly index: readonly number[];
  readonly count: readonly number[];
}

/**
 * Number of buckets of an h2 histogram: (m − g + 1)·2^g.
 * Throws RangeError unless g and m are integers with 0 ≤ g < m ≤ 64, or when
 * the bucket count would not be a safe integer (g ≥ 49 for m = 64), since
 * bucket indices are plain numbers.
 */
export function bucketCount(g: number, m: number): number {
  if (!Number.isInteger(g) || !Number.isInteger(m) || g < 0 || g >= m || m > 64) {
    throw new RangeError(`invalid histogram config: grouping power ${g}, max value power ${m} (need 0 ≤ g < m ≤ 64)`);
  }
  const n = (m - g + 1) * 2 ** g;
  if (!Number.isSafeInteger(n)) {
    throw new RangeError(`histogram config grouping power ${g}, max value power ${m} has too many buckets (${n})`);
  }
  return n;
}

/** Buckets of the wire configuration (GROUPING_POWER, MAX_VALUE_POWER): 496; the BPF headers hold the same number. */
export const H2_BUCKETS = bucketCount(GROUPING_POWER, MAX_VALUE_POWER);

/** floor(log2 v) for an integer 1 ≤ v < 2^53, without floating-point logarithms. */
function floorLog2(v: number): number {
  const hi = Math.floor(v / 0x1_0000_0000);
  return hi > 0 ? 63 - Math.clz32(hi) : 31 - Math.clz32(v);
}

/**
 * Index of the bucket holding `value`. Exact over the whole u64 range: numbers
 * below 2^53 take a float fast path (all operations there are exact), anything
 * else is done in bigint. Throws RangeError for negative or non-integer values
 * and for values above 2^m − 1.
 */
export function valueToIndex(value: number | bigint, g = GROUPING_POWER, m = MAX_VALUE_POWER): number {
  bucketCount(g, m); // validates the config
  if (typeof value === 'number') {
    if (!Number.isInteger(value) || value < 0) {
      throw new RangeError(`histogram value must be a non-negative integer, got ${value}`);
    }
    if (value <= Number.MAX_SAFE_INTEGER) {
      if (m < 53 && value > 2 ** m - 1) {
        throw new RangeError(`histogram value ${value} exceeds the maximum 2^${m} − 1`);
      }
      if (value < 2 ** (g + 1)) return value;
      const p = floorLog2(value);
      // Division by a power of two and floor are exact for integers below 2^53.
      return (p - g + 1) * 2 ** g + Math.floor((value - 2 ** p) / 2 ** (p - g));
    }
    value = BigInt(value); // an integral double converts to bigint exactly
  }
  if (value < 0n) throw new RangeError(`histogram value must be non-negative, got ${value}`);
  if (value > (1n << BigInt(m)) - 1n) {
    throw new RangeError(`histogram value ${value} exceeds the maximum 2^${m} − 1`);
  }
  if (value < 1n << BigInt(g + 1)) return Number(value);
  const p = value.toString(2).length - 1;
  return (p - g + 1) * 2 ** g + Number((value - (1n << BigInt(p))) >> BigInt(p - g));
}

/**
 * Inclusive value range [lower, upper] of bucket `index`. With G = index >> g
 * and h = index mod 2^g: G = 0 → [h, h]; otherwise lower = 2^(g+G−1) + h·2^(G−1)
 * and the width is 2^(G−1). The last bucket ends at 2^m − 1.
 * Throws RangeError for an index outside 0 … bucketCount − 1.
 */
export function indexToRange(index: number, g = GROUPING_POWER, m = MAX_VALUE_POWER): { lower: bigint; upper: bigint } {
  const n = bucketCount(g, m);
  if (!Number.isInteger(index) || index < 0 || index >= n) {
    throw new RangeError(`histogram bucket index ${index} out of range 0..${n - 1} (g=${g}, m=${m})`);
  }
  const G = Math.floor(index / 2 ** g);
  const h = BigInt(index - G * 2 ** g);
  if (G === 0) return { lower: h, upper: h };
  const lower = (1n << BigInt(g + G - 1)) + (h << BigInt(G - 1));
  const upper = lower + (1n << BigInt(G - 1)) - 1n;
  const max = (1n << BigInt(m)) - 1n;
  return { lower, upper: upper < max ? upper : max };
}

/** A bucket count as a number; throws RangeError unless it is a non-negative safe integer. */
function toCount(c: number | bigint, where: number): number {
  const n = typeof c === 'bigint' && c >= 0n && c <= BigInt(Number.MAX_SAFE_INTEGER) ? Number(c) : c;
  if (typeof n !== 'number' || !Number.isSafeInteger(n) || n < 0) {
    throw new RangeError(`histogram bucket ${where} has invalid count ${c}`);
  }
  return n;
}

/**
 * Sparse form of a dense bucket array (as exported by the agent). The length
 * must equal bucketCount(g, m); counts must be non-negative safe integers.
 */
export function fromDense(buckets: ArrayLike<number | bigint>, g = GROUPING_POWER, m = MAX_VALUE_POWER): SparseHistogram {
  const n = bucketCount(g, m);
  if (buckets.length !== n) {
    throw new RangeError(`dense histogram has ${buckets.length} buckets, expected ${n} for g=${g}, m=${m}`);
  }
  const index: number[] = [];
  const count: number[] = [];
  for (let i = 0; i < n; i++) {
    const c = toCount(buckets[i] ?? 0, i);
    if (c > 0) {
      index.push(i);
      count.push(c);
    }
  }
  return { groupingPower: g, maxValuePower: m, index, count };
}

/** Dense bucket array (length bucketCount) of a sparse histogram. */
export function toDense(h: SparseHistogram): number[] {
  const dense = new Array<number>(bucketCount(h.groupingPower, h.maxValuePower)).fill(0);
  h.index.forEach((idx, i) => {
    if (idx < 0 || idx >= dense.length) throw new RangeError(`histogram bucket index ${idx} out of range`);
    dense[idx] = h.count[i] ?? 0;
  });
  return dense;
}

/** Builds a histogram recording each value once (mostly for tests). */
export function fromValues(values: Iterable<number | bigint>, g = GROUPING_POWER, m = MAX_VALUE_POWER): SparseHistogram {
  const counts = new Map<number, number>();
  for (const v of values) {
    const idx = valueToIndex(v, g, m);
    counts.set(idx, (counts.get(idx) ?? 0) + 1);
  }
  const index = [...counts.keys()].sort((a, b) => a - b);
  return { groupingPower: g, maxValuePower: m, index, count: index.map((i) => counts.get(i) ?? 0) };
}

/** Total number of recorded values. */
export function totalCount(h: SparseHistogram): number {
  // indexed: the agent at 1 Hz runs this in V8's interpreter, where for-of calls the array iterator per element
  const count = h.count;
  let total = 0;
  for (let i = 0; i < count.length; i++) total += count[i] as number;
  return total;
}

/**
 * True when `h` is a well-formed sparse histogram: a valid config, equal-length
 * arrays, indices strictly increasing and inside the layout, and every count a
 * positive safe integer.
 */
export function isValidSparse(h: SparseHistogram): boolean {
  let n: number;
  try {
    n = bucketCount(h.groupingPower, h.maxValuePower);
  } catch {
    return false;
  }
  if (!Array.isArray(h.index) || !Array.isArray(h.count) || h.index.length !== h.count.length) return false;
  let prev = -1;
  for (let i = 0; i < h.index.length; i++) {
    const idx = h.index[i];
    const c = h.count[i];
    if (!Number.isInteger(idx) || idx === undefined || idx <= prev || idx >= n) return false;
    if (!Number.isSafeInteger(c) || c === undefined || c <= 0) return false;
    prev = idx;
  }
  return true;
}

/**
 * Windowed histogram `current − previous` from two cumulative snapshots.
 * Returns undefined when the configs differ or any bucket decreased (a reset
 * or restart: the caller should skip this window). Only non-empty buckets are
 * kept, so identical inputs give an empty histogram.
 */
export function subtract(current: SparseHistogram, previous: SparseHistogram): SparseHistogram | undefined {
  if (current.groupingPower !== previous.groupingPower || current.maxValuePower !== previous.maxValuePower) {
    return undefined;
  }
  const index: number[] = [];
  const count: number[] = [];
  let j = 0; // cursor into previous
  for (let i = 0; i < current.index.length; i++) {
    const idx = current.index[i] ?? 0;
    let c = current.count[i] ?? 0;
    const pIdx = previous.index[j];
    if (pIdx !== undefined && pIdx < idx) return undefined; // bucket vanished from current
    if (pIdx === idx) {
      c -= previous.count[j] ?? 0;
      j++;
      if (c < 0) return undefined;
    }
    if (c > 0) {
      index.push(idx);
      count.push(c);
    }
  }
  if (j < previous.index.length) return undefined; // previous has buckets beyond current's last
  return { groupingPower: current.groupingPower, maxValuePower: current.maxValuePower, index, count };
}

/**
 * rank = max(1, ceil(q·N)) computed exactly: q is taken as the decimal it
 * prints as (its shortest round-trip form, e.g. 0.9999 → 9999/10^4), so float
 * noise in q·N (0.07·100 = 7.000000000000001) cannot push the rank up by one.
 */
function rankOf(q: number, n: bigint): bigint {
  const match = /^(\d+)(?:\.(\d+))?(?:e([+-]?\d+))?$/.exec(String(q));
  if (!match) throw new RangeError(`quantile must be in [0, 1], got ${q}`);
  const frac = match[2] ?? '';
  const exp = Number(match[3] ?? '0') - frac.length;
  let num = BigInt((match[1] ?? '0') + frac) * n;
  let den = 1n;
  if (exp >= 0) num *= 10n ** BigInt(exp);
  else den = 10n ** BigInt(-exp);
  const rank = (num + den - 1n) / den;
  return rank > 1n ? rank : 1n;
}

/**
 * Quantiles of `h` (each q in [0, 1], any order; results follow the given
 * order). For each q: rank = max(1, ceil(q·N)); the answer is the UPPER bound
 * of the first bucket whose cumulative count reaches the rank. Returns
 * undefined for an empty histogram; throws RangeError for q outside [0, 1].
 */
export function percentiles(h: SparseHistogram, quantiles: readonly number[]): bigint[] | undefined {
  for (const q of quantiles) {
    if (!(q >= 0 && q <= 1)) throw new RangeError(`quantile must be in [0, 1], got ${q}`);
  }
  let total = 0n;
  for (const c of h.count) total += BigInt(c);
  if (total === 0n) return undefined;

  // Serve the quantiles in rank order with one walk over the buckets.
  const order = quantiles
    .map((q, at) => ({ at, rank: rankOf(q, total) }))
    .sort((a, b) => (a.rank < b.rank ? -1 : a.rank > b.rank ? 1 : 0));
  const result = new Array<bigint>(quantiles.length);
  let cumulative = 0n;
  let b = 0; // buckets consumed so far
  for (const { at, rank } of order) {
    while (cumulative < rank && b < h.count.length) {
      cumulative += BigInt(h.count[b] ?? 0);
      b++;
    }
    // rank ≤ total, so the walk always stops on a bucket (b ≥ 1).
    result[at] = indexToRange(h.index[b - 1] ?? 0, h.groupingPower, h.maxValuePower).upper;
  }
  return result;
}

/**
 * Re-buckets `h` into the coarser layout of grouping power g2 (0 ≤ g2 < g, same
 * m): each non-empty bucket's count is re-added at that bucket's LOWER bound.
 * Every g bucket lies inside a single g2 bucket, so totals are preserved and no
 * count moves to a different value range.
 */
export function downsample(h: SparseHistogram, g2: number): SparseHistogram {
  const g = h.groupingPower;
  const m = h.maxValuePower;
  if (!Number.isInteger(g2) || g2 < 0 || g2 >= g) {
    throw new RangeError(`downsample target grouping power ${g2} must be an integer in 0..${g - 1}`);
  }
  const index: number[] = [];
  const count: number[] = [];
  h.index.forEach((idx, i) => {
    const target = valueToIndex(indexToRange(idx, g, m).lower, g2, m);
    const c = h.count[i] ?? 0;
    // Source indices increase, so targets are non-decreasing: merge with the tail.
    if (index.length > 0 && index[index.length - 1] === target) count[count.length - 1] = (count[count.length - 1] ?? 0) + c;
    else if (c > 0) {
      index.push(target);
      count.push(c);
    }
  });
  return { groupingPower: g2, maxValuePower: m, index, count };
}
