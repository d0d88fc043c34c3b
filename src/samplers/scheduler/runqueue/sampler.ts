import type { Labels, Point, Reading, SamplerDefinition } from '../../types.js';
import { NO_LABELS } from '../../types.js';
import { cpuLabels } from '../../kernel/labels.js';
import { defineBpfSampler } from '../../kernel/define.js';
import { CS_INVOLUNTARY, CS_VOLUNTARY, LAYOUT, RUNQUEUE_WAIT } from './maps.js';
import { CgroupLabelCache, openPerCgroup, pushPerCgroup } from '../../kernel/per-cgroup.js';
import {
  cgroupSchedulerRunqueueWait, METRICS, schedulerContextSwitch, schedulerOffcpu, schedulerRunning, schedulerRunqueueLatency, schedulerRunqueueWait,
} from './metrics.js';

const NAME = 'scheduler_runqueue';

export const schedulerRunqueueSampler: SamplerDefinition = defineBpfSampler({
  name: NAME,
  description: 'Runqueue latency, running and off-CPU time histograms and per-CPU context switches (BPF, tp_btf sched_*).',
  metrics: METRICS,
  layout: LAYOUT,
  reader(bpf, ctx) {
    const perCgroup = openPerCgroup(bpf, ctx, 'cgroup_runqueue_wait', 1);
    const cgroupLabels = new CgroupLabelCache();
    const latency = bpf.histogram('runqueue_latency');
    const running = bpf.histogram('running');
    const offcpu = bpf.histogram('offcpu');
    const counters = bpf.counters('counters');
    const ids = cpuLabels(bpf.cpus);
    const kinds: { involuntary: Labels; voluntary: Labels }[] = ids.map(({ id }) => ({
      involuntary: Object.freeze({ id, kind: 'involuntary' }),
      voluntary: Object.freeze({ id, kind: 'voluntary' }),
    }));
    return (): Reading => {
      const points: Point[] = [
        { metric: schedulerRunqueueLatency, labels: NO_LABELS, value: latency.read() },
        { metric: schedulerRunning, labels: NO_LABELS, value: running.read() },
        { metric: schedulerOffcpu, labels: NO_LABELS, value: offcpu.read() },
      ];
      for (let cpu = 0; cpu < bpf.cpus; cpu++) {
        const k = kinds[cpu]!;
        points.push({ metric: schedulerContextSwitch, labels: k.involuntary, value: counters.cpu(cpu, CS_INVOLUNTARY) });
        points.push({ metric: schedulerContextSwitch, labels: k.voluntary, value: counters.cpu(cpu, CS_VOLUNTARY) });
      }
      for (let cpu = 0; cpu < bpf.cpus; cpu++) {
        points.push({ metric: schedulerRunqueueWait, labels: ids[cpu]!, value: counters.cpu(cpu, RUNQUEUE_WAIT) });
      }
      pushPerCgroup(points, perCgroup, cgroupLabels, cgroupSchedulerRunqueueWait);
      return { points, skipped: 0 };
    };
  },
});
