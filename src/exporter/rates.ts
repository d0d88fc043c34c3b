/**
 * The oversampling view: for counters an agent samples faster than the
 * exporter interval, the rate between each two consecutive frames (per
 * second, in the counter's raw unit), kept for one interval so the exporter
 * can serve percentiles of it. A 200 ms burst inside a 15 s scrape shows in
 * the maximum although the 15 s average hides it. Pure, no I/O.
 */
import type { Descriptor, Frame, FrameValue } from '../frame/types.js';

/** Rows kept per window at most, whatever the interval (10 Hz over 15 min). */
const MAX_ROWS = 9000;
/** Rates a window must once hold before the view is served for it. */
const MIN_SAMPLES = 3;

/**
 * The increase from `a` to `b`, or NaN when it is not one: a value that is
 * not an integer counter, or a decrease (a reset or a wrap), which is left
 * out rather than turned into a negative or spiked rate.
 */
export function counterIncrease(a: FrameValue | undefined, b: FrameValue | undefined): number {
  if (typeof a === 'number' && typeof b === 'number') {
    const d = b - a;
    return d >= 0 && Number.isFinite(d) ? d : Number.NaN;
  }
  const x = toBigInt(a);
  const y = toBigInt(b);
  if (x === undefined || y === undefined) return Number.NaN;
  const d = y - x;
  return d >= 0n ? Number(d) : Number.NaN;
}

function toBigInt(v: FrameValue | undefined): bigint | undefined {
  if (typeof v === 'bigint') return v;
  if (typeof v === 'number' && Number.isSafeInteger(v)) return BigInt(v);
  return undefined;
}

/**
 * Nearest-rank percentiles of `samples` (NaN left out): for each q the
 * sample at rank max(1, ceil(q·N)) in ascending order, the same rank rule as
 * the histograms but on exact values. Sorts `samples` in place; undefined
 * when no sample is a number.
 */
export function nearestRank(samples: number[], qs: readonly number[]): number[] | undefined {
  let n = 0;
  for (const s of samples) if (!Number.isNaN(s)) samples[n++] = s;
  samples.length = n;
  if (n === 0) return undefined;
  samples.sort((x, y) => x - y);
  return qs.map((q) => samples[Math.min(n, Math.max(1, Math.ceil(q * n))) - 1] as number);
}

/** The descriptor series indexes whose metric is a counter named in `metrics`. */
export function oversampledIndexes(descriptor: Descriptor, metrics: ReadonlySet<string>): number[] {
  const out: number[] = [];
  const series = Array.isArray(descriptor.series) ? descriptor.series : [];
  for (let i = 0; i < series.length; i++) {
    const name = Array.isArray(series[i]) ? series[i]?.[0] : undefined;
    if (typeof name !== 'string' || !metrics.has(name)) continue;
    const decl = Object.hasOwn(descriptor.metrics, name) ? descriptor.metrics[name] : undefined;
    if (decl?.kind === 'counter') out.push(i);
  }
  return out;
}

/**
 * Per-sample rates of one (host, sampler)'s oversampled series, for frames
 * of one descriptor. Row r holds the rates from the frame before to the frame
 * that ended at ends[r].
 */
export class RateWindow {
  readonly descriptor: Descriptor;
  /** descriptor series indexes, in order; rates[r][k] belongs to indexes[k] */
  readonly indexes: readonly number[];
  readonly #ends: bigint[] = [];
  readonly #rows: Float64Array[] = [];
  #head = 0;
  #served = false;

  constructor(descriptor: Descriptor, indexes: readonly number[]) {
    this.descriptor = descriptor;
    this.indexes = indexes;
  }

  /** Number of rows held. */
  get size(): number {
    return this.#ends.length - this.#head;
  }

  /**
   * Adds the rates from `prev` to `next` (same descriptor as this window,
   * later end). Returns false, adding nothing, when the frames cannot give a
   * rate (another descriptor, no time between them).
   */
  add(prev: Frame, next: Frame): boolean {
    if (prev.descriptor !== this.descriptor || next.descriptor !== this.descriptor) return false;
    const dtNs = Number(next.endNs - prev.endNs);
    if (!(dtNs > 0)) return false;
    const perSecond = 1e9 / dtNs;
    const row = new Float64Array(this.indexes.length);
    for (let k = 0; k < this.indexes.length; k++) {
      const i = this.indexes[k] as number;
      row[k] = counterIncrease(prev.values[i], next.values[i]) * perSecond;
    }
    this.#ends.push(next.endNs);
    this.#rows.push(row);
    if (this.size > MAX_ROWS) this.#head++;
    return true;
  }

  /** Drops rows that ended at or before `cutoffNs`. */
  trim(cutoffNs: bigint): void {
    let head = this.#head;
    while (head < this.#ends.length && (this.#ends[head] as bigint) <= cutoffNs) head++;
    if (head > 64 && head * 2 > this.#ends.length) {
      this.#ends.splice(0, head);
      this.#rows.splice(0, head);
      head = 0;
    }
    this.#head = head;
  }

  /**
   * Whether to serve the view for the window after `sinceNs`: from the first
   * time it holds at least MIN_SAMPLES rates (the agent samples at least
   * about twice per interval) on, for as long as it holds any. An agent that
   * samples once per interval gets no view: its raw counter says it all, and
   * four percentiles of one sample would only repeat it.
   */
  serve(sinceNs: bigint): boolean {
    let n = 0;
    for (let r = this.#ends.length - 1; r >= this.#head && (this.#ends[r] as bigint) > sinceNs && n < MIN_SAMPLES; r--) n++;
    if (n >= MIN_SAMPLES) this.#served = true;
    return this.#served && n > 0;
  }

  /**
   * The rates of series k (position in `indexes`) from rows that ended after
   * `sinceNs`, written into `out` (cleared first); NaN marks a sample left out.
   */
  samples(k: number, sinceNs: bigint, out: number[]): number[] {
    out.length = 0;
    for (let r = this.#ends.length - 1; r >= this.#head && (this.#ends[r] as bigint) > sinceNs; r--) {
      out.push((this.#rows[r] as Float64Array)[k] as number);
    }
    return out;
  }
}
