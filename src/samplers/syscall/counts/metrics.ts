import { metric, MetricKind, Unit } from '../../../metrics/metric.js';
import { SYSCALL_CLASSES } from '../classes.js';

export const syscall = metric({
  name: 'syscall',
  kind: MetricKind.Counter,
  unit: Unit.Events,
  labels: ['op'],
  description:
    `Syscalls entered, by class op (${SYSCALL_CLASSES.join(', ')}; src/samplers/syscall/classes.ts lists the members); ` +
    'BPF on tp_btf sys_enter (raw_syscalls). op=time stays near 0 on most hosts: clock_gettime, gettimeofday and time ' +
    'are answered by the vDSO in user space, without a syscall.',
});

export const METRICS = [syscall] as const;
