import { metric, MetricKind, Unit } from '../../../metrics/metric.js';

const STATS =
  'counted by the kernel only while BPF stats are on: [kernel] bpf_stats = true turns them on for the agent\'s lifetime ' +
  '(BPF_ENABLE_STATS), else only sysctl kernel.bpf_stats_enabled=1 does (off by default, so zeros)';

export const bpfRunCount = metric({
  name: 'rezolus_bpf_run_count',
  kind: MetricKind.Counter,
  unit: Unit.Count,
  labels: ['sampler', 'program'],
  description: `Runs of each BPF program the agent loaded, per sampler and program (programs one object serves to several samplers under their names joined by +, e.g. syscall_counts+syscall_latency); bpf_prog_info run_cnt, ${STATS}.`,
});

export const bpfRunTime = metric({
  name: 'rezolus_bpf_run_time',
  kind: MetricKind.Counter,
  unit: Unit.Nanoseconds,
  labels: ['sampler', 'program'],
  description: `Time spent running each BPF program the agent loaded, per sampler and program (shared programs under the sampler names joined by +); bpf_prog_info run_time_ns, ${STATS}.`,
});

export const METRICS = [bpfRunCount, bpfRunTime] as const;
