/**
 * The mmapped-map readers as they were before issue 19's native scan
 * (src/samplers/kernel/views.ts, per-cgroup.ts and network/drops/sampler.ts
 * at 3beb469): every word
 * read in JS as two u32 halves. Kept as the reference the new readers are
 * compared with (test/samplers/kernel-views.test.ts) and measured against
 * (test/bench/kernel-views.ts).
 */
import type { SparseHistogram } from '../../src/metrics/histogram.js';
import { GROUPING_POWER, H2_BUCKETS, MAX_VALUE_POWER } from '../../src/metrics/histogram.js';
import { addU64 } from '../../src/metrics/u64.js';

const TWO32 = 0x1_0000_0000;

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

export class OldHistogramView {
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
        hi = w[2 * i + 1] as number;
        lo = w[2 * i] as number;
        const again = w[2 * i + 1] as number;
        if (again !== hi) {
          hi = again;
          lo = w[2 * i] as number;
        }
      }
      index.push(i);
      count.push(Math.min(hi * TWO32 + lo, Number.MAX_SAFE_INTEGER));
    }
    return { groupingPower: GROUPING_POWER, maxValuePower: MAX_VALUE_POWER, index, count };
  }
}

export class OldPackedView {
  private readonly words: Uint32Array;
  constructor(buffer: ArrayBuffer, readonly entries: number) {
    this.words = new Uint32Array(buffer, 0, entries * 2);
  }

  get(i: number): number | bigint {
    return word(this.words, i);
  }
}

export class OldCounterBankView {
  private readonly words: Uint32Array;
  constructor(buffer: ArrayBuffer, readonly width: number, readonly cpus: number) {
    this.words = new Uint32Array(buffer, 0, width * cpus * 2);
  }

  total(k: number): number | bigint {
    let sum: number | bigint = 0;
    for (let c = 0; c < this.cpus; c++) sum = addU64(sum, word(this.words, c * this.width + k));
    return sum;
  }
}

/** network_drops' old search for reasons: every slot from `from` to `to` whose total is not zero. */
export function oldTouched(bank: OldCounterBankView, from: number, to: number): number[] {
  const out: number[] = [];
  for (let r = from; r <= to; r++) if (bank.total(r) !== 0) out.push(r);
  return out;
}

/**
 * The slot walk of the old PerCgroupCounters.read, up to the cgroup paths:
 * (id, inode, counters) of every slot with an inode and a non-zero counter.
 */
export function oldLiveSlots(
  counters: OldPackedView,
  inodes: OldPackedView,
  width: number,
  slots: number,
): { id: number; inode: number | bigint; values: (number | bigint)[] }[] {
  const found: { id: number; inode: number | bigint; values: (number | bigint)[] }[] = [];
  for (let id = 0; id < slots; id++) {
    const inode = inodes.get(id);
    if (inode === 0) continue;
    const values: (number | bigint)[] = new Array(width);
    let any = false;
    for (let k = 0; k < width; k++) {
      const v = counters.get(id * width + k);
      values[k] = v;
      if (v !== 0) any = true;
    }
    if (any) found.push({ id, inode, values });
  }
  return found;
}
