/**
 * A recording's window on the bus in frame time: a frame belongs to it when
 * it ended (its `e`, the agent's clock) after the start and at or before the
 * end, whenever it arrives. Pure: it is told the times.
 *
 * An agent behind (an overloaded server, a host that was cut off and is
 * sending its buffer) publishes frames of the window after the window's end.
 * A recording cut at that moment lost them: at 500 hosts on one box the
 * fleet was 40 s late and the durable recorder kept 226 170 of 390 000
 * frames (test/bench/README.md, "recording windows in frame time"). So the
 * window is complete only once the end has passed (in the arrivals' clock)
 * and every host and sampler seen has a frame past the end: frames of one
 * agent's sampler arrive in order, so nothing more of that pair belongs.
 * A pair that sends no such frame (its agent stopped, its sampler runs
 * slower than the grace) is waited for until the deadline: the end, plus
 * two row intervals (at least 2 s: endGraceNs), plus how late frames have
 * been arriving lately (up to MAX_LAG_WAIT_NS).
 *
 * The start is in frame time too, so that adjacent windows share no frame:
 * a frame that ended at or before it belongs to the window before. A reader
 * of the stream starts `leadNs` before the start (in store time), for the
 * frames of an agent whose clock is ahead of the server's.
 *
 * Arrival times are the caller's clock (store time for a source that reads
 * the stream, now for a live one); the deadline is in that clock.
 */
import { endGraceNs, rowFloor } from './poll-window.js';

/** Lateness is the most seen over the last one or two spans of arrivals of this length. */
const LAG_SPAN_NS = 10_000_000_000n;
/** Lateness beyond this is not waited for (a host sending a long outage's buffer). */
export const MAX_LAG_WAIT_NS = 120_000_000_000n;

export class WindowEnd {
  readonly endNs: bigint;
  /** frames that ended at or before this are the window before's; undefined: no start */
  readonly startNs: bigint | undefined;
  /** frames left out: ended at or before the start, after the end */
  before = 0;
  after = 0;
  readonly #graceNs: bigint;
  /** `host.sampler` -> whether a frame of it past the end was seen */
  readonly #past = new Map<string, boolean>();
  /** pairs seen with no frame past the end yet */
  #open = 0;
  #spanStartNs: bigint | undefined;
  #lagNs = 0n;
  #lagBeforeNs = 0n;

  /**
   * The window (startNs, endNs], both moved down to a row time (a multiple of
   * the interval): a row is stamped at the end of the interval it holds
   * (src/parquet/rows.ts), so a bound within a row would put that row in two
   * adjacent windows, each with half of its frames. A window shorter than a
   * row keeps its bounds as given.
   */
  constructor(endNs: bigint, intervalNs: bigint, startNs?: bigint) {
    const floor = (ns: bigint): bigint => (intervalNs > 0n ? rowFloor(ns, intervalNs) : ns);
    const end = floor(endNs);
    const start = startNs === undefined ? undefined : floor(startNs);
    const aligned = start === undefined ? end > endNs - intervalNs : end > start;
    this.endNs = aligned ? end : endNs;
    this.startNs = aligned ? start : startNs;
    this.#graceNs = endGraceNs(intervalNs);
  }

  /** How far before the start a reader of the stream begins: two intervals, at least 2 s. */
  get leadNs(): bigint {
    return this.#graceNs;
  }

  /**
   * A frame of `host`'s `sampler` that ended at `frameEndNs`, arrived at
   * `arrivedNs` (undefined: not known). Returns whether it belongs to the
   * window.
   */
  admit(host: string, sampler: string, frameEndNs: bigint, arrivedNs: bigint | undefined): boolean {
    if (arrivedNs !== undefined) this.sample(arrivedNs, frameEndNs);
    if (this.startNs !== undefined && frameEndNs <= this.startNs) {
      this.before++;
      return false;
    }
    const within = frameEndNs <= this.endNs;
    if (!within) this.after++;
    const key = `${host}.${sampler}`;
    const past = this.#past.get(key);
    if (past === undefined) {
      this.#past.set(key, !within);
      if (within) this.#open++;
    } else if (!past && !within) {
      this.#past.set(key, true);
      this.#open--;
    }
    return within;
  }

  /**
   * Whether nothing more belongs, at `nowNs` (the arrivals' clock): the end
   * has passed and every host and sampler seen has a frame past it. Not
   * before the end: a frame stamped far ahead (a clock off, or a hostile
   * publisher) must not close the window early.
   */
  completeAt(nowNs: bigint): boolean {
    return nowNs > this.endNs && this.#past.size > 0 && this.#open === 0;
  }

  /** Whether the read ends at `nowNs` (the arrivals' clock): the window is complete, or its deadline has passed. */
  overAt(nowNs: bigint): boolean {
    return this.completeAt(nowNs) || nowNs > this.deadlineNs();
  }

  /** pairs seen that have no frame past the end yet */
  get waitingFor(): number {
    return this.#open;
  }

  /** Up to `n` of them, `host.sampler`, for a log. */
  waitingPairs(n: number): string[] {
    const out: string[] = [];
    for (const [key, past] of this.#past) {
      if (out.length >= n) break;
      if (!past) out.push(key);
    }
    return out;
  }

  /** How late frames have been arriving lately (0 when on time or not known). */
  get lagNs(): bigint {
    return this.#lagNs > this.#lagBeforeNs ? this.#lagNs : this.#lagBeforeNs;
  }

  /** After this (the arrivals' clock) the window is over, complete or not. */
  deadlineNs(): bigint {
    const lag = this.lagNs;
    return this.endNs + this.#graceNs + (lag < MAX_LAG_WAIT_NS ? lag : MAX_LAG_WAIT_NS);
  }

  /** Lateness of one arrival: a frame that ended at `frameEndNs`, arrived at `arrivedNs`; admit() calls it. */
  sample(arrivedNs: bigint, frameEndNs: bigint): void {
    if (this.#spanStartNs === undefined || arrivedNs - this.#spanStartNs >= LAG_SPAN_NS) {
      // a new span: the one before is kept only when it just ended (arrivals a long pause apart forget it)
      const adjacent = this.#spanStartNs !== undefined && arrivedNs - this.#spanStartNs < 2n * LAG_SPAN_NS;
      this.#lagBeforeNs = adjacent ? this.#lagNs : 0n;
      this.#lagNs = 0n;
      this.#spanStartNs = arrivedNs;
    }
    const lag = arrivedNs - frameEndNs;
    if (lag > this.#lagNs) this.#lagNs = lag;
  }

  /** What the window left out and what it waited for, for the recording's log. */
  summary(): { before: number; after: number; neverPastEnd: number; examples: string[] } {
    return { before: this.before, after: this.after, neverPastEnd: this.#open, examples: this.waitingPairs(5) };
  }
}
