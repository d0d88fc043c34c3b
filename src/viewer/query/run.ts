/**
 * One query of the HTTP API over a host's tracks: find the metric's series,
 * keep those whose labels match, pick the step, and reduce each series (or,
 * for histograms, all of them merged) to a value per step.
 */
import { RezolusError } from '../../errors.js';
import type { MetricKind } from '../../metrics/metric.js';
import type { QueryFn, QueryResult, QuerySeries } from '../api.js';
import { type Column, type HistogramColumn, type Track, isHistogramColumn } from '../track.js';
import { gaugeEnvelope } from './envelope.js';
import { type HistogramInput, stepHeatmap, stepHistograms, stepPercentiles } from './histograms.js';
import { labelMatcher } from './match.js';
import { counterRates } from './rates.js';
import { defaultFn } from './sections.js';
import { MIN_BUDGET, type SampleBins, binSamples, chooseStep, intervalStarts, clampBudget, lowerBound, nativeSpacing, stepGrid, stepTimes } from './steps.js';

export interface Query {
  readonly metric: string;
  /** what to reduce the metric to; by default defaultFn of its kind */
  readonly fn?: QueryFn | undefined;
  /** label key → glob (`*`, `?`); every one must match */
  readonly match: Readonly<Record<string, string>>;
  /** unix ms, end inclusive */
  readonly start: number;
  readonly end: number;
  /** columns the chart can show (clamped to 10..5000) */
  readonly budget: number;
}

/** Series × steps of one answer at most: a query of a metric with many series gets a coarser step (never fewer than MIN_BUDGET steps). */
export const MAX_QUERY_CELLS = 1_000_000;
/** Series of one answer at most (the first by name); QueryResult.omitted counts the rest. */
export const MAX_QUERY_SERIES = 20_000;

/** A query that cannot be answered: 400 (a bad parameter, or a fn that does not fit the metric's kind) or 404 (unknown metric). */
export class QueryError extends RezolusError {
  override readonly name = 'QueryError';
  constructor(
    readonly status: 400 | 404,
    message: string,
  ) {
    super(status === 404 ? 'NOT_FOUND' : 'BAD_REQUEST', message);
  }
}

const FNS_OF: Readonly<Record<MetricKind, readonly QueryFn[]>> = {
  counter: ['rate'],
  gauge: ['value'],
  histogram: ['percentiles', 'heatmap'],
};

/** The fns a metric of `kind` can be queried with. */
export function fnsOf(kind: MetricKind): readonly QueryFn[] {
  return FNS_OF[kind];
}

const collator = new Intl.Collator('en', { numeric: true });

/** Legend of a series: its label values joined with spaces, `total` when it has none. */
export function seriesName(labels: Readonly<Record<string, string>>): string {
  const values = Object.values(labels);
  return values.length === 0 ? 'total' : values.join(' ');
}

/** Series order: by legend, numbers by value, then by id. */
function byName(a: { readonly id: string; readonly labels: Readonly<Record<string, string>> }, b: { readonly id: string; readonly labels: Readonly<Record<string, string>> }): number {
  return collator.compare(seriesName(a.labels), seriesName(b.labels)) || (a.id < b.id ? -1 : a.id > b.id ? 1 : 0);
}

interface Found {
  readonly track: Track;
  readonly column: Column;
}

/** The largest |unix ms| a Date can hold: beyond it a range's span can overflow to Infinity and its step with it. */
const MAX_DATE_MS = 8.64e15;

function validate(q: Query): void {
  const isDate = (ms: number): boolean => Number.isFinite(ms) && Math.abs(ms) <= MAX_DATE_MS;
  if (!isDate(q.start) || !isDate(q.end)) throw new QueryError(400, `start and end must be unix ms within ±${MAX_DATE_MS}, got ${q.start} and ${q.end}`);
  if (q.end < q.start) throw new QueryError(400, `end (${q.end}) is before start (${q.start})`);
  if (Number.isNaN(q.budget)) throw new QueryError(400, 'budget must be a number');
  if (q.fn !== undefined && !(['value', 'rate', 'percentiles', 'heatmap'] as const).includes(q.fn)) throw new QueryError(400, `unknown fn "${q.fn}"`);
}

/** The finest native spacing over the query range among `tracks` (whole tracks when a range holds too few samples); 0 if unknown. */
function finestSpacing(tracks: Iterable<Track>, start: number, end: number): number {
  let finest = Number.POSITIVE_INFINITY;
  for (const { t } of tracks) {
    const lo = Math.max(0, lowerBound(t, start) - 1);
    const hi = Math.min(t.length, lowerBound(t, end) + 2);
    const s = nativeSpacing(t, lo, hi) ?? nativeSpacing(t);
    if (s !== undefined && s < finest) finest = s;
  }
  return Number.isFinite(finest) ? finest : 0;
}

