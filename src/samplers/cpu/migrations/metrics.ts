import { metric, MetricKind, Unit } from '../../../metrics/metric.js';

export const cpuMigrations = metric({
  name: 'cpu_migrations',
  kind: MetricKind.Counter,
  unit: Unit.Events,
  labels: ['id', 'direction'],
  description:
    'Task migrations between CPUs, per CPU id: direction=from counts tasks that left the CPU, ' +
    'direction=to tasks that arrived on it; BPF on tp_btf sched_migrate_task.',
});

export const cgroupCpuMigrations = metric({
  name: 'cgroup_cpu_migrations',
  kind: MetricKind.Counter,
  unit: Unit.Events,
  labels: ['cgroup'],
  description:
    'Migrations of the tasks of each cgroup of the cpu controller\'s hierarchy, its own tasks, not its descendants (past [cgroups] max_cgroups summed into ' +
    'cgroup="other"), counted since the agent first saw the cgroup; BPF on tp_btf sched_migrate_task.',
});

export const METRICS = [cpuMigrations, cgroupCpuMigrations] as const;
