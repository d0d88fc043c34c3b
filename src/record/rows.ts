/**
 * Resampling frames into recording rows: one row per host per interval
 * boundary (unix time multiples of the interval), holding for every sampler
 * the newest frame that ended at or before the boundary. Counters and
 * histograms are cumulative, so taking them at the row time loses nothing.
 * A host gets a row only for a boundary some frame of it ended within
 * (boundary − interval, boundary]: an agent that was down leaves a gap, not
 * repeated values. Pure, no I/O; a row refers to its frames, it copies no
 * values (group.ts turns rows into columns).
 */

/** What resampling needs of a frame. */
export interface TimedFrame {
  readonly host: string;
  readonly sampler: string;
  /** end of the acquisition window, unix ns */
  readonly endNs: bigint;
}

export interface Row<F extends TimedFrame> {
  readonly timestampNs: bigint;
  readonly host: string;
  /** the newest frame of each sampler at the row time */
  readonly frames: readonly F[];
}

interface HostState<F> {
  /** newest applied frame per sampler */
  readonly latest: Map<string, F>;
  /** frames not yet applied, sorted by end */
  readonly pending: F[];
  /** the next boundary a row may be emitted for; undefined before the first frame */
  next: bigint | undefined;
  maxEndNs: bigint;
}

export class RowBuilder<F extends TimedFrame> {
  readonly #intervalNs: bigint;
  readonly #lagNs: bigint;
  readonly #hosts = new Map<string, HostState<F>>();

  /**
   * `lagNs` (default 1 s): how long after a boundary a host's frames are
   * waited for (samplers of one tick arrive in any order).
   */
  constructor(intervalNs: bigint, lagNs = 1_000_000_000n) {
    if (intervalNs <= 0n) throw new RangeError(`interval must be positive, got ${intervalNs}`);
    this.#intervalNs = intervalNs;
    this.#lagNs = lagNs;
  }

  /** Hosts seen so far. */
  get hosts(): number {
    return this.#hosts.size;
  }

  /** Takes a frame; returns the rows it completes. */
  add(frame: F): Row<F>[] {
    let h = this.#hosts.get(frame.host);
    if (h === undefined) {
      h = { latest: new Map(), pending: [], next: undefined, maxEndNs: frame.endNs };
      this.#hosts.set(frame.host, h);
    }
    let i = h.pending.length;
    while (i > 0 && (h.pending[i - 1] as F).endNs > frame.endNs) i--;
    h.pending.splice(i, 0, frame);
    if (frame.endNs > h.maxEndNs) h.maxEndNs = frame.endNs;
    return this.#emit(frame.host, h, h.maxEndNs - this.#lagNs);
  }

  /** The rows still held back (end of the recording), by time then host. */
  flush(): Row<F>[] {
    const out: Row<F>[] = [];
    for (const [host, h] of this.#hosts) out.push(...this.#emit(host, h, this.#ceil(h.maxEndNs)));
    return out.sort((a, b) => (a.timestampNs === b.timestampNs ? (a.host < b.host ? -1 : 1) : a.timestampNs < b.timestampNs ? -1 : 1));
  }

  #ceil(ns: bigint): bigint {
    const r = ns % this.#intervalNs;
    return r === 0n ? ns : ns - r + this.#intervalNs;
  }

  /** Rows of one host for every boundary up to `until`. */
  #emit(host: string, h: HostState<F>, until: bigint): Row<F>[] {
    const out: Row<F>[] = [];
    for (;;) {
      const first = h.pending[0];
      if (h.next === undefined) {
        if (first === undefined) return out;
        h.next = this.#ceil(first.endNs);
      }
      // jump over boundaries with no frame at all (a gap)
      if (first !== undefined && first.endNs > h.next) h.next = this.#ceil(first.endNs);
      if (h.next > until) return out;
      let fresh = false;
      while (h.pending.length > 0 && (h.pending[0] as F).endNs <= h.next) {
        const f = h.pending.shift() as F;
        h.latest.set(f.sampler, f);
        if (f.endNs > h.next - this.#intervalNs) fresh = true;
      }
      if (fresh) out.push({ timestampNs: h.next, host, frames: [...h.latest.values()] });
      h.next += this.#intervalNs;
      if (h.pending.length === 0 && h.next > until) return out;
    }
  }
}
