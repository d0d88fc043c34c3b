/**
 * What the exporter knows: per (host, sampler) the latest frame and a short
 * history of earlier frames of the same agent run, so that histogram
 * percentiles can be taken over about one exporter interval. Pure, no I/O.
 */
import { MAX_BUNDLE_INTERVAL_MS } from '../frame/bundle.js';
import type { Descriptor, Frame } from '../frame/types.js';
import { oversampledIndexes, RateWindow } from './rates.js';

/** The frames one (host, sampler) contributes to a render. */
export interface ViewEntry {
  readonly latest: Frame;
  /** the frame histogram windows start from; undefined while only one frame is known */
  readonly base: Frame | undefined;
  /** per-sample rates of the oversampled counters of latest's descriptor, if any */
  readonly rates: RateWindow | undefined;
  /** the oversampling window: rates of frames that ended after this, up to latest */
  readonly sinceNs: bigint;
}

export interface ExporterStateStats {
  /** frames accepted */
  ingested: number;
  /** frames ignored: seq not newer than the latest of their run */
  outOfOrder: number;
  /** frames ignored: another agent run is live for the same host and sampler */
  contested: number;
  /** times a new agent run (instance) replaced a (host, sampler)'s history */
  restarts: number;
  /** (host, sampler) pairs dropped by forget() */
  forgotten: number;
  /** frames of a run that ended no later than its previous frame (the agent's clock stepped back): used, windows start again */
  clockSteps: number;
}

export interface ExporterStateOptions {
  /**
   * The exporter interval the history is kept for until view() says
   * otherwise; frames more than 2 × interval behind the latest are dropped.
   * Default 1 s.
   */
  readonly intervalNs?: bigint;
  /** at most this many frames per (host, sampler) with histograms (others keep the latest only); default 1024 */
  readonly maxFrames?: number;
  /** counter metrics whose per-sample rates are kept (the oversampling view); default none */
  readonly oversample?: Iterable<string>;
}

/** A new agent run takes over a quiet (host, sampler) after at least this long without frames. */
const MIN_TAKEOVER_NS = 3_000_000_000n;
/** ... and never before this, whatever its frame spacing. */
const MIN_QUIET_NS = 500_000_000n;

interface Track {
  readonly host: string;
  readonly sampler: string;
  instance: number;
  /** frames of the current run in seq order; live part is frames[head..] */
  frames: Frame[];
  head: number;
  /** per-sample rates of the current run and descriptor, when it has oversampled series */
  rates: RateWindow | undefined;
  /** time between the current run's last two frames */
  spacingNs: bigint | undefined;
  /** when the current run's last frame was taken (receive time, or its end without one) */
  heardNs: bigint;
  /** receive time between the current run's last two arrivals (frames that came together count once) */
  arrivalGapNs: bigint;
  /** runs this track replaced, most recent last: their late frames are not taken */
  readonly replaced: number[];
  /** the current run sent its last frame (a clean stop): another run takes over at once */
  ended: boolean;
}

/** Replaced runs remembered per (host, sampler). */
const REPLACED_RUNS = 4;

/** Forgets a track's history (a new run, or a clock step within one). */
function restart(track: Track): void {
  track.frames = [];
  track.head = 0;
  track.rates = undefined;
  track.spacingNs = undefined;
  track.arrivalGapNs = 0n;
}

/** Frames received closer than this came together (a bundle of several ticks). */
const SAME_ARRIVAL_NS = 20_000_000n;
/** The most quiet that twice a run's arrival gap asks for: the longest bundle_interval and a margin. */
const MAX_BATCH_QUIET_NS = BigInt(MAX_BUNDLE_INTERVAL_MS + 150) * 1_000_000n;

function compareTracks(a: Track, b: Track): number {
  if (a.host !== b.host) return a.host < b.host ? -1 : 1;
  if (a.sampler !== b.sampler) return a.sampler < b.sampler ? -1 : 1;
  return 0;
}

export class ExporterState {
  readonly stats: ExporterStateStats = { ingested: 0, outOfOrder: 0, contested: 0, restarts: 0, forgotten: 0, clockSteps: 0 };
  readonly #maxFrames: number;
  #retentionNs: bigint;
  readonly #oversample: ReadonlySet<string>;
  /** oversampled series indexes per descriptor */
  readonly #rateIndexes = new WeakMap<Descriptor, number[]>();
  readonly #histogramDescriptors = new WeakMap<Descriptor, boolean>();
  readonly #tracks = new Map<string, Track>();
  /** tracks sorted by (host, sampler); rebuilt lazily after a track is added or removed */
  #sorted: Track[] | undefined = [];

