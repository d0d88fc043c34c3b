import { metric, MetricKind, Unit } from '../../../metrics/metric.js';
import { SYSCALL_CLASSES } from '../classes.js';

export const syscallLatency = metric({
  name: 'syscall_latency',
  kind: MetricKind.Histogram,
  unit: Unit.Nanoseconds,
  labels: ['op'],
  description:
    `Time from syscall entry to exit per thread, by class op (${SYSCALL_CLASSES.join(', ')}); ` +
    'BPF on the raw_syscalls sys_enter and sys_exit tracepoints (raw_tp). Not timed: syscalls that never return (exit, exit_group), an execve by a thread other than its process\'s leader, 32-bit (ia32) syscalls. ' +
    'A class running more than [kernel] syscall_timing_budget syscalls a second per CPU is sampled: a random 1 in 2^k of its syscalls is timed ' +
    'and counted 2^k times (syscall_latency_timed): its distribution stays unbiased, its counts and tail become estimates.',
});

export const syscallLatencyTimed = metric({
  name: 'syscall_latency_timed',
  kind: MetricKind.Gauge,
  unit: Unit.Ratio,
  labels: ['op'],
  description:
    'Share of the class\'s syscalls that syscall_latency timed in the interval up to this reading: 1 (every syscall) or 1/2^k, chosen at the ' +
    'refresh before from the highest rate of the class\'s last three windows against [kernel] syscall_timing_budget. A syscall that began ' +
    'under another share counts by that one.',
});

export const METRICS = [syscallLatency, syscallLatencyTimed] as const;
