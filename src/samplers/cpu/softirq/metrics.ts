import { metric, MetricKind, Unit } from '../../../metrics/metric.js';

export const softirq = metric({
  name: 'softirq',
  kind: MetricKind.Counter,
  unit: Unit.Events,
  labels: ['id', 'kind'],
  description:
    'Softirqs handled per CPU id and kind (hi, timer, net_tx, net_rx, block, irq_poll, tasklet, sched, hrtimer, rcu); ' +
    'BPF on tp_btf softirq_exit.',
});

export const softirqTime = metric({
  name: 'softirq_time',
  kind: MetricKind.Counter,
  unit: Unit.Nanoseconds,
  labels: ['id', 'kind'],
  description: 'Time spent handling softirqs per CPU id and kind; BPF on tp_btf softirq_entry to softirq_exit.',
});

export const METRICS = [softirq, softirqTime] as const;
