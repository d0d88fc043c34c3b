import { SKIP_REASONS, totalSkipped, type SkipStats } from '../sources/checks.js';
import { metric, MetricKind, Unit, type MetricDecl } from '../metrics/metric.js';
import type { ExtraSeries } from './render.js';
import type { ExporterState } from './state.js';

/** The exporter's own metrics, declared once: rendered on /metrics and listed in METRICS.md. */
export const framesReceived = metric({
  name: 'rezolus_exporter_frames_received', kind: MetricKind.Counter, unit: Unit.Count, labels: [],
  description: 'Frames the exporter received on the frame subjects, used or not: each frame of a bundle; a message that is not a frame or a bundle counts once.',
});
export const framesUsed = metric({
  name: 'rezolus_exporter_frames', kind: MetricKind.Counter, unit: Unit.Count, labels: [],
  description: 'Frames the exporter received and used.',
});
export const framesSkipped = metric({
  name: 'rezolus_exporter_frames_skipped', kind: MetricKind.Counter, unit: Unit.Count, labels: ['reason'],
  description: 'Frames the exporter could not use, by reason: garbage (not a frame), unknown_descriptor, invalid (values do not match the descriptor), wrong_subject (the frame names another host or sampler than its subject), out_of_order (a duplicate, or older than a frame already used from the same agent run), contested (a second live agent with the same host).',
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
export const scrapesReused = metric({
  name: 'rezolus_exporter_scrapes_reused', kind: MetricKind.Counter, unit: Unit.Count, labels: [],
  description: 'Scrapes of /metrics answered with the body of the render before, because renders took over a third of the time: after a render of T ms that cost at least 100 ms of CPU, scrapes within 2 T of its end get its body again, so that the exporter goes on reading frames (the NATS server cuts off a subscriber that falls 64 MiB behind).',
});
export const natsConnected = metric({
  name: 'rezolus_exporter_nats_connected', kind: MetricKind.Gauge, unit: Unit.Count, labels: [],
  description: '1 while the exporter is connected to NATS, 0 otherwise (the values served then stop moving).',
});

/** Rendered by alerts.ts (its series carry the alerts' own labels too), not by ownSeries. */
export const alerts = metric({
  name: 'rezolus_alerts', kind: MetricKind.Gauge, unit: Unit.Count, labels: ['rule', 'host', 'severity', 'state'],
  description: 'Alerts of the exported hosts that are pending, firing or stale in the alert state bucket (rezolus_alert_state, written by rezolus alert): 1 per alert, labelled with its rule, host, severity and state, then the labels of the alert\'s series and the rule\'s labels (names made valid Prometheus label names; on a clash the first of these wins). Resolved and inactive alerts are not served, as in Prometheus ALERTS.',
}, { ownHostLabel: true });

export const EXPORTER_METRICS: readonly MetricDecl[] = [
  framesReceived, framesUsed, framesSkipped, hosts, lastFrameAge, sources, seriesDropped, scrapesReused, natsConnected, alerts,
];

export interface OwnFigures {
  readonly state: ExporterState;
  readonly skipped: SkipStats;
  /** series left out of the previous render */
  readonly dropped: number;
  /** scrapes answered with an earlier render's body (pacer.ts) */
  readonly reused: number;
  readonly nowMs: number;
  /** undefined: not known, no series */
  readonly natsConnected: boolean | undefined;
}

function own(m: MetricDecl, value: number, labels?: Record<string, string>): ExtraSeries {
  return { name: m.name, kind: m.kind as 'counter' | 'gauge', unit: m.unit, help: m.description, value, ...(labels ? { labels } : {}) };
}

/** The exporter's own series, appended to every exposition. */
export function ownSeries(o: OwnFigures): ExtraSeries[] {
  const s = o.state.stats;
  const k = o.skipped;
  const skipped = (reason: string, value: number): ExtraSeries => own(framesSkipped, value, { reason });
  const received = s.ingested + s.outOfOrder + s.contested + totalSkipped(k);
  const last = o.state.lastFrameByHost();
  const out = [
    own(framesReceived, received),
    own(framesUsed, s.ingested),
    // frames the state refused as out of order are counted with the intake's
    ...SKIP_REASONS.map(([key, reason]) => skipped(reason, k[key] + (key === 'outOfOrder' ? s.outOfOrder : 0))),
    skipped('contested', s.contested),
    own(hosts, last.size),
    own(sources, o.state.size),
    own(seriesDropped, o.dropped),
    own(scrapesReused, o.reused),
  ];
  for (const host of [...last.keys()].sort()) {
    out.push(own(lastFrameAge, Math.max(0, o.nowMs - Number((last.get(host) as bigint) / 1_000_000n)), { host }));
  }
  if (o.natsConnected !== undefined) out.push(own(natsConnected, o.natsConnected ? 1 : 0));
  return out;
}
