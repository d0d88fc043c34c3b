/**
 * Which charts a metric gets, from its kind and labels alone (so a new metric
 * shows without viewer code):
 * - a histogram: percentile lines (p50 … max) and a bucket heatmap;
 * - a counter or gauge with a CPU label: a per-CPU heatmap (rows = CPUs);
 * - a counter: rate lines with the burst view;
 * - a gauge: lines with their min/max band.
 * Pure.
 */
import type { MetricEntry, QueryFn } from '../api.js';

export type ChartKind = 'rate' | 'value' | 'percentiles' | 'heatmap' | 'percpu';

export interface ChartPlan {
  readonly kind: ChartKind;
  readonly fn: QueryFn;
  /** shown under the metric's name */
  readonly caption: string;
}

/** Label names that mean "which CPU": the samplers use `id` (per CPU id), `cpu` is the common spelling elsewhere. */
export const CPU_LABELS: readonly string[] = ['cpu', 'id'];

/** The metric's CPU label, or undefined. */
export function cpuLabelOf(labels: readonly string[]): string | undefined {
  return CPU_LABELS.find((l) => labels.includes(l));
}

export function planCharts(m: Pick<MetricEntry, 'kind' | 'labels'>): ChartPlan[] {
  if (m.kind === 'histogram') {
    return [
      { kind: 'percentiles', fn: 'percentiles', caption: 'percentiles per step' },
      { kind: 'heatmap', fn: 'heatmap', caption: 'events per bucket per step' },
    ];
  }
  const rate = m.kind === 'counter';
  if (cpuLabelOf(m.labels) !== undefined) {
    return [{ kind: 'percpu', fn: rate ? 'rate' : 'value', caption: rate ? 'rate per CPU' : 'per CPU' }];
  }
  if (rate) return [{ kind: 'rate', fn: 'rate', caption: 'rate; dashed: burst (highest per-sample rate in the step)' }];
  return [{ kind: 'value', fn: 'value', caption: 'value; band: min to max in the step' }];
}

/** Every value of `label` among the metrics' series, in natural order. */
export function labelValues(metrics: readonly Pick<MetricEntry, 'series'>[], label: string): string[] {
  const seen = new Set<string>();
  for (const m of metrics) for (const s of m.series) if (s.labels[label] !== undefined) seen.add(s.labels[label]);
  return [...seen].sort(new Intl.Collator('en', { numeric: true }).compare);
}

/** The query's `match=label=glob` pairs: the filters the metric has a label for, empty globs left out. */
export function matchesFor(m: Pick<MetricEntry, 'labels'>, filters: Readonly<Record<string, string>>): string[] {
  return Object.entries(filters)
    .filter(([label, glob]) => glob !== '' && glob !== '*' && m.labels.includes(label))
    .map(([label, glob]) => `${label}=${glob}`);
}
