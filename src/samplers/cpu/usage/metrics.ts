import { metric, MetricKind, Unit } from '../../../metrics/metric.js';

/**
 * The columns of a `cpu` line of /proc/stat, in the order the kernel prints
 * them. Older kernels print only a prefix (at least the first four).
 */
export const CPU_STATES = [
  'user',
  'nice',
  'system',
  'idle',
  'iowait',
  'irq',
  'softirq',
  'steal',
  'guest',
  'guest_nice',
] as const;
export type CpuState = (typeof CPU_STATES)[number];

const STATE_NOTE =
  'state is the /proc/stat column (user, nice, system, idle, iowait, irq, softirq, steal, guest, guest_nice); ' +
  'guest time is also counted in user and guest_nice in nice, so do not sum all states. iowait is approximate.';

export const cpuUsage = metric({
  name: 'cpu_usage',
  kind: MetricKind.Counter,
  unit: Unit.Nanoseconds,
  labels: ['state', 'id'],
  description: `Time each CPU spent in each state since boot, from the per-CPU lines of /proc/stat; ${STATE_NOTE}`,
});

export const cpuUsageAll = metric({
  name: 'cpu_usage_all',
  kind: MetricKind.Counter,
  unit: Unit.Nanoseconds,
  labels: ['state'],
  description: `Time all CPUs together spent in each state since boot, from the aggregate cpu line of /proc/stat; ${STATE_NOTE}`,
});

export const METRICS = [cpuUsage, cpuUsageAll] as const;
