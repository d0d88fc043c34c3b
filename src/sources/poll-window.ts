/**
 * A recording's window over an agent's snapshots (poll.ts): which frames
 * belong to it, and when it holds all it will get. Pure: it is told the
 * times, and the times of the frames the polls carried.
 *
 * Rows are stamped on the multiples of the interval and a row holds the
 * frames that ended within the interval before it (src/parquet/rows.ts). A
 * recording for D holds the rows stamped in (start, start + D]: D / I rows
 * of an agent that samples every I.
 *
 * The start is the first snapshot's time (`at`, the agent's clock), not the
 * moment the recorder asked: the first poll carries each sampler's newest
 * frame only, so a start taken earlier lost the first row whenever the
 * first answer came after the agent's next refresh (a process starting on a
 * loaded machine: 49 rows in 10 s at 200 ms). From the first snapshot on,
 * every frame is there: its newest frames, then the frames published since
 * (`?since`).
 *
 * The end is not a timer: a timer that fires late, or a last poll that
 * comes before the agent made the last row's frame, cut the last row. The
 * window is complete once every sampler the agent serves has a frame that
 * ended after the window (its frames of the window were all published
 * before it, and came with it or earlier). A sampler that makes no such
 * frame (it failed, samples slower than the recording, or the agent went
 * away) is waited for until END_GRACE after the window's end, then the
 * recording ends with what it has. An agent that never answers within D
 * ends the recording, empty.
 *
 * The agent's clock is read through the offset seen at the first answer, so
 * a clock that is seconds off ours moves neither end.
 */

/** How long past the window's end a sampler's last frame is waited for: two intervals, at least this. */
export const MIN_END_GRACE_NS = 2_000_000_000n;

/** How long past a window's end its last frames are waited for (at least): two row intervals, at least MIN_END_GRACE_NS. */
export function endGraceNs(intervalNs: bigint): bigint {
  const twice = 2n * intervalNs;
  return twice > MIN_END_GRACE_NS ? twice : MIN_END_GRACE_NS;
}

/** The last row time at or before `ns`: rows are stamped on the multiples of the interval. */
export function rowFloor(ns: bigint, intervalNs: bigint): bigint {
  const r = ns % intervalNs;
  return r < 0n ? ns - r - intervalNs : ns - r;
}

export type Placement = 'before' | 'within' | 'after';

export class PollWindow {
  readonly #intervalNs: bigint;
  readonly #durationNs: bigint | undefined;
  /** our clock when the recording was asked for */
  readonly #askedNs: bigint;
  /** the agent's clock minus ours, at the first answer */
  #offsetNs: bigint | undefined;
  #fromNs: bigint | undefined;
  #untilNs: bigint | undefined;
  #stopped = false;

  constructor(intervalNs: bigint, durationNs: bigint | undefined, askedNs: bigint) {
    if (intervalNs <= 0n) throw new RangeError(`interval must be positive, got ${intervalNs}`);
    this.#intervalNs = intervalNs;
    this.#durationNs = durationNs;
    this.#askedNs = askedNs;
  }

  /** Rows after this time (the agent's clock) are the recording's; undefined before the first answer. */
  get fromNs(): bigint | undefined {
    return this.#fromNs;
  }

  /** The last row time of the recording (the agent's clock); undefined while it has no end. */
  get untilNs(): bigint | undefined {
    return this.#untilNs;
  }

  /** A snapshot answered: the first one, made at `atNs` (the agent's clock) and received at `nowNs` (ours), starts the window. */
  answered(atNs: bigint, nowNs: bigint): void {
    if (this.#offsetNs !== undefined || this.#stopped) return;
    this.#offsetNs = atNs - nowNs;
    this.#fromNs = rowFloor(atNs, this.#intervalNs);
    if (this.#durationNs !== undefined) this.#untilNs = rowFloor(atNs + this.#durationNs, this.#intervalNs);
  }

  /** Where a frame that ended at `endNs` (the agent's clock) falls; 'before' while no snapshot answered. */
  place(endNs: bigint): Placement {
    if (this.#fromNs === undefined || endNs <= this.#fromNs) return 'before';
    return this.#untilNs !== undefined && endNs > this.#untilNs ? 'after' : 'within';
  }

  /** Stopped at `nowNs` (ours): the window ends at the last row time before (or stays empty before the first answer). */
  stop(nowNs: bigint): void {
    this.#stopped = true;
    if (this.#offsetNs === undefined) return;
    const now = rowFloor(nowNs + this.#offsetNs, this.#intervalNs);
    if (this.#untilNs === undefined || now < this.#untilNs) this.#untilNs = now;
  }

  /** Our time after which the recording ends, complete or not; undefined while it has no end. */
  deadlineNs(): bigint | undefined {
    if (this.#offsetNs === undefined) return this.#durationNs === undefined ? undefined : this.#askedNs + this.#durationNs;
    if (this.#untilNs === undefined) return undefined;
    return this.#untilNs - this.#offsetNs + endGraceNs(this.#intervalNs);
  }

  /**
   * Whether the recording holds all it will get, at `nowNs` (ours): every
   * sampler's newest frame (`newestEnds`, the agent's clock, from the last
   * answered poll) ended after the window, or the deadline has passed.
   */
  complete(newestEnds: readonly bigint[], nowNs: bigint): boolean {
    const deadline = this.deadlineNs();
    if (deadline !== undefined && nowNs >= deadline) return true;
    const until = this.#untilNs;
    return until !== undefined && newestEnds.length > 0 && newestEnds.every((e) => e > until);
  }
}
