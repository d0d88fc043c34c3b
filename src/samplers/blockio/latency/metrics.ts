import { metric, MetricKind, Unit } from '../../../metrics/metric.js';

export const blockioLatency = metric({
  name: 'blockio_latency',
  kind: MetricKind.Histogram,
  unit: Unit.Nanoseconds,
  labels: ['op'],
  description:
    'Block request latency by op (read, write, flush, discard), from issue to the driver until completion, every device ' +
    'together; queueing before issue is not included; BPF on tp_btf block_rq_issue (stamp, keyed by the request) and ' +
    'block_rq_complete (observe).',
});

export const METRICS = [blockioLatency] as const;
