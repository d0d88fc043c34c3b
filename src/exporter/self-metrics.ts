import { metric, MetricKind, Unit, type MetricDecl } from '../metrics/metric.js';

/** The exporter's own metrics, declared once: rendered on /metrics and listed in METRICS.md. */
export const framesReceived = metric({
  name: 'rezolus_exporter_frames_received', kind: MetricKind.Counter, unit: Unit.Count, labels: [],
  description: 'Messages the exporter received on the frame subjects, used or not.',
});
export const framesUsed = metric({
  name: 'rezolus_exporter_frames', kind: MetricKind.Counter, unit: Unit.Count, labels: [],
  description: 'Frames the exporter received and used.',
});
export const framesSkipped = metric({
  name: 'rezolus_exporter_frames_skipped', kind: MetricKind.Counter, unit: Unit.Count, labels: ['reason'],
  description: 'Frames the exporter could not use, by reason: garbage (not a frame), unknown_descriptor, invalid (values do not match the descriptor), wrong_subject (the frame names another host or sampler than its subject), out_of_order, contested (a second live agent with the same host).',
});
export const hosts = metric({
  name: 'rezolus_exporter_hosts', kind: MetricKind.Gauge, unit: Unit.Count, labels: [],
  description: 'Hosts currently exported (a host leaves after forget_after without frames).',
});
export const lastFrameAge = metric({
  name: 'rezolus_exporter_last_frame_age', kind: MetricKind.Gauge, unit: Unit.Milliseconds, labels: ['host'],
  description: 'Time since the end of the newest frame of each exported host, by the exporter clock (clock skew between hosts shows here).',
}, { ownHostLabel: true });
export const sources = metric({
  name: 'rezolus_exporter_sources', kind: MetricKind.Gauge, unit: Unit.Count, labels: [],
  description: 'Host and sampler pairs currently exported.',
});
export const seriesDropped = metric({
  name: 'rezolus_exporter_series_dropped', kind: MetricKind.Gauge, unit: Unit.Count, labels: [],
  description: 'Series left out of the previous scrape (duplicate, conflicting or invalid).',
});
export const natsConnected = metric({
  name: 'rezolus_exporter_nats_connected', kind: MetricKind.Gauge, unit: Unit.Count, labels: [],
  description: '1 while the exporter is connected to NATS, 0 otherwise (the values served then stop moving).',
});

export const EXPORTER_METRICS: readonly MetricDecl[] = [
  framesReceived, framesUsed, framesSkipped, hosts, lastFrameAge, sources, seriesDropped, natsConnected,
];
