/**
 * Which syscalls syscall_latency times. Timing one costs two clock reads
 * and a histogram add in the kernel, nearly twice what counting it costs
 * (test/bench/README.md, "syscall timing budget": ~145 ns of 225 per
 * syscall on an AMD EPYC VM); a host doing a million syscalls a second
 * would pay ~15 % of a CPU for the histograms alone. So
 * each class is timed one by one while it runs at most `budget` syscalls a
 * second per CPU, and above that a random 1 in 2^k of its syscalls is timed
 * and added 2^k times (bpf/syscall/shared.bpf.c): picked at random whatever
 * their length, the timed ones keep the distribution unbiased, while counts
 * and the tail become estimates (a rare slow syscall among many fast ones is
 * missed or counted 2^k times); a rare class beside a busy one is still
 * timed exactly. Budget 0 times every syscall.
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

/** Rates are taken over windows at least this long: shorter ones (the first read after start, refreshes faster than this) are joined to the next. */
export const MIN_WINDOW_MS = 250;
/** A class's shift follows the highest of its rates over this many windows: raised at once, lowered once the load has stayed lower this long. */
export const HOLD_WINDOWS = 3;

/**
 * The shifts of every class from the histograms' (weighted) totals between
 * reads. A window's rates decide the shifts of the windows after it, so a
 * burst that starts after a quiet spell is timed in full until the next
 * refresh; holding the highest rate of the last few windows keeps a load
 * that comes and goes (a burst every other second) sampled rather than timed
 * in full at each burst.
 */
export class SamplingPlan {
  /** each class's shift, as the BPF object's sample_shift[] holds it */
  readonly shifts: Uint8Array;
  readonly #last: Float64Array;
  /** per class, its rates (a second per CPU) of the last HOLD_WINDOWS windows */
  readonly #rates: Float64Array;
  #window = 0;
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
    this.#rates = new Float64Array(classes * HOLD_WINDOWS);
    if (startTotals !== undefined) for (let k = 0; k < classes; k++) this.#last[k] = startTotals[k] ?? 0;
    this.#lastAt = startedAtMs;
  }

  /** Takes each class's total at `atMs`; returns whether a shift changed. */
  update(totals: ArrayLike<number>, atMs: number): boolean {
    const seconds = (atMs - this.#lastAt) / 1000;
    if (!(seconds * 1000 >= MIN_WINDOW_MS)) return false;
    const slot = this.#window++ % HOLD_WINDOWS;
    let changed = false;
    for (let k = 0; k < this.shifts.length; k++) {
      const total = totals[k] ?? 0;
      // a total below the last one: the object was reloaded; its rate is unknown for this window
      const delta = Math.max(0, total - (this.#last[k] as number));
      this.#last[k] = total;
      const at = k * HOLD_WINDOWS;
      this.#rates[at + slot] = delta / seconds / this.cpus;
      let highest = 0;
      for (let w = 0; w < HOLD_WINDOWS; w++) highest = Math.max(highest, this.#rates[at + w] as number);
      const shift = sampleShift(highest, this.budget);
      if (shift !== this.shifts[k]) {
        this.shifts[k] = shift;
        changed = true;
      }
    }
    this.#lastAt = atMs;
    return changed;
  }
}
