import { metric, MetricKind, Unit } from '../../../metrics/metric.js';
import { SYSCALL_CLASSES } from '../classes.js';

export const syscall = metric({
  name: 'syscall',
  kind: MetricKind.Counter,
  unit: Unit.Events,
  labels: ['op'],
  description:
    `Syscalls entered, by class op (${SYSCALL_CLASSES.join(', ')}; src/samplers/syscall/classes.ts lists the members); ` +
    'BPF on tp_btf sys_enter (raw_syscalls).',
});

export const METRICS = [syscall] as const;
