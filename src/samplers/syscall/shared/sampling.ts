/**
 * Which syscalls syscall_latency times. Timing one costs two clock reads
 * and a histogram add in the kernel, nearly twice what counting it costs
 * (test/bench/README.md, "syscall timing budget": ~145 ns of 225 per
 * syscall on an AMD EPYC VM); a host doing a million syscalls a second
 * would pay ~15 % of a CPU for the histograms alone. So
 * each class is timed one by one while it runs at most `budget` syscalls a
 * second per CPU, and above that a random 1 in 2^k of its syscalls is timed
 * and added 2^k times (bpf/syscall/shared.bpf.c): the percentiles stay
 * unbiased, the counts become estimates in steps of 2^k, and a rare class
 * beside a busy one is still timed exactly. Budget 0 times every syscall.
 */

/** [kernel] syscall_timing_budget's default: syscalls a second per CPU and class timed one by one. */
export const DEFAULT_TIMING_BUDGET = 10_000;

/** The largest shift: one syscall in about a million timed. */
export const MAX_SAMPLE_SHIFT = 20;

/** The shift for a class running `perSecondPerCpu` syscalls: the smallest k that brings the timed ones within `budget`. */
export function sampleShift(perSecondPerCpu: number, budget: number): number {
  if (budget <= 0 || !(perSecondPerCpu > budget)) return 0;
  return Math.min(MAX_SAMPLE_SHIFT, Math.ceil(Math.log2(perSecondPerCpu / budget)));
}

/**
 * The shifts of every class from the histograms' (weighted) totals between
 * two reads: the rate of the last interval decides the next one.
 */
export class SamplingPlan {
  /** each class's shift, as the BPF object's sample_shift[] holds it */
  readonly shifts: Uint8Array;
  readonly #last: Float64Array;
  #lastAt: number;

  constructor(
    classes: number,
    private readonly cpus: number,
    private readonly budget: number,
    /** when the plan starts, ms of a monotonic clock */
    startedAtMs: number,
    /** each class's total then (histograms a reloaded role finds already filled); zeros when absent */
    startTotals?: ArrayLike<number>,
  ) {
    this.shifts = new Uint8Array(classes);
    this.#last = new Float64Array(classes);
    if (startTotals !== undefined) for (let k = 0; k < classes; k++) this.#last[k] = startTotals[k] ?? 0;
    this.#lastAt = startedAtMs;
  }

  /** Takes each class's total at `atMs`; returns whether a shift changed. */
  update(totals: ArrayLike<number>, atMs: number): boolean {
    const seconds = (atMs - this.#lastAt) / 1000;
    if (!(seconds > 0)) return false;
    let changed = false;
    for (let k = 0; k < this.shifts.length; k++) {
      const total = totals[k] ?? 0;
      // a total below the last one: the object was reloaded; its rate is unknown for this interval
      const delta = Math.max(0, total - (this.#last[k] as number));
      this.#last[k] = total;
      const shift = sampleShift(delta / seconds / this.cpus, this.budget);
      if (shift !== this.shifts[k]) {
        this.shifts[k] = shift;
        changed = true;
      }
    }
    this.#lastAt = atMs;
    return changed;
  }
}
