import { metric, MetricKind, Unit } from '../../../metrics/metric.js';
import { SYSCALL_CLASSES } from '../classes.js';

export const syscallLatency = metric({
  name: 'syscall_latency',
  kind: MetricKind.Histogram,
  unit: Unit.Nanoseconds,
  labels: ['op'],
  description:
    `Time from syscall entry to exit per thread, by class op (${SYSCALL_CLASSES.join(', ')}); ` +
    'BPF on tp_btf sys_enter and sys_exit (raw_syscalls). Syscalls that never return (exit) are not counted. ' +
    'A class running more than [kernel] syscall_timing_budget syscalls a second per CPU is sampled: 1 in 2^k of its syscalls is timed ' +
    'and counted 2^k times (syscall_latency_timed), so its counts are estimates and its percentiles unbiased.',
});

export const syscallLatencyTimed = metric({
  name: 'syscall_latency_timed',
  kind: MetricKind.Gauge,
  unit: Unit.Ratio,
  labels: ['op'],
  description:
    'Fraction of the class\'s syscalls that syscall_latency timed in the interval up to this reading: 1 while the class stays within ' +
    '[kernel] syscall_timing_budget a second per CPU (every syscall timed, exact counts), 1/2^k above it.',
});

export const METRICS = [syscallLatency, syscallLatencyTimed] as const;
