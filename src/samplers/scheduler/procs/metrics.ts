import { metric, MetricKind, Unit } from '../../../metrics/metric.js';

export const schedulerContextSwitches = metric({
  name: 'scheduler_context_switches',
  kind: MetricKind.Counter,
  unit: Unit.Events,
  labels: [],
  description: 'Context switches across all CPUs since boot; /proc/stat ctxt.',
});

export const schedulerForks = metric({
  name: 'scheduler_forks',
  kind: MetricKind.Counter,
  unit: Unit.Tasks,
  labels: [],
  description: 'Tasks (processes and threads) created since boot; /proc/stat processes.',
});

export const schedulerInterrupts = metric({
  name: 'scheduler_interrupts',
  kind: MetricKind.Counter,
  unit: Unit.Events,
  labels: [],
  description: 'Hardware interrupts serviced since boot, all sources; the first number of the /proc/stat intr line.',
});

export const schedulerProcessesRunning = metric({
  name: 'scheduler_processes_running',
  kind: MetricKind.Gauge,
  unit: Unit.Tasks,
  labels: [],
  description: 'Tasks runnable right now, running or waiting for a CPU; /proc/stat procs_running.',
});

export const schedulerProcessesBlocked = metric({
  name: 'scheduler_processes_blocked',
  kind: MetricKind.Gauge,
  unit: Unit.Tasks,
  labels: [],
  description: 'Tasks blocked waiting for I/O to complete; /proc/stat procs_blocked.',
});

export const schedulerLoadAverage = metric({
  name: 'scheduler_load_average',
  kind: MetricKind.Gauge,
  unit: Unit.Count,
  labels: ['period'],
  description:
    'System load average (runnable plus uninterruptible tasks, exponentially averaged) over period 1m, 5m or 15m; ' +
    '/proc/loadavg.',
});

export const schedulerPressure = metric({
  name: 'scheduler_pressure',
  kind: MetricKind.Counter,
  unit: Unit.Microseconds,
  labels: ['resource', 'kind'],
  description:
    'Pressure stall time: time some task (kind=some) or all non-idle tasks (kind=full) were stalled waiting for ' +
    'resource cpu, io or memory; the total= field of /proc/pressure/<resource>. Absent without PSI. ' +
    'cpu full is always 0 at the system level.',
});

export const METRICS = [
  schedulerContextSwitches,
  schedulerForks,
  schedulerInterrupts,
  schedulerProcessesRunning,
  schedulerProcessesBlocked,
  schedulerLoadAverage,
  schedulerPressure,
] as const;