  constructor(options: ExporterStateOptions = {}) {
    const interval = options.intervalNs ?? 1_000_000_000n;
    if (interval <= 0n) throw new RangeError(`intervalNs must be positive, got ${interval}`);
    const max = options.maxFrames ?? 1024;
    if (!Number.isInteger(max) || max < 2) throw new RangeError(`maxFrames must be an integer ≥ 2, got ${max}`);
    this.#maxFrames = max;
    this.#retentionNs = 2n * interval;
    this.#oversample = new Set(options.oversample ?? []);
  }

  /**
   * How long the current run must have been quiet before another run takes
   * over: 3 of its own frame spacings (a restarted 100 ms agent takes over
   * after 0.5 s, a 1 s one after 3 s), at least 0.5 s, and at most
   * max(3 s, 2 × interval) when the spacing is not known. Two live agents on
   * one host never go quiet that long, so the first keeps the host.
   */
  #takeoverNs(track: Track): bigint {
    const cap = this.#retentionNs > MIN_TAKEOVER_NS ? this.#retentionNs : MIN_TAKEOVER_NS;
    if (track.spacingNs === undefined) return cap;
    const quiet = 3n * track.spacingNs;
    return quiet < MIN_QUIET_NS ? MIN_QUIET_NS : quiet > cap ? cap : quiet;
  }

  /** Number of (host, sampler) pairs known. */
  get size(): number {
    return this.#tracks.size;
  }

  /**
   * Takes a frame; `receivedNs` is when it arrived (unix ns, the consumer's
   * clock), used to tell a quiet run from a live one; without it, frame time.
   */
  ingest(frame: Frame, receivedNs?: bigint): void {
    const key = `${frame.host}\u0000${frame.sampler}`;
    let track = this.#tracks.get(key);
    if (track === undefined) {
      track = {
        host: frame.host, sampler: frame.sampler, instance: frame.instance, frames: [], head: 0, rates: undefined, spacingNs: undefined, heardNs: 0n, arrivalGapNs: 0n, replaced: [], ended: false,
      };
      this.#tracks.set(key, track);
      this.#sorted = undefined;
    } else if (track.instance !== frame.instance) {
      // Another agent run for this host and sampler. It takes over only once the
      // current run has gone quiet (an agent restart); while both are live (two
      // agents claiming one host) the current one keeps it and the other's frames
      // are counted. A late frame of a replaced run is older, so it never wins.
      // Quiet is measured in receive time when the caller gives it (a restarted host whose
      // clock went back still takes over), else in frame time. A replaced run never comes back.
      const latest = track.frames[track.frames.length - 1];
      const quietNs = (receivedNs ?? frame.endNs) - (receivedNs === undefined ? (latest?.endNs ?? 0n) : track.heardNs);
      // an agent that sends several ticks a message ([stream] bundle_interval) is heard only that often: quiet is
      // more than twice the gap between its arrivals too, up to a little more than the longest bundle_interval (a
      // consumer that fell behind sees gaps that say nothing of the agent)
      const batchNs = 2n * track.arrivalGapNs < MAX_BATCH_QUIET_NS ? 2n * track.arrivalGapNs : MAX_BATCH_QUIET_NS;
      const ownNs = this.#takeoverNs(track);
      const takeoverNs = ownNs > batchNs ? ownNs : batchNs;
      if ((latest !== undefined && !track.ended && quietNs < takeoverNs) || track.replaced.includes(frame.instance)) {
        this.stats.contested++;
        return;
      }
      track.replaced.push(track.instance);
      if (track.replaced.length > REPLACED_RUNS) track.replaced.shift();
      track.instance = frame.instance;
      restart(track);
      this.stats.restarts++;
    } else {
      const last = track.frames[track.frames.length - 1];
      if (last !== undefined && frame.seq <= last.seq) {
        this.stats.outOfOrder++;
        return;
      }
      if (last !== undefined && frame.endNs <= last.endNs) {
        // A newer frame of the run that ends no later than the previous one: the agent's
        // clock stepped back. Its values are the newest, but no window (histogram, rate)
        // may span the step: the history starts again from it, as after a restart.
        restart(track);
        this.stats.clockSteps++;
      }
    }
    const prev = track.frames[track.frames.length - 1];
    if (prev !== undefined) track.spacingNs = frame.endNs - prev.endNs;
    if (receivedNs !== undefined && prev !== undefined && receivedNs - track.heardNs > SAME_ARRIVAL_NS) track.arrivalGapNs = receivedNs - track.heardNs;
    track.heardNs = receivedNs ?? frame.endNs;
    track.ended = frame.last === true;
    track.frames.push(frame);
    this.stats.ingested++;
    if (this.#oversample.size > 0) this.#addRates(track, prev, frame);
    this.#trim(track);
  }

  #hasHistograms(d: Descriptor): boolean {
    let has = this.#histogramDescriptors.get(d);
    if (has === undefined) {
      has = Object.values(d.metrics).some((m) => m.kind === 'histogram');
      this.#histogramDescriptors.set(d, has);
    }
    return has;
  }

  /** Folds the rates from prev to frame into the track's window (a new window on a new descriptor). */
  #addRates(track: Track, prev: Frame | undefined, frame: Frame): void {
    let w = track.rates;
    if (w === undefined || w.descriptor !== frame.descriptor) {
      let indexes = this.#rateIndexes.get(frame.descriptor);
      if (indexes === undefined) {
        indexes = oversampledIndexes(frame.descriptor, this.#oversample);
        this.#rateIndexes.set(frame.descriptor, indexes);
      }
      w = indexes.length > 0 ? new RateWindow(frame.descriptor, indexes) : undefined;
      track.rates = w;
    }
    if (w === undefined || prev === undefined) return;
    w.add(prev, frame);
    w.trim(frame.endNs - this.#retentionNs / 2n);
  }

  /**
   * Per (host, sampler), sorted by host then sampler: the latest frame and
   * the base for histogram windows, the newest earlier frame whose endNs is
   * at least `intervalNs` before the latest's, else the oldest kept frame;
   * and the per-sample rates of the last `intervalNs`. Also makes 2 × intervalNs the history kept from now on.
   */
  view(intervalNs: bigint): ViewEntry[] {
    if (intervalNs > 0n) this.#retentionNs = 2n * intervalNs;
    if (this.#sorted === undefined) this.#sorted = [...this.#tracks.values()].sort(compareTracks);
    const out: ViewEntry[] = [];
    for (const track of this.#sorted) {
      this.#trim(track);
      const { frames, head } = track;
      const latest = frames[frames.length - 1];
      if (latest === undefined) continue;
      const target = latest.endNs - intervalNs;
      let base: Frame | undefined;
      for (let i = frames.length - 2; i >= head; i--) {
        const f = frames[i] as Frame;
        if (f.endNs <= target) {
          base = f;
          break;
        }
      }
      if (base === undefined && frames.length - head > 1) base = frames[head];
      out.push({ latest, base, rates: track.rates, sinceNs: target });
    }
    return out;
  }

  /** Per host, the end of its newest frame (unix ns). */
  lastFrameByHost(): Map<string, bigint> {
    const out = new Map<string, bigint>();
    for (const track of this.#tracks.values()) {
      const latest = track.frames[track.frames.length - 1];
      if (latest === undefined) continue;
      const seen = out.get(track.host);
      if (seen === undefined || latest.endNs > seen) out.set(track.host, latest.endNs);
    }
    return out;
  }

  /** Drops every (host, sampler) last heard from before `olderThanNs` (receive time, or frame time without it); returns how many. */
  forget(olderThanNs: bigint): number {
    let dropped = 0;
    for (const [key, track] of this.#tracks) {
      // by when it was last heard from (receive time when ingest was given it), so a host whose
      // clock runs behind the exporter's is not forgotten at every scrape
      if (track.frames.length === 0 || track.heardNs < olderThanNs) {
        this.#tracks.delete(key);
        dropped++;
      }
    }
    if (dropped > 0) this.#sorted = undefined;
    this.stats.forgotten += dropped;
    return dropped;
  }

  /**
   * Bounds a track's history: at most maxFrames, and frames beyond the
   * retention go, except the newest of them, which stays as the base of a
   * sampler that reports less often than the exporter interval.
   */
  #trim(track: Track): void {
    const frames = track.frames;
    const latest = frames[frames.length - 1];
    if (latest === undefined) return;
    const cutoff = latest.endNs - this.#retentionNs;
    // Only histogram windows need earlier frames (rates are folded in at ingest).
    if (!this.#hasHistograms(latest.descriptor)) {
      frames[0] = latest;
      frames.length = 1;
      track.head = 0;
      return;
    }
    let head = track.head;
    while (frames.length - head > this.#maxFrames) head++;
    while (frames.length - head > 1 && (frames[head + 1] as Frame).endNs <= cutoff) head++;
    if (head > 32 && head * 2 > frames.length) {
      track.frames = frames.slice(head);
      head = 0;
    }
    track.head = head;
  }
}
