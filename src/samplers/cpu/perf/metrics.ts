import { metric, MetricKind, Unit, type MetricDecl } from '../../../metrics/metric.js';

// perf_event_open counters, one per CPU per event, system-wide (pid -1),
// user and kernel counted. Software events exist on every kernel; hardware
// ones need a PMU, which VMs often lack.

const perCpu = (name: string, unit: Unit, what: string, event: string): MetricDecl =>
  metric({
    name,
    kind: MetricKind.Counter,
    unit,
    labels: ['id'],
    description: `${what} per CPU id; perf_event_open ${event}, every task, scaled by time enabled/running when multiplexed.`,
  });

export const cpuPerfClock = perCpu('cpu_perf_clock', Unit.Nanoseconds, 'Time the per-CPU clock counted (wall time the counter was enabled)', 'software cpu-clock');
export const cpuPerfContextSwitches = perCpu('cpu_perf_context_switches', Unit.Events, 'Context switches', 'software context-switches');
export const cpuPerfMigrations = perCpu('cpu_perf_migrations', Unit.Events, 'Task migrations, counted on the CPU a migrated task arrives on when it first runs there', 'software cpu-migrations');
export const cpuPerfPageFaults = perCpu('cpu_perf_page_faults', Unit.Events, 'Page faults (every fault taken, minor, major or failed)', 'software page-faults');
export const cpuPerfPageFaultsMinor = perCpu('cpu_perf_page_faults_minor', Unit.Events, 'Minor page faults (served without I/O)', 'software minor-faults');
export const cpuPerfPageFaultsMajor = perCpu('cpu_perf_page_faults_major', Unit.Events, 'Major page faults (needed I/O)', 'software major-faults');

export const cpuCycles = perCpu('cpu_cycles', Unit.Events, 'CPU cycles (absent without a hardware PMU)', 'hardware cpu-cycles');
export const cpuInstructions = perCpu(
  'cpu_instructions', Unit.Events, 'Instructions retired (absent without a hardware PMU; IPC = rate(cpu_instructions) / rate(cpu_cycles))', 'hardware instructions',
);
export const cpuCacheMisses = perCpu('cpu_cache_misses', Unit.Events, 'Last-level cache misses (absent without a hardware PMU)', 'hardware cache-misses');
export const cpuBranchMisses = perCpu('cpu_branch_misses', Unit.Events, 'Mispredicted branches (absent without a hardware PMU)', 'hardware branch-misses');

export const METRICS = [
  cpuPerfClock, cpuPerfContextSwitches, cpuPerfMigrations, cpuPerfPageFaults, cpuPerfPageFaultsMinor, cpuPerfPageFaultsMajor,
  cpuCycles, cpuInstructions, cpuCacheMisses, cpuBranchMisses,
] as const;
