import { metric, MetricKind, Unit, type MetricDecl } from '../metrics/metric.js';

/** The exporter's own metrics, declared once: rendered on /metrics and listed in METRICS.md. */
export const framesUsed = metric({
  name: 'rezolus_exporter_frames', kind: MetricKind.Counter, unit: Unit.Count, labels: [],
  description: 'Frames the exporter received and used.',
});
export const framesSkipped = metric({
  name: 'rezolus_exporter_frames_skipped', kind: MetricKind.Counter, unit: Unit.Count, labels: ['reason'],
  description: 'Frames the exporter could not use, by reason: garbage (not a frame), unknown_descriptor, invalid (values do not match the descriptor), out_of_order, contested (a second live agent with the same host).',
});
export const sources = metric({
  name: 'rezolus_exporter_sources', kind: MetricKind.Gauge, unit: Unit.Count, labels: [],
  description: 'Host and sampler pairs currently exported.',
});
export const seriesDropped = metric({
  name: 'rezolus_exporter_series_dropped', kind: MetricKind.Gauge, unit: Unit.Count, labels: [],
  description: 'Series left out of the previous scrape (duplicate, conflicting or invalid).',
});

export const EXPORTER_METRICS: readonly MetricDecl[] = [framesUsed, framesSkipped, sources, seriesDropped];