/**
 * Answers `q` from `tracks` (one host's). Throws QueryError 404 when no
 * track has the metric, 400 for bad parameters or a fn that does not fit
 * the metric's kind. A series id found in two tracks is taken from the
 * first. Series are sorted by name, numbers by value (cpu 2 before cpu 10);
 * percentile lines come in the order p50, p90, p99, p99.9, max.
 */
export function runQuery(tracks: readonly Track[], q: Query): QueryResult {
  validate(q);
  let kind: MetricKind | undefined;
  let unit = '';
  const matches = labelMatcher(q.match);
  const found: Found[] = [];
  const seen = new Set<string>();
  const holding = new Set<Track>(); // tracks that have the metric
  for (const track of tracks) {
    for (const column of track.columns.values()) {
      const { info } = column;
      if (info.metric !== q.metric) continue;
      holding.add(track);
      if (kind === undefined) {
        kind = info.kind;
        unit = info.unit;
      }
      if (info.kind !== kind || seen.has(info.id) || !matches(info.labels)) continue;
      seen.add(info.id);
      found.push({ track, column });
    }
  }
  if (kind === undefined) throw new QueryError(404, `unknown metric "${q.metric}"`);
  const fn = q.fn ?? defaultFn(kind);
  if (!FNS_OF[kind].includes(fn)) {
    throw new QueryError(400, `fn "${fn}" does not fit ${kind} "${q.metric}" (use ${FNS_OF[kind].join(' or ')})`);
  }

  // a line per series: at most MAX_QUERY_SERIES of them (the first by name), and at most MAX_QUERY_CELLS values
  // each of avg, min and max, by a coarser step (one query of a host with 100 000 series answered 460 MB)
  const lines = fn === 'value' || fn === 'rate';
  let omitted = 0;
  if (lines && found.length > MAX_QUERY_SERIES) {
    found.sort((a, b) => byName(a.column.info, b.column.info));
    omitted = found.length - MAX_QUERY_SERIES;
    found.length = MAX_QUERY_SERIES;
  }
  const budget = lines && found.length > 0 ? Math.min(clampBudget(q.budget), Math.max(MIN_BUDGET, Math.floor(MAX_QUERY_CELLS / found.length))) : q.budget;

  // the spacing of the tracks of the matched series (of all that have the metric when none matched)
  const sampled = found.length > 0 ? new Set(found.map((f) => f.track)) : holding;
  const step = chooseStep(q.start, q.end, budget, finestSpacing(sampled, q.start, q.end));
  const grid = stepGrid(q.start, q.end, step);
  // a rate or a histogram's events belong to the interval between two samples: the step that
  // holds the interval's start (a burst at :43.4 sampled at :44 is drawn at :43, not :44)
  const byInterval = fn !== 'value';
  const binsOf = new Map<Track, SampleBins>();
  const bins = (track: Track): SampleBins => {
    let b = binsOf.get(track);
    if (b === undefined) binsOf.set(track, (b = binSamples(byInterval ? intervalStarts(track.t) : track.t, grid)));
    return b;
  };
  const result = { metric: q.metric, fn, unit: fn === 'rate' ? `${unit}/s` : unit, start: q.start, end: q.end, step, t: stepTimes(grid) };

  if (fn === 'percentiles' || fn === 'heatmap') {
    const inputs: HistogramInput[] = found
      .filter((f): f is { track: Track; column: HistogramColumn } => isHistogramColumn(f.column))
      .map(({ track, column }) => ({ run: track.run, h: column.h, bins: bins(track) }));
    const steps = stepHistograms(inputs, grid.count);
    if (fn === 'heatmap') return { ...result, series: [], heatmap: stepHeatmap(steps) };
    const series: QuerySeries[] =
      inputs.length === 0 ? [] : stepPercentiles(steps).map(({ name, values }) => ({ id: name, name, labels: {}, avg: values, min: values, max: values }));
    return { ...result, series };
  }

  const series: QuerySeries[] = [];
  for (const { track, column } of found) {
    if (isHistogramColumn(column)) continue;
    const { v } = column;
    const env = fn === 'rate' ? counterRates(track.t, track.run, v, bins(track)) : gaugeEnvelope(v, bins(track));
    series.push({ id: column.info.id, name: seriesName(column.info.labels), labels: column.info.labels, ...env });
  }
  series.sort(byName);
  return { ...result, series, ...(omitted > 0 ? { omitted } : {}) };
}
