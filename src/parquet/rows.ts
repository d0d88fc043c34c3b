/**
 * Resampling frames into recording rows: one row per host per interval
 * boundary (unix time multiples of the interval), holding for every sampler
 * the newest frame that ended at or before the boundary. Counters and
 * histograms are cumulative, so taking them at the row time loses nothing.
 * A host gets a row only for a boundary some frame of it ended within
 * (boundary − interval, boundary]: an agent that was down leaves a gap, not
 * repeated values. Pure, no I/O; a row refers to its frames, it copies no
 * values (group.ts turns rows into columns).
 *
 * Odd frames (frames that carry their run and seq; see RowStats):
 * - per (host, sampler), a frame whose seq is not above the last one taken
 *   from the same agent run (a duplicate, or an older frame after a
 *   reconnect) is dropped: a row never goes back to older values;
 * - another run (an agent restart, seq from 1 again; or a second agent
 *   claiming the host) takes the (host, sampler) over at once when the
 *   current run's last frame said so (a clean stop), else when it has gone quiet: its frame ends more than two of the current run's
 *   intervals (at least 1 s; an agent takes longer than that to restart) after the current run's last one, or it is
 *   the third frame in a row of that run with none of the current run in
 *   between, once those span more than 1.15 s (a restarted host whose clock
 *   went back; a second live agent sends up to 500 ms of ticks a message,
 *   and its messages can come two in a row). Until then its frames
 *   are dropped as contested, so two live agents on one host never mix and
 *   the first keeps the host; the new run's counters start again from their
 *   new values;
 * - a host's row times only go forward, and no boundary gets two rows: a
 *   frame that ends at or before a boundary already passed (it came later
 *   than the lag, or the agent's clock stepped back) cannot change that
 *   row; its values are the newest of its sampler, so the host's next row
 *   carries them. A host whose clock stepped back gets its next row once
 *   its frames end after the last row again (a gap, never a repeat).
 */

import { MAX_BUNDLE_INTERVAL_MS } from '../frame/bundle.js';

/** What resampling needs of a frame. */
export interface TimedFrame {
  readonly host: string;
  readonly sampler: string;
  /** end of the acquisition window, unix ns */
  readonly endNs: bigint;
  /** agent run and sequence; without them a frame is taken as it comes */
  readonly instance?: number;
  readonly seq?: number;
  /** the last frame of its run (the agent stopped cleanly) */
  readonly last?: boolean;
}

export interface Row<F extends TimedFrame> {
  readonly timestampNs: bigint;
  readonly host: string;
  /** the newest frame of each sampler at the row time */
  readonly frames: readonly F[];
}

/** Frames the builder left out or moved, by reason. */
export interface RowStats {
  /** dropped: a duplicate, an older frame of the same run, or a frame of a replaced run */
  outOfOrder: number;
  /** taken into the host's next row: they ended at or before a boundary already passed */
  late: number;
  /** a (host, sampler) switched to another agent run */
  restarts: number;
  /** dropped: a frame of another run while the current run is live (two agents claiming one host) */
  contested: number;
}

/** Frames in a row of another run, none of the current one between, that take a (host, sampler) over ... */
const TAKEOVER_FRAMES = 3;
/** ... once they span more frame time than this: two messages of an agent's ticks and a margin */
const TAKEOVER_SPAN_NS = BigInt(2 * MAX_BUNDLE_INTERVAL_MS + 150) * 1_000_000n;
/** Quiet time of the current run after which another run takes over at once: this many intervals, at least MIN_QUIET_NS. */
const QUIET_INTERVALS = 2n;
const MIN_QUIET_NS = 1_000_000_000n;

interface Source {
  instance: number;
  seq: number;
  /** end of the current run's last frame, and the spacing of its last two */
  endNs: bigint;
  spacingNs: bigint;
  /** another run heard since the current run's last frame, how many frames in a row, and the end of the first */
  candidate: number | undefined;
  candidateFrames: number;
  candidateFirstEndNs: bigint;
  /** the current run sent its last frame (a clean stop): the next run takes over at once */
  ended: boolean;
}

/** A frame with its arrival order: of two frames of a sampler, the later taken is the newer. */
interface Taken<F> {
  readonly frame: F;
  readonly order: number;
}

interface HostState<F> {
  /** newest applied frame per sampler */
  readonly latest: Map<string, Taken<F>>;
  /** frames not yet applied, sorted by end */
  readonly pending: Taken<F>[];
  /** run and last seq per sampler */
  readonly sources: Map<string, Source>;
  /** the next boundary a row may be emitted for; undefined before the first frame */
  next: bigint | undefined;
  maxEndNs: bigint;
}

