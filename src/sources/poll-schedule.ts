/**
 * When the poll source (poll.ts) asks an agent for its snapshot. Pure: it
 * is told what each poll carried and the time, and says how long to wait.
 *
 * The agent samples on its own clock, on the wall clock's whole intervals
 * (src/agent/clock.ts), and its snapshot holds only each sampler's newest
 * frame. A poller that wakes on those same boundaries races the refresh:
 * one poll gets the frame before the boundary again (a duplicate, left out
 * by its seq), the next one the frame after the following boundary, and the
 * frame between is lost: a row missing, a 2 s gap at 1 s (issue 18).
 *
 * So the schedule follows the agent's phase, read from the frames
 * themselves: a sampler's spacing is the time between the starts of two of
 * its refreshes (begin, steadier than the end) per seq. A frame stays in the
 * snapshot from its end until the next one's, about a spacing; for a
 * sampler whose every frame makes a row (it samples at the recording's
 * interval or slower), the next poll comes half way through that time (its
 * last frame's end plus one and a half spacings), as far as can be from
 * both races. A frame not there yet (a refresh slower by more than half a
 * spacing) is asked for again every few ms for a quarter of a spacing, then
 * taken as a tick the agent skipped (the next one is awaited the same way);
 * a sampler with no new frame for three spacings has stopped (a failed
 * sampler keeps its last frame in the snapshot) and is left to the regular
 * polls until it moves again.
 *
 * Regular polls come half an interval off the row boundaries (the multiples
 * of the interval): for an agent that samples faster than the recording,
 * mid-row is where the newest frame surely belongs to that row; they are
 * also the polls while nothing is known (the start, a spacing not measured
 * yet, a failed poll, an agent that is away). Times are the agent's clock,
 * read as ours; a frame from our future (a clock ahead by more than a
 * quarter of a spacing) leaves its sampler to the regular polls.
 */

/** What a poll carried of one sampler: its newest frame. `key` is host, sampler and agent run. */
export interface PolledFrame {
  readonly key: string;
  readonly seq: number;
  readonly beginNs: bigint;
  readonly endNs: bigint;
}

interface Track {
  seq: number;
  beginNs: bigint;
  endNs: bigint;
  /** time between two refreshes; the recording's interval until two frames were seen (measured) */
  spacingNs: bigint;
  measured: boolean;
}

const MS = 1_000_000n;
/** A frame not there yet is asked for again this much later: a fortieth of the spacing, 2 to 25 ms. */
const MIN_STEP_NS = 2n * MS;
const MAX_STEP_NS = 25n * MS;

export class PollSchedule {
  readonly #intervalNs: bigint;
  #tracks = new Map<string, Track>();

  constructor(intervalNs: bigint) {
    if (intervalNs <= 0n) throw new RangeError(`interval must be positive, got ${intervalNs}`);
    this.#intervalNs = intervalNs;
  }

  /**
   * Takes what a poll carried (every sampler of the snapshot; one not
   * carried is forgotten, as an agent run that ended) and returns the wait
   * until the next poll, from `nowNs`.
   */
  polled(frames: readonly PolledFrame[], nowNs: bigint): bigint {
    const tracks = new Map<string, Track>();
    for (const f of frames) {
      const t = this.#tracks.get(f.key);
      if (t === undefined) tracks.set(f.key, { seq: f.seq, beginNs: f.beginNs, endNs: f.endNs, spacingNs: this.#intervalNs, measured: false });
      else {
        if (f.seq > t.seq && f.beginNs > t.beginNs) {
          const spacing = (f.beginNs - t.beginNs) / BigInt(f.seq - t.seq);
          // a tick the agent skipped (an overrun keeps its seq) shows as a long spacing once: not the agent's rhythm
          if (!t.measured || spacing * 2n < t.spacingNs * 3n) t.spacingNs = spacing;
          t.measured = true;
          t.seq = f.seq;
          t.beginNs = f.beginNs;
          t.endNs = f.endNs;
        }
        tracks.set(f.key, t);
      }
    }
    this.#tracks = tracks;
    return this.wait(nowNs);
  }

  /** A poll failed: nothing is known to be due (no burst of polls at an agent that is away); the wait until the next mid-point. */
  failed(nowNs: bigint): bigint {
    this.#tracks = new Map();
    return this.wait(nowNs);
  }

  /** The wait from `nowNs` until the next poll. */
  wait(nowNs: bigint): bigint {
    const half = this.#intervalNs / 2n;
    const regular = (floorDiv(nowNs - half, this.#intervalNs) + 1n) * this.#intervalNs + half;
    let next: bigint | undefined;
    let needRegular = this.#tracks.size === 0;
    for (const t of this.#tracks.values()) {
      const at = this.#dueFor(t, nowNs);
      // until its spacing is measured, a sampler may be one that samples faster than the recording
      if (at === undefined || !t.measured) needRegular = true;
      if (at !== undefined && (next === undefined || at < next)) next = at;
    }
    if (next === undefined || (needRegular && regular < next)) next = regular;
    return next - nowNs;
  }

  /** When to poll for a track's next frame; undefined when its frames are left to the regular polls. */
  #dueFor(t: Track, nowNs: bigint): bigint | undefined {
    const s = t.spacingNs;
    // faster than the recording: not every frame makes a row
    if (s * 10n < this.#intervalNs * 9n) return undefined;
    // a frame from our future: the agent's clock is not ours
    if (t.endNs - nowNs > s / 4n) return undefined;
    const step = clamp(s / 40n, MIN_STEP_NS, MAX_STEP_NS);
    // the next frame, then (a tick the agent skipped) the one after
    for (const k of [1n, 2n]) {
      // half a spacing into the time the snapshot holds it
      const at = t.endNs + k * s + s / 2n;
      if (nowNs < at) return at;
      // not there yet (a slower refresh): ask again soon, for a quarter of a spacing
      if (nowNs < at + s / 4n) return nowNs + step;
    }
    // stopped, or away
    return undefined;
  }
}

function floorDiv(a: bigint, b: bigint): bigint {
  const q = a / b;
  return a % b !== 0n && a < 0n !== b < 0n ? q - 1n : q;
}

function clamp(v: bigint, lo: bigint, hi: bigint): bigint {
  return v < lo ? lo : v > hi ? hi : v;
}
