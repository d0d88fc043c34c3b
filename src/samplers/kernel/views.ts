/**
 * Reading mmapped BPF arrays without a syscall and without a BigInt per
 * word: u64 words are read as two u32 halves (little endian), which is exact
 * below 2^53 and falls back to bigint above.
 */
import type { SparseHistogram } from '../../metrics/histogram.js';
import { addU64 } from '../../metrics/u64.js';
import { GROUPING_POWER, MAX_VALUE_POWER } from '../../metrics/histogram.js';
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


/** Histogram k of an mmapped map of histograms, in sparse cumulative form. */
export class HistogramView {
  private readonly words: Uint32Array;
  constructor(buffer: ArrayBuffer, k = 0) {
    this.words = new Uint32Array(buffer, k * H2_BUCKETS * 8, H2_BUCKETS * 2);
  }

  read(): SparseHistogram {
    const w = this.words;
    const index: number[] = [];
    const count: number[] = [];
    for (let i = 0; i < H2_BUCKETS; i++) {
      let lo = w[2 * i] as number;
      let hi = w[2 * i + 1] as number;
      if ((lo | hi) === 0) continue;
      if (hi !== 0 || lo > 0xffff_0000) {
        // a count near or past 2^32: read the pair again in the order that catches a carry
        hi = w[2 * i + 1] as number;
        lo = w[2 * i] as number;
        const again = w[2 * i + 1] as number;
        if (again !== hi) {
          hi = again;
          lo = w[2 * i] as number;
        }
      }
      index.push(i);
      // A bucket past 2^53 events is beyond any real host; clamp rather than lose the frame.
      count.push(Math.min(hi * TWO32 + lo, Number.MAX_SAFE_INTEGER));
    }
    return { groupingPower: GROUPING_POWER, maxValuePower: MAX_VALUE_POWER, index, count };
  }
}

/** A counter bank: `width` u64 slots per CPU, for `cpus` CPUs. */
export class CounterBankView {
  private readonly words: Uint32Array;
  constructor(buffer: ArrayBuffer, readonly width: number, readonly cpus: number) {
    this.words = new Uint32Array(buffer, 0, width * cpus * 2);
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

/** A packed array of u64 indexed by a bounded id. */
export class PackedView {
  private readonly words: Uint32Array;
  constructor(buffer: ArrayBuffer, readonly entries: number) {
    this.words = new Uint32Array(buffer, 0, entries * 2);
  }

  get(i: number): number | bigint {
    return word(this.words, i);
  }
}