export class RowBuilder<F extends TimedFrame> {
  readonly stats: RowStats = { outOfOrder: 0, late: 0, restarts: 0, contested: 0 };
  readonly #intervalNs: bigint;
  readonly #lagNs: bigint;
  readonly #hosts = new Map<string, HostState<F>>();
  #order = 0;

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
      h = { latest: new Map(), pending: [], sources: new Map(), next: undefined, maxEndNs: frame.endNs };
      this.#hosts.set(frame.host, h);
    }
    if (!this.#admit(h, frame)) return [];
    const taken: Taken<F> = { frame, order: this.#order++ };
    if (h.next !== undefined && frame.endNs <= h.next - this.#intervalNs) {
      this.stats.late++;
      apply(h, taken);
      return [];
    }
    let i = h.pending.length;
    while (i > 0 && (h.pending[i - 1] as Taken<F>).frame.endNs > frame.endNs) i--;
    h.pending.splice(i, 0, taken);
    if (frame.endNs > h.maxEndNs) h.maxEndNs = frame.endNs;
    return this.#emit(frame.host, h, h.maxEndNs - this.#lagNs);
  }

  /** The rows still held back (end of the recording), by time then host. */
  flush(): Row<F>[] {
    const out: Row<F>[] = [];
    for (const [host, h] of this.#hosts) out.push(...this.#emit(host, h, this.#ceil(h.maxEndNs)));
    return out.sort((a, b) => (a.timestampNs === b.timestampNs ? (a.host < b.host ? -1 : 1) : a.timestampNs < b.timestampNs ? -1 : 1));
  }

  /** Whether a frame may be taken by the order rules (see the file comment); counts the ones that may not. */
  #admit(h: HostState<F>, f: F): boolean {
    if (f.instance === undefined || f.seq === undefined) return true;
    const s = h.sources.get(f.sampler);
    if (s === undefined) {
      h.sources.set(f.sampler, { instance: f.instance, seq: f.seq, endNs: f.endNs, spacingNs: 0n, candidate: undefined, candidateFrames: 0, candidateFirstEndNs: 0n, ended: f.last === true });
      return true;
    }
    if (f.instance === s.instance) {
      if (f.seq <= s.seq) {
        this.stats.outOfOrder++;
        return false;
      }
      if (f.endNs > s.endNs) s.spacingNs = f.endNs - s.endNs;
      s.seq = f.seq;
      s.endNs = f.endNs;
      s.candidate = undefined;
      s.candidateFrames = 0;
      if (f.last === true) s.ended = true;
      return true;
    }
    const quietNs = QUIET_INTERVALS * s.spacingNs > MIN_QUIET_NS ? QUIET_INTERVALS * s.spacingNs : MIN_QUIET_NS;
    if (s.candidate === f.instance) s.candidateFrames++;
    else {
      s.candidate = f.instance;
      s.candidateFrames = 1;
      s.candidateFirstEndNs = f.endNs;
    }
    // frames in a row count once they span more than two messages can hold: an agent sends up to
    // MAX_BUNDLE_INTERVAL_MS of ticks a message, and two live agents' messages can come two in a row each
    const span = f.endNs > s.candidateFirstEndNs ? f.endNs - s.candidateFirstEndNs : s.candidateFirstEndNs - f.endNs;
    const inARow = s.candidateFrames >= TAKEOVER_FRAMES && span > TAKEOVER_SPAN_NS;
    if (!s.ended && f.endNs - s.endNs <= quietNs && !inARow) {
      this.stats.contested++;
      return false;
    }
    h.sources.set(f.sampler, { instance: f.instance, seq: f.seq, endNs: f.endNs, spacingNs: 0n, candidate: undefined, candidateFrames: 0, candidateFirstEndNs: 0n, ended: f.last === true });
    this.stats.restarts++;
    return true;
  }

  #ceil(ns: bigint): bigint {
    const r = ns % this.#intervalNs;
    return r === 0n ? ns : ns - r + this.#intervalNs;
  }

  /** Rows of one host for every boundary up to `until`. */
  #emit(host: string, h: HostState<F>, until: bigint): Row<F>[] {
    const out: Row<F>[] = [];
    for (;;) {
      const first = h.pending[0]?.frame;
      if (h.next === undefined) {
        if (first === undefined) return out;
        h.next = this.#ceil(first.endNs);
      }
      // jump over boundaries with no frame at all (a gap)
      if (first !== undefined && first.endNs > h.next) h.next = this.#ceil(first.endNs);
      if (h.next > until) return out;
      let fresh = false;
      while (h.pending.length > 0 && (h.pending[0] as Taken<F>).frame.endNs <= h.next) {
        const t = h.pending.shift() as Taken<F>;
        apply(h, t);
        if (t.frame.endNs > h.next - this.#intervalNs) fresh = true;
      }
      if (fresh) out.push({ timestampNs: h.next, host, frames: [...h.latest.values()].map((t) => t.frame) });
      h.next += this.#intervalNs;
      if (h.pending.length === 0 && h.next > until) return out;
    }
  }
}

/** Makes a frame its sampler's newest unless a frame taken after it already is. */
function apply<F extends TimedFrame>(h: HostState<F>, t: Taken<F>): void {
  const current = h.latest.get(t.frame.sampler);
  if (current === undefined || t.order > current.order) h.latest.set(t.frame.sampler, t);
}
