import { metric, MetricKind, Unit } from '../../../metrics/metric.js';

export const schedulerRunqueueLatency = metric({
  name: 'scheduler_runqueue_latency',
  kind: MetricKind.Histogram,
  unit: Unit.Nanoseconds,
  labels: [],
  description:
    'Time tasks waited on a runqueue: from wakeup (or preemption) until they ran; ' +
    'BPF on tp_btf sched_wakeup, sched_wakeup_new and sched_switch.',
});

export const schedulerRunning = metric({
  name: 'scheduler_running',
  kind: MetricKind.Histogram,
  unit: Unit.Nanoseconds,
  labels: [],
  description: 'Length of on-CPU time slices that ended in preemption (the task was still runnable); BPF on tp_btf sched_switch.',
});

export const schedulerOffcpu = metric({
  name: 'scheduler_offcpu',
  kind: MetricKind.Histogram,
  unit: Unit.Nanoseconds,
  labels: [],
  description:
    'Time tasks spent off CPU after a voluntary switch (sleeping, blocked on I/O or a lock, yielding) until they ran again, ' +
    'not counting the runqueue wait after their wakeup; BPF on tp_btf sched_switch.',
});

export const schedulerContextSwitch = metric({
  name: 'scheduler_context_switch',
  kind: MetricKind.Counter,
  unit: Unit.Events,
  labels: ['id', 'kind'],
  description:
    'Context switches per CPU id; kind=involuntary when the task was preempted while runnable, ' +
    'voluntary when it blocked, slept or yielded (switches away from the idle task count as voluntary); BPF on tp_btf sched_switch.',
});

export const schedulerRunqueueWait = metric({
  name: 'scheduler_runqueue_wait',
  kind: MetricKind.Counter,
  unit: Unit.Nanoseconds,
  labels: ['id'],
  description: 'Sum of runqueue waits of the tasks that started running on CPU id; BPF on tp_btf sched_switch.',
});

export const cgroupSchedulerRunqueueWait = metric({
  name: 'cgroup_scheduler_runqueue_wait',
  kind: MetricKind.Counter,
  unit: Unit.Nanoseconds,
  labels: ['cgroup'],
  description:
    'Sum of the runqueue waits of the own tasks (not descendants) of each cgroup of the cpu controller\'s hierarchy (past [cgroups] max_cgroups ' +
    'summed into cgroup="other"), since the agent first saw the cgroup: its rate is the cgroup\'s tasks waiting for a CPU, ' +
    'in task-seconds per second; BPF on tp_btf sched_switch.',
});

export const METRICS = [
  schedulerRunqueueLatency,
  schedulerRunning,
  schedulerOffcpu,
  schedulerContextSwitch,
  schedulerRunqueueWait,
  cgroupSchedulerRunqueueWait,
] as const;
