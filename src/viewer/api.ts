/**
 * The viewer's HTTP API under /api/v1, as types: the server returns these
 * and the page (src/viewer/web/) reads them. JSON throughout; times are unix
 * ms. Type-only: the page's bundle imports nothing at run time from here.
 */

/** Where the data comes from. */
export type ViewMode = 'live' | 'file' | 'compare' | 'agent';

export interface SourceInfo {
  /** `live`, `agent`, or a file's alias (`A`, `B`, or the `name=` given) */
  readonly name: string;
  /** the file path, agent URL or NATS URL */
  readonly location: string;
  /** first and last sample of the source, unix ms (live: the window so far) */
  readonly start: number;
  readonly end: number;
  readonly hosts: readonly string[];
}

/** GET /api/v1/info */
export interface ViewInfo {
  readonly mode: ViewMode;
  readonly sources: readonly SourceInfo[];
  /** live: the stream's window in ms (what the page can go back) */
  readonly windowMs?: number;
  /** live: POST /api/v1/save writes a hindsight file */
  readonly canSave: boolean;
  readonly version: string;
  /** what keeps the data from flowing now (NATS away, the agent refusing), for one line on the page */
  readonly problem?: string;
}

/** One row of the fleet page (GET /api/v1/hosts?source=). null: not known (sampler off, or no frame yet). */
export interface HostSummary {
  readonly host: string;
  /** unix ms of the newest frame */
  readonly lastMs: number;
  /** CPU busy, share of all CPUs (0..1), over the last interval */
  readonly cpu: number | null;
  readonly cpus: number | null;
  /** run-queue latency p99 over the last interval, ns */
  readonly runqueueP99Ns: number | null;
  readonly memoryTotalBytes: number | null;
  readonly memoryAvailableBytes: number | null;
  /** bytes/s */
  readonly networkRxBps: number | null;
  readonly networkTxBps: number | null;
  readonly blockReadBps: number | null;
  readonly blockWriteBps: number | null;
  /** sampler name -> state (active, disabled, failed, …) and the reason where there is one */
  readonly samplers: Readonly<Record<string, { readonly state: string; readonly reason?: string }>>;
  /** frames the agent holds in its outage buffer, and frames the bus refused */
  readonly buffered: number | null;
  readonly refused: number | null;
  /**
   * live only: alerts of the host whose newest transition in the window is
   * `firing` (GET /api/v1/alerts has them); null while no alert stream can be
   * read (no evaluator has run on this bus). Absent for files and agents.
   */
  readonly alertsFiring?: number | null;
}

export interface SeriesRef {
  readonly id: string;
  readonly labels: Readonly<Record<string, string>>;
}

/** GET /api/v1/metrics?source=&host= */
export interface MetricEntry {
  readonly name: string;
  readonly kind: 'counter' | 'gauge' | 'histogram';
  readonly unit: string;
  readonly description: string;
  /** the page section it belongs to (Overview, CPU, Memory, …) */
  readonly section: string;
  readonly labels: readonly string[];
  readonly series: readonly SeriesRef[];
}

/** GET /api/v1/sections */
export interface SectionInfo {
  readonly name: string;
  /** metric names of the host in this section, in display order */
  readonly metrics: readonly string[];
}

/**
 * What a query reduces a metric to:
 * - `value`: gauges as they are (envelope per step);
 * - `rate`: counters per second (avg = the rate over the step; max = the
 *   burst view, the highest per-sample rate inside the step; min the lowest);
 * - `percentiles`: histograms (all matched series merged), one line per
 *   percentile of the events inside each step, plus max;
 * - `heatmap`: histograms, the events per h2 bucket per step.
 */
export type QueryFn = 'value' | 'rate' | 'percentiles' | 'heatmap';

/** One line of a chart: a value per step (null: no data in it). */
export interface QuerySeries {
  readonly id: string;
  /** the legend: label values, or `p99` for a percentile line */
  readonly name: string;
  readonly labels: Readonly<Record<string, string>>;
  readonly avg: readonly (number | null)[];
  readonly min: readonly (number | null)[];
  readonly max: readonly (number | null)[];
}

export interface HeatmapData {
  /** bucket bounds (in the metric's unit), one per row that has a count somewhere */
  readonly lower: readonly number[];
  readonly upper: readonly number[];
  /** counts[col][row]: events in that step and bucket */
  readonly counts: readonly (readonly number[])[];
}

/**
 * GET /api/v1/query?source=&host=&metric=&fn=&start=&end=&budget=[&match=label=glob]…
 * `t` holds each step's start; `step` is at least the native sample spacing
 * and at most (end − start) / budget rounded up, so a chart never gets more
 * columns than pixels and a one-sample spike is still in a step's max.
 */
export interface QueryResult {
  readonly metric: string;
  readonly fn: QueryFn;
  /** the unit of the values returned: the metric's, or `<unit>/s` for rates */
  readonly unit: string;
  readonly start: number;
  readonly end: number;
  readonly step: number;
  readonly t: readonly number[];
  readonly series: readonly QuerySeries[];
  readonly heatmap?: HeatmapData;
  /** matched series left out of `series` (beyond the most one answer holds), absent when none */
  readonly omitted?: number;
}

/** POST /api/v1/save body and answer */
export interface SaveRequest {
  readonly hosts: readonly string[];
  readonly start: number;
  readonly end: number;
}

export interface SaveResult {
  readonly path: string;
  readonly rows: number;
}

/** An alert's state after a transition (rezolus alert, src/alert/contract.ts). */
export type AlertMarkState = 'pending' | 'firing' | 'resolved' | 'stale' | 'inactive';

/**
 * One alert event as the viewer took it from REZOLUS_ALERTS: checked,
 * strings cut to their bounds, times as unix ms. `transition`: the alert
 * entered `state`; `capture`: the incident window was written to `file`, or
 * `error` says why not.
 */
export interface AlertMark {
  /** unix ms of the event */
  readonly at: number;
  readonly host: string;
  readonly rule: string;
  readonly kind: 'transition' | 'capture';
  /** the state entered (null for a capture) */
  readonly state: AlertMarkState | null;
  readonly previous: AlertMarkState | null;
  readonly severity: string;
  /** the series the alert is about ({} for a rule over the sum of its series) */
  readonly series: Readonly<Record<string, string>>;
  /** the measured value (null: none, as for missing data) and as people read it (`1.2 ms`) */
  readonly value: number | null;
  readonly valueText: string;
  readonly thresholdText: string;
  readonly summary: string;
  /** unix ms the alert's episode began */
  readonly activeAt: number;
  readonly file?: string;
  readonly error?: string;
}

/** GET /api/v1/alerts?host=&from=&to= */
export interface AlertsResult {
  readonly from: number;
  readonly to: number;
  /** the events with from ≤ at ≤ to (of `host`, or of every host), oldest first; the newest when there are too many */
  readonly events: readonly AlertMark[];
  /** events in the range left out (beyond the most one answer holds), absent when none */
  readonly omitted?: number;
  /** why there are no events to show, when it is not that none happened (live: no alert stream on the bus yet) */
  readonly note?: string;
}

/** Every error answer: `{ error }` with a status (400 bad input, 404 unknown host/metric, 503 source down). */
export interface ApiError {
  readonly error: string;
}
