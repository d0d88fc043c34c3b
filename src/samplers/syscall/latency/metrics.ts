import { metric, MetricKind, Unit } from '../../../metrics/metric.js';
import { SYSCALL_CLASSES } from '../classes.js';

export const syscallLatency = metric({
  name: 'syscall_latency',
  kind: MetricKind.Histogram,
  unit: Unit.Nanoseconds,
  labels: ['op'],
  description:
    `Time from syscall entry to exit per thread, by class op (${SYSCALL_CLASSES.join(', ')}); ` +
    'BPF on tp_btf sys_enter and sys_exit (raw_syscalls). Syscalls that never return (exit) are not counted.',
});

export const METRICS = [syscallLatency] as const;
