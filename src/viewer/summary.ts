/**
 * A host's row on the fleet page, from the newest samples of a few
 * metrics: CPU busy share, run-queue p99, memory, network and block IO
 * rates, sampler states and the agent's publish buffer. Pure.
 */
import { percentiles, subtract, type SparseHistogram } from '../metrics/histogram.js';
import type { HostSummary } from './api.js';
import { isHistogramColumn, type Track } from './track.js';

/** The metrics the fleet page reads (the live fleet view keeps only these). */
export const SUMMARY_METRICS: ReadonlySet<string> = new Set([
  'cpu_usage', 'cpu_cores', 'scheduler_runqueue_latency', 'memory_total', 'memory_available', 'network_bytes', 'blockio_bytes',
  'rezolus_sampler_state', 'rezolus_publish_buffered', 'rezolus_publish_refused',
]);

/** cpu_usage states that are not busy time (guest and guest_nice are already inside user and nice) */
const NOT_BUSY = new Set(['idle', 'iowait', 'guest', 'guest_nice']);

/** Rates over at least this span: one 100 ms sample pair is noise on a table. */
const RATE_SPAN_MS = 1000;

interface Pair {
  readonly a: number;
  readonly b: number;
  readonly dtS: number;
}

/** The newest sample and the one at least RATE_SPAN_MS before it (same run), as indexes. */
function ratePair(track: Track): Pair | undefined {
  const b = track.t.length - 1;
  if (b < 1) return undefined;
  const tb = track.t[b] as number;
  let a = b - 1;
  while (a > 0 && tb - (track.t[a] as number) < RATE_SPAN_MS && track.run[a - 1] === track.run[b]) a--;
  if (track.run[a] !== track.run[b]) return undefined;
  return { a, b, dtS: (tb - (track.t[a] as number)) / 1000 };
}

/** Σ of per-second rates of the counter columns of `metric` whose labels pass `keep`; null when none. */
function rate(tracks: readonly Track[], metric: string, keep: (labels: Readonly<Record<string, string>>) => boolean): number | null {
  let sum: number | null = null;
  for (const track of tracks) {
    const p = ratePair(track);
    if (p === undefined) continue;
    for (const c of track.columns.values()) {
      if (c.info.metric !== metric || isHistogramColumn(c) || !keep(c.info.labels)) continue;
      const d = (c.v[p.b] as number) - (c.v[p.a] as number);
      if (!Number.isFinite(d) || d < 0) continue;
      sum = (sum ?? 0) + d / p.dtS;
    }
  }
  return sum;
}

/** The newest value of an unlabelled gauge; null when absent. */
function last(tracks: readonly Track[], metric: string): number | null {
  for (const track of tracks) {
    for (const c of track.columns.values()) {
      if (c.info.metric !== metric || isHistogramColumn(c)) continue;
      const v = c.v[c.v.length - 1] as number;
      return Number.isFinite(v) ? v : null;
    }
  }
  return null;
}

function runqueueP99(tracks: readonly Track[]): number | null {
  for (const track of tracks) {
    const p = ratePair(track);
    if (p === undefined) continue;
    for (const c of track.columns.values()) {
      if (c.info.metric !== 'scheduler_runqueue_latency' || !isHistogramColumn(c)) continue;
      const [hb, ha] = [c.h[p.b], c.h[p.a]];
      if (hb === undefined || ha === undefined) return null;
      const delta: SparseHistogram | undefined = subtract(hb, ha);
      const q = delta === undefined ? undefined : percentiles(delta, [0.99]);
      return q === undefined ? null : Number(q[0]);
    }
  }
  return null;
}

function samplerStates(tracks: readonly Track[]): HostSummary['samplers'] {
  const states: Record<string, { state: string }> = {};
  for (const track of tracks) {
    for (const c of track.columns.values()) {
      if (c.info.metric !== 'rezolus_sampler_state' || isHistogramColumn(c)) continue;
      const sampler = c.info.labels.sampler;
      const state = c.info.labels.state;
      if (sampler !== undefined && state !== undefined && c.v[c.v.length - 1] === 1) states[sampler] = { state };
    }
  }
  return states;
}

export function summarize(host: string, lastMs: number, tracks: readonly Track[]): HostSummary {
  const busyNs = rate(tracks, 'cpu_usage', (l) => !NOT_BUSY.has(l.state ?? ''));
  const cpus = last(tracks, 'cpu_cores');
  return {
    host,
    lastMs,
    // /proc/stat counts in ticks: over a second a busy machine can read a few % above its CPUs
    cpu: busyNs === null || cpus === null || cpus <= 0 ? null : Math.min(1, busyNs / 1e9 / cpus),
    cpus,
    runqueueP99Ns: runqueueP99(tracks),
    memoryTotalBytes: last(tracks, 'memory_total'),
    memoryAvailableBytes: last(tracks, 'memory_available'),
    networkRxBps: rate(tracks, 'network_bytes', (l) => l.direction === 'receive'),
    networkTxBps: rate(tracks, 'network_bytes', (l) => l.direction === 'transmit'),
    blockReadBps: rate(tracks, 'blockio_bytes', (l) => l.op === 'read'),
    blockWriteBps: rate(tracks, 'blockio_bytes', (l) => l.op === 'write'),
    samplers: samplerStates(tracks),
    buffered: last(tracks, 'rezolus_publish_buffered'),
    refused: last(tracks, 'rezolus_publish_refused'),
  };
}
