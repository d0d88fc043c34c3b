import { metric, MetricKind, Unit, type MetricDecl } from '../../metrics/metric.js';

// Per-cgroup figures from cgroupfs (v1 hierarchies or the v2 tree). The
// cgroup label is the path below the hierarchy root, `/` for the root,
// `other` for the sum of the cgroups past [cgroups] max_cgroups.

const SRC = 'cgroupfs';

const m = (name: string, kind: MetricDecl['kind'], unit: MetricDecl['unit'], labels: string[], description: string): MetricDecl =>
  metric({ name, kind, unit, labels: ['cgroup', ...labels], description: `${description}; ${SRC}.` });

export const cgroupCpuUsage = m(
  'cgroup_cpu_usage', MetricKind.Counter, Unit.Nanoseconds, ['state'],
  'CPU time of the tasks of each cgroup and its descendants, by state (user, system): the exact usage (v2 cpu.stat usage_usec, v1 cpuacct.usage) split in the proportion of user_usec/system_usec (v2) or cpuacct.usage_user/usage_sys (v1, which count whole ticks and over-count throttled cgroups)',
);
export const cgroupCpuBandwidthQuota = m(
  'cgroup_cpu_bandwidth_quota', MetricKind.Gauge, Unit.Nanoseconds, [],
  'CFS bandwidth quota: CPU time the cgroup may use per period (absent when unlimited): v2 cpu.max, v1 cpu.cfs_quota_us',
);
export const cgroupCpuBandwidthPeriod = m(
  'cgroup_cpu_bandwidth_period_duration', MetricKind.Gauge, Unit.Nanoseconds, [],
  'CFS bandwidth period (shown with a quota only): v2 cpu.max, v1 cpu.cfs_period_us',
);
export const cgroupCpuBandwidthPeriods = m(
  'cgroup_cpu_bandwidth_periods', MetricKind.Counter, Unit.Events, [],
  'CFS bandwidth periods that elapsed while the cgroup had runnable tasks: cpu.stat nr_periods',
);
export const cgroupCpuBandwidthThrottledPeriods = m(
  'cgroup_cpu_bandwidth_throttled_periods', MetricKind.Counter, Unit.Events, [],
  'Periods in which the cgroup used up its quota and was throttled: cpu.stat nr_throttled',
);
export const cgroupCpuBandwidthThrottledTime = m(
  'cgroup_cpu_bandwidth_throttled_time', MetricKind.Counter, Unit.Nanoseconds, [],
  'Time the cgroup\'s tasks were throttled: v2 cpu.stat throttled_usec, v1 cpu.stat throttled_time',
);
export const cgroupMemoryCurrent = m(
  'cgroup_memory_current', MetricKind.Gauge, Unit.Bytes, [],
  'Memory charged to the cgroup and its descendants: v2 memory.current, v1 memory.usage_in_bytes (v1\'s root may read ' +
  'less than a child: the kernel does not charge everything to it)',
);
export const cgroupMemoryLimit = m(
  'cgroup_memory_limit', MetricKind.Gauge, Unit.Bytes, [],
  'Memory limit (absent when unlimited): v2 memory.max, v1 memory.limit_in_bytes',
);
export const cgroupMemoryAnon = m(
  'cgroup_memory_anon', MetricKind.Gauge, Unit.Bytes, [],
  'Anonymous memory (heap, stacks, tmpfs not counted): v2 memory.stat anon, v1 memory.stat total_rss',
);
export const cgroupMemoryFile = m(
  'cgroup_memory_file', MetricKind.Gauge, Unit.Bytes, [],
  'Page cache: v2 memory.stat file, v1 memory.stat total_cache',
);
export const cgroupMemoryOomKills = m(
  'cgroup_memory_oom_kills', MetricKind.Counter, Unit.Events, [],
  'Processes the OOM killer killed in the cgroup: v2 memory.events oom_kill, v1 memory.oom_control oom_kill',
);
export const cgroupPressure = m(
  'cgroup_pressure', MetricKind.Counter, Unit.Microseconds, ['resource', 'kind'],
  'Pressure stall time of the cgroup (resource cpu, memory or io; kind some or full), the total= of <resource>.pressure; v2 with PSI only',
);
const IO_NOTE =
  'device is the name in /sys/dev/block (major:minor when it has none). v2: the cgroup and its descendants. ' +
  'v1: the cgroup\'s own I/O, and only I/O that passed a blk-throttle rule (blkio.throttle.*): without a rule on the ' +
  'device, recent v1 kernels count none';
export const cgroupBlockioBytes = m(
  'cgroup_blockio_bytes', MetricKind.Counter, Unit.Bytes, ['device', 'op'],
  `Bytes the cgroup read and wrote per block device, op read or write: v2 io.stat rbytes/wbytes, v1 blkio.throttle.io_service_bytes. ${IO_NOTE}`,
);
export const cgroupBlockioOperations = m(
  'cgroup_blockio_operations', MetricKind.Counter, Unit.Operations, ['device', 'op'],
  `I/O operations per block device, op read or write: v2 io.stat rios/wios, v1 blkio.throttle.io_serviced. ${IO_NOTE}`,
);
export const cgroupPids = m(
  'cgroup_pids', MetricKind.Gauge, Unit.Tasks, [],
  'Tasks (processes and threads) in the cgroup and its descendants: pids.current',
);

export const cgroupId = m(
  'cgroup_id', MetricKind.Gauge, Unit.Count, [],
  'Stable id of the cgroup: the kernfs id (directory inode) in the cpu controller\'s hierarchy, the id the BPF samplers ' +
  'record; the same while the cgroup exists, a new one when a cgroup of that path is made again (absent when that ' +
  'hierarchy is not a cgroup file system, as on a fixture root)',
);

export const cgroupFolded = metric({
  name: 'cgroup_folded',
  kind: MetricKind.Gauge,
  unit: Unit.Count,
  labels: [],
  description:
    'Cgroups past [cgroups] max_cgroups, whose figures are summed into the cgroup="other" series instead of their own; ' +
    'cgroups deeper than [cgroups] max_depth are not read and not counted. The cgroupfs figures include descendants, so ' +
    '"other" overlaps the listed parents of folded cgroups: never sum a cgroupfs metric over the cgroup label.',
});

export const METRICS = [
  cgroupCpuUsage, cgroupCpuBandwidthQuota, cgroupCpuBandwidthPeriod, cgroupCpuBandwidthPeriods,
  cgroupCpuBandwidthThrottledPeriods, cgroupCpuBandwidthThrottledTime, cgroupMemoryCurrent, cgroupMemoryLimit,
  cgroupMemoryAnon, cgroupMemoryFile, cgroupMemoryOomKills, cgroupPressure, cgroupBlockioBytes, cgroupBlockioOperations,
  cgroupPids, cgroupId, cgroupFolded,
] as const;
