import { metric, MetricKind, Unit } from '../../../metrics/metric.js';
import { SYSCALL_CLASSES } from '../classes.js';

export const syscall = metric({
  name: 'syscall',
  kind: MetricKind.Counter,
  unit: Unit.Events,
  labels: ['op'],
  description:
    `Syscalls entered, by class op (${SYSCALL_CLASSES.join(', ')}; src/samplers/syscall/classes.ts lists the members); ` +
    'BPF on the raw_syscalls sys_enter tracepoint (raw_tp). op=time stays near 0 on most hosts: clock_gettime, gettimeofday and time ' +
    'are answered by the vDSO in user space, without a syscall.',
});

export const cgroupSyscall = metric({
  name: 'cgroup_syscall',
  kind: MetricKind.Counter,
  unit: Unit.Events,
  labels: ['cgroup', 'op'],
  description:
    'Syscalls entered by the tasks of each cgroup of the cpu controller\'s hierarchy, its own tasks, not its descendants (path as in cgroup_resources; ' +
    'past [cgroups] max_cgroups summed into cgroup="other"), by class op; counted since the agent first saw the cgroup. ' +
    'BPF on raw_tp sys_enter, in a slot per css id (up to 4096) checked against the cgroup\'s serial number.',
});

export const METRICS = [syscall, cgroupSyscall] as const;
