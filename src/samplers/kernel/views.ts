/**
 * Reading mmapped BPF arrays without a syscall and without a BigInt per
 * word. Histograms and sparse arrays are scanned by the addon (scanU64: one
 * 64-bit load per word, only the non-zero ones come back), because walking
 * 496 mostly zero buckets in interpreted JS was the larger part of a kernel
 * sampler's refresh at 1 Hz. Single words are read as two u32 halves
 * (little endian), which is exact below 2^53 and falls back to bigint above.
 */
import type { SparseHistogram } from '../../metrics/histogram.js';
import { addU64 } from '../../metrics/u64.js';
import { GROUPING_POWER, MAX_VALUE_POWER } from '../../metrics/histogram.js';
import { loadNative } from '../../native/index.js';
import { H2_BUCKETS } from './layout.js';

const TWO32 = 0x1_0000_0000;

/**
 * The u64 at word i of a u32 view, as a number when safe, else a bigint. The
 * kernel may add to it between the two loads: the high half is read before
 * and after the low one, and the pair read again when a carry crossed in between.
 */
function word(w: Uint32Array, i: number): number | bigint {
  let hi = w[2 * i + 1] as number;
  let lo = w[2 * i] as number;
  const again = w[2 * i + 1] as number;
  if (again !== hi) {
    hi = again;
    lo = w[2 * i] as number;
  }
  if (hi < 0x20_0000) return hi * TWO32 + lo;
  return (BigInt(hi) << 32n) | BigInt(lo);
}

/**
 * The positions and values of the non-zero words of the last scan. Shared by
 * every view (one thread, and each read copies out before it returns), grown
 * to the largest array scanned.
 */
let scanIndex = new Uint32Array(H2_BUCKETS);
let scanValue = new Float64Array(H2_BUCKETS);
let scanU64: ((src: BigUint64Array, index: Uint32Array, value: Float64Array) => number) | undefined;

/** Scans `src` into scanIndex/scanValue; returns how many words were non-zero. */
function scan(src: BigUint64Array): number {
  if (scanIndex.length < src.length) {
    scanIndex = new Uint32Array(src.length);
    scanValue = new Float64Array(src.length);
  }
  scanU64 ??= loadNative().scanU64;
  return scanU64(src, scanIndex, scanValue);
}

/** Histogram k of an mmapped map of histograms, in sparse cumulative form. */
export class HistogramView {
  private readonly words: BigUint64Array;
  constructor(buffer: ArrayBuffer, k = 0) {
    this.words = new BigUint64Array(buffer, k * H2_BUCKETS * 8, H2_BUCKETS);
  }

  /** the sum of the counts of the last read() (totalCount of it, without a second pass) */
  total = 0;

  read(): SparseHistogram {
    const n = scan(this.words);
    // sized once and filled (no push: each is a call in the interpreter the agent runs at 1 Hz)
    const index = new Array<number>(n);
    const count = new Array<number>(n);
    let total = 0;
    for (let j = 0; j < n; j++) {
      index[j] = scanIndex[j] as number;
      const c = scanValue[j] as number;
      // A bucket past 2^53 events is beyond any real host; clamp rather than lose the frame.
      const clamped = c > Number.MAX_SAFE_INTEGER ? Number.MAX_SAFE_INTEGER : c;
      count[j] = clamped;
      total += clamped;
    }
    this.total = total;
    return { groupingPower: GROUPING_POWER, maxValuePower: MAX_VALUE_POWER, index, count };
  }
}

/** A counter bank: `width` u64 slots per CPU, for `cpus` CPUs. */
export class CounterBankView {
  private readonly words: Uint32Array;
  private readonly wide: BigUint64Array;
  private readonly mark: Uint8Array;
  constructor(buffer: ArrayBuffer, readonly width: number, readonly cpus: number) {
    this.words = new Uint32Array(buffer, 0, width * cpus * 2);
    this.wide = new BigUint64Array(buffer, 0, width * cpus);
    this.mark = new Uint8Array(width);
  }

  /** The slots not zero on some CPU (those whose total is not zero), ascending: one scan of the bank. */
  touched(): number[] {
    const n = scan(this.wide);
    const mark = this.mark;
    mark.fill(0);
    let count = 0;
    for (let j = 0; j < n; j++) {
      const k = (scanIndex[j] as number) % this.width;
      if (mark[k] === 0) {
        mark[k] = 1;
        count++;
      }
    }
    const slots = new Array<number>(count);
    for (let k = 0, i = 0; i < count; k++) if (mark[k] === 1) slots[i++] = k;
    return slots;
  }

  /** slot k of one CPU */
  cpu(cpu: number, k: number): number | bigint {
    return word(this.words, cpu * this.width + k);
  }

  /** slot k summed over every CPU */
  total(k: number): number | bigint {
    let sum: number | bigint = 0;
    for (let c = 0; c < this.cpus; c++) sum = addU64(sum, word(this.words, c * this.width + k));
    return sum;
  }
}

/** The non-zero entries of a packed array, ids ascending. */
export interface NonZeroEntries {
  readonly index: readonly number[];
  readonly value: readonly (number | bigint)[];
}

/** A packed array of u64 indexed by a bounded id. */
export class PackedView {
  private readonly words: Uint32Array;
  private readonly wide: BigUint64Array;
  constructor(buffer: ArrayBuffer, readonly entries: number) {
    this.words = new Uint32Array(buffer, 0, entries * 2);
    this.wide = new BigUint64Array(buffer, 0, entries);
  }

  get(i: number): number | bigint {
    return word(this.words, i);
  }

  /** Every id whose word is not zero, with its value (a bigint past 2^53, as get). */
  nonZero(): NonZeroEntries {
    const n = scan(this.wide);
    const index = new Array<number>(n);
    const value = new Array<number | bigint>(n);
    for (let j = 0; j < n; j++) {
      const i = scanIndex[j] as number;
      const v = scanValue[j] as number;
      index[j] = i;
      value[j] = v <= Number.MAX_SAFE_INTEGER ? v : (this.wide[i] as bigint);
    }
    return { index, value };
  }
}
