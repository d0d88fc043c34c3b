/**
 * The Parquet columns of recorded series: one column per series, named
 * `<metric>/<label value>/…` in the metric's label order (`cpu_usage/user/3`,
 * `memory_total`), with the identity (metric, kind, unit, labels, histogram
 * layout, the sampler whose frames fill it) kept as column metadata. Beside
 * them, per sampler, `timestamp/<sampler>`: the end of the frame each row
 * took that sampler's values from (a sampler slower than the rows repeats
 * its frame over several rows; readers take rates between the rows where it
 * changed). `timestamp`, `host` and `timestamp/…` are no series' names. Pure.
 */
import type { Descriptor } from '../frame/types.js';
import { GROUPING_POWER, MAX_VALUE_POWER } from '../metrics/histogram.js';
import type { MetricKind } from '../metrics/metric.js';

export interface ColumnSpec {
  readonly name: string;
  readonly metric: string;
  /** a series' kind, or `timestamp` for a sampler's frame ends (stored as UInt64 ns) */
  readonly kind: MetricKind | 'timestamp';
  readonly unit: string;
  /** label name -> value, in the metric's label order */
  readonly labels: Readonly<Record<string, string>>;
  /** histograms only: the layout of the dense bucket lists */
  readonly groupingPower?: number;
  readonly maxValuePower?: number;
  /** the sampler whose frames fill the column (series the recorder wrote, and frame ends) */
  readonly sampler?: string;
}

/** A series' column (not a frame end column). */
export interface SeriesColumnSpec extends ColumnSpec {
  readonly kind: MetricKind;
}

/** The row's own time column; frame end columns are named under it. */
export const TIMESTAMP_COLUMN = 'timestamp';

/** True for the names the recording's own columns take (`timestamp`, `host`, `timestamp/…`): no series may take them. */
export function isReservedColumn(name: string): boolean {
  return name === TIMESTAMP_COLUMN || name === 'host' || name.startsWith(`${TIMESTAMP_COLUMN}/`);
}

/** The column of the ends of `sampler`'s frames, unix ns: `timestamp/<sampler>`. */
export function frameEndColumn(sampler: string): ColumnSpec {
  return { name: columnName(TIMESTAMP_COLUMN, [sampler]), metric: TIMESTAMP_COLUMN, kind: 'timestamp', unit: 'nanoseconds', labels: { sampler }, sampler };
}

/** A label value in a column name: `/` and `%` are percent-escaped so names split back unambiguously. */
function escapePart(value: string): string {
  return value.replace(/%/g, '%25').replace(/\//g, '%2F');
}

export function columnName(metric: string, labelValues: readonly string[]): string {
  return [metric, ...labelValues.map(escapePart)].join('/');
}

/**
 * The column of each series of a descriptor, in series order; undefined for
 * a series whose declaration is missing or does not match its labels.
 */
export function columnsOf(d: Descriptor): (SeriesColumnSpec | undefined)[] {
  return d.series.map(([metric, values]) => {
    const m = Object.hasOwn(d.metrics, metric) ? d.metrics[metric] : undefined;
    if (m === undefined || m.labels.length !== values.length) return undefined;
    const labels: Record<string, string> = {};
    m.labels.forEach((k, i) => (labels[k] = values[i] as string));
    const spec: SeriesColumnSpec = { name: columnName(metric, values), metric, kind: m.kind, unit: m.unit, labels };
    return m.kind === 'histogram' ? { ...spec, groupingPower: GROUPING_POWER, maxValuePower: MAX_VALUE_POWER } : spec;
  });
}
