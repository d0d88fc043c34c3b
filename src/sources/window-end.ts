/**
 * The end of a recording's window on the bus, in frame time: a frame
 * belongs to the window when it ended (its `e`, the agent's clock) at or
 * before the end, whenever it arrives. Pure: it is told the times.
 *
 * An agent behind (an overloaded server, a host that was cut off and is
 * sending its buffer) publishes frames of the window after the window's end.
 * A recording cut at that moment lost them: at 500 hosts on one box the
 * fleet was 27 s late and the recorder's file lacked its last ~12 ticks
 * (test/bench/README.md, "fleet"). So the window is complete only once
 * every host and sampler seen has a frame past the end: frames of one
 * agent's sampler arrive in order, so nothing more of that pair belongs.
 * A pair that sends no such frame (its agent stopped, its sampler runs
 * slower than the grace) is waited for until the deadline: the end, plus
 * two row intervals (at least MIN_END_GRACE_NS), plus how late frames have
 * been arriving lately (up to MAX_LAG_WAIT_NS).
 *
 * Arrival times are the caller's clock (store time for a source that reads
 * the stream, now for a live one); the deadline is in that clock.
 */
import { MIN_END_GRACE_NS } from './poll-window.js';

/** Lateness is the most seen over the last one or two spans of arrivals of this length. */
const LAG_SPAN_NS = 10_000_000_000n;
/** Lateness beyond this is not waited for (a host sending a long outage's buffer). */
export const MAX_LAG_WAIT_NS = 120_000_000_000n;

export class WindowEnd {
  readonly endNs: bigint;
  readonly #graceNs: bigint;
  /** `host.sampler` -> whether a frame of it past the end was seen */
  readonly #past = new Map<string, boolean>();
  /** pairs seen with no frame past the end yet */
  #open = 0;
  #spanStartNs: bigint | undefined;
  #lagNs = 0n;
  #lagBeforeNs = 0n;

  constructor(endNs: bigint, intervalNs: bigint) {
    this.endNs = endNs;
    const twice = 2n * intervalNs;
    this.#graceNs = twice > MIN_END_GRACE_NS ? twice : MIN_END_GRACE_NS;
  }

  /**
   * A frame of `host`'s `sampler` that ended at `frameEndNs`, arrived at
   * `arrivedNs` (undefined: not known, a frame read back from a spool).
   * Returns whether it belongs to the window.
   */
  admit(host: string, sampler: string, frameEndNs: bigint, arrivedNs: bigint | undefined): boolean {
    if (arrivedNs !== undefined) this.#sampleLag(arrivedNs, frameEndNs);
    const within = frameEndNs <= this.endNs;
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

  /** Every host and sampler seen has a frame past the end: nothing more of theirs belongs. */
  get complete(): boolean {
    return this.#past.size > 0 && this.#open === 0;
  }

  /** pairs seen that have no frame past the end yet */
  get waitingFor(): number {
    return this.#open;
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

  #sampleLag(arrivedNs: bigint, frameEndNs: bigint): void {
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
}
