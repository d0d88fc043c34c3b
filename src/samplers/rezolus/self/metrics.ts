import { metric, MetricKind, Unit } from '../../../metrics/metric.js';
import { SAMPLER_STATES } from '../introspection.js';

export const cpuUsage = metric({
  name: 'rezolus_cpu_usage', kind: MetricKind.Counter, unit: Unit.Nanoseconds, labels: ['state'],
  description: 'CPU time used by the rezolus process, by state (user, system).',
});
export const residentSetSize = metric({
  name: 'rezolus_memory_usage_resident_set_size', kind: MetricKind.Gauge, unit: Unit.Bytes, labels: [],
  description: 'Resident set size of the rezolus process (current, not peak).',
});
export const heapUsed = metric({
  name: 'rezolus_memory_heap_used', kind: MetricKind.Gauge, unit: Unit.Bytes, labels: [],
  description: 'V8 heap in use by the rezolus process.',
});
export const refreshTime = metric({
  name: 'rezolus_sampler_refresh_time', kind: MetricKind.Counter, unit: Unit.Nanoseconds, labels: ['sampler'],
  description: 'Time spent refreshing each sampler, cumulative.',
});
export const refreshes = metric({
  name: 'rezolus_sampler_refreshes', kind: MetricKind.Counter, unit: Unit.Count, labels: ['sampler'],
  description: 'Refreshes of each sampler.',
});
export const refreshErrors = metric({
  name: 'rezolus_sampler_errors', kind: MetricKind.Counter, unit: Unit.Count, labels: ['sampler'],
  description: 'Refreshes of each sampler that failed and published nothing.',
});
export const skippedEntries = metric({
  name: 'rezolus_sampler_skipped', kind: MetricKind.Counter, unit: Unit.Count, labels: ['sampler'],
  description: 'Source entries (procfs lines, values) left out as malformed, per sampler.',
});
export const overruns = metric({
  name: 'rezolus_sampler_overruns', kind: MetricKind.Counter, unit: Unit.Count, labels: ['sampler'],
  description: 'Ticks a sampler missed because its previous refresh was still running.',
});
export const samplerState = metric({
  name: 'rezolus_sampler_state', kind: MetricKind.Gauge, unit: Unit.Count, labels: ['sampler', 'state'],
  description:
    `Each sampler's state, one series per state (${SAMPLER_STATES.join(', ')}): 1 for the state it is in, ` +
    '0 for the others. The reason of a degraded, disabled or unsupported sampler and the error of a failed one are in the ' +
    'agent\'s log and its rezolus_status KV entry.',
});
export const published = metric({
  name: 'rezolus_publish_frames', kind: MetricKind.Counter, unit: Unit.Count, labels: [],
  description: 'Frames acked by JetStream.',
});
export const dropped = metric({
  name: 'rezolus_publish_dropped', kind: MetricKind.Counter, unit: Unit.Count, labels: [],
  description: 'Frames dropped because the publish buffer was full during a NATS outage.',
});
export const retries = metric({
  name: 'rezolus_publish_retries', kind: MetricKind.Counter, unit: Unit.Count, labels: [],
  description: 'Publish attempts that failed and were retried.',
});
export const refused = metric({
  name: 'rezolus_publish_refused', kind: MetricKind.Counter, unit: Unit.Count, labels: [],
  description: 'Frames the NATS server refused by permissions (a subject this user may not publish to, usually another host\'s): dropped, not retried.',
});
export const buffered = metric({
  name: 'rezolus_publish_buffered', kind: MetricKind.Gauge, unit: Unit.Count, labels: [],
  description: 'Frames and descriptors waiting for an ack.',
});
export const bufferedBytes = metric({
  name: 'rezolus_publish_buffered_size', kind: MetricKind.Gauge, unit: Unit.Bytes, labels: [],
  description: 'Bytes waiting for an ack.',
});

export const METRICS = [
  cpuUsage, residentSetSize, heapUsed, refreshTime, refreshes, refreshErrors, skippedEntries, overruns, samplerState,
  published, dropped, retries, refused, buffered, bufferedBytes,
] as const;
