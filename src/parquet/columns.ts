/**
 * The Parquet columns of recorded series: one column per series, named
 * `<metric>/<label value>/…` in the metric's label order (`cpu_usage/user/3`,
 * `memory_total`), with the identity (metric, kind, unit, labels, histogram
 * layout) kept as column metadata. Pure.
 */
import type { Descriptor } from '../frame/types.js';
import { GROUPING_POWER, MAX_VALUE_POWER } from '../metrics/histogram.js';
import type { MetricKind } from '../metrics/metric.js';

export interface ColumnSpec {
  readonly name: string;
  readonly metric: string;
  readonly kind: MetricKind;
  readonly unit: string;
  /** label name -> value, in the metric's label order */
  readonly labels: Readonly<Record<string, string>>;
  /** histograms only: the layout of the dense bucket lists */
  readonly groupingPower?: number;
  readonly maxValuePower?: number;
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
export function columnsOf(d: Descriptor): (ColumnSpec | undefined)[] {
  return d.series.map(([metric, values]) => {
    const m = Object.hasOwn(d.metrics, metric) ? d.metrics[metric] : undefined;
    if (m === undefined || m.labels.length !== values.length) return undefined;
    const labels: Record<string, string> = {};
    m.labels.forEach((k, i) => (labels[k] = values[i] as string));
    const spec: ColumnSpec = { name: columnName(metric, values), metric, kind: m.kind, unit: m.unit, labels };
    return m.kind === 'histogram' ? { ...spec, groupingPower: GROUPING_POWER, maxValuePower: MAX_VALUE_POWER } : spec;
  });
}
