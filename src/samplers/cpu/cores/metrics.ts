import { metric, MetricKind, Unit } from '../../../metrics/metric.js';

export const cpuCores = metric({
  name: 'cpu_cores',
  kind: MetricKind.Gauge,
  unit: Unit.Cores,
  labels: [],
  description: 'Number of CPUs online, from /sys/devices/system/cpu/online.',
});

export const METRICS = [cpuCores] as const;
