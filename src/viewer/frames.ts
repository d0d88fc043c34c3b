/**
 * Frames into Tracks: one Track per (host, sampler), each frame one sample
 * at the end of its acquisition window. Series ids are the recording's
 * column names, so a live host and a recorded one name a series alike.
 */
import type { Frame } from '../frame/types.js';
import type { SparseHistogram } from '../metrics/histogram.js';
import { columnsOf } from '../parquet/columns.js';
import { Track, type SeriesInfo } from './track.js';

type Sample = Map<string, { readonly info: SeriesInfo; readonly value: number | SparseHistogram }>;

/** The series of a descriptor, computed once per descriptor hash. */
const infosOf = new WeakMap<Frame['descriptor'], (SeriesInfo | undefined)[]>();

function seriesOf(frame: Frame): (SeriesInfo | undefined)[] {
  let infos = infosOf.get(frame.descriptor);
  if (infos === undefined) {
    const d = frame.descriptor;
    infos = columnsOf(d).map((c) =>
      c === undefined ? undefined : { id: c.name, metric: c.metric, kind: c.kind, unit: c.unit, labels: c.labels, description: d.metrics[c.metric]?.description ?? '' },
    );
    infosOf.set(frame.descriptor, infos);
  }
  return infos;
}

/** A frame's values by series id, counters as numbers (precision beyond 2^53 does not matter on a chart). */
export function sampleOf(frame: Frame, only?: ReadonlySet<string>): Sample {
  const infos = seriesOf(frame);
  const sample: Sample = new Map();
  frame.values.forEach((value, i) => {
    const info = infos[i];
    if (info === undefined || (only !== undefined && !only.has(info.metric))) return;
    sample.set(info.id, { info, value: typeof value === 'bigint' ? Number(value) : value });
  });
  return sample;
}

/** The end of a frame's window in unix ms. */
export function frameTimeMs(frame: Frame): number {
  return Number(frame.endNs / 1000n) / 1000;
}

/**
 * How far ahead of this clock a frame may be stamped. A track only goes
 * forward, so one frame from far ahead (an agent's clock set years on, or a
 * hostile publisher) taken in would hide every later frame of its sampler
 * and keep its host on the fleet page for ever; such a frame is dropped.
 */
export const AHEAD_MS = 5 * 60_000;

/**
 * Series a host's tracks hold at most (a host with 1024 cgroups has about
 * 50 000). Every column holds a value (or NaN) per sample, so a host whose
 * label sets change with each frame would otherwise grow the viewer by its
 * series × samples: 5000 new series a frame took 3.4 GB in 35 s. A series
 * beyond the bound is left out (counted) until trimming frees room.
 */
export const HOST_MAX_SERIES = 100_000;

/**
 * A host's frames as tracks per sampler. Frames older than a sampler's
 * newest are dropped (a track only goes forward), and so are frames stamped
 * more than AHEAD_MS after this clock; `only` keeps the metrics named (the
 * fleet page's summaries).
 */
export class HostTracks {
  readonly bySampler = new Map<string, Track>();
  lastMs = 0;
  /** frames dropped for being stamped more than AHEAD_MS ahead of this clock */
  ahead = 0;
  /** values of series left out because the host already had maxSeries */
  overflow = 0;

  constructor(
    readonly host: string,
    private readonly only?: ReadonlySet<string>,
    private readonly maxSeries: number = HOST_MAX_SERIES,
  ) {}

  add(frame: Frame, nowMs: number = Date.now()): boolean {
    const t = frameTimeMs(frame);
    if (t > nowMs + AHEAD_MS) {
      this.ahead++;
      return false;
    }
    let track = this.bySampler.get(frame.sampler);
    if (track === undefined) {
      track = new Track();
      this.bySampler.set(frame.sampler, track);
    }
    const last = track.last;
    if (last !== undefined && t <= last) return false;
    const sample = sampleOf(frame, this.only);
    let room: number | undefined;
    for (const id of sample.keys()) {
      if (track.columns.has(id)) continue;
      room ??= this.maxSeries - this.seriesCount();
      if (room > 0) room--;
      else {
        sample.delete(id);
        this.overflow++;
      }
    }
    track.append(t, frame.instance, sample);
    if (t > this.lastMs) this.lastMs = t;
    return true;
  }

  trim(beforeMs: number): void {
    for (const [sampler, track] of this.bySampler) {
      track.trim(beforeMs);
      if (track.t.length === 0) this.bySampler.delete(sampler);
    }
  }

  /** the series held, over every sampler */
  seriesCount(): number {
    let n = 0;
    for (const track of this.bySampler.values()) n += track.columns.size;
    return n;
  }

  tracks(): Track[] {
    return [...this.bySampler.values()];
  }
}
