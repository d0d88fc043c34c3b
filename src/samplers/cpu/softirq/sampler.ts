import type { Labels, Point, Reading, SamplerDefinition } from '../../types.js';
import { cpuLabels } from '../../kernel/labels.js';
import { defineBpfSampler } from '../../kernel/define.js';
import { KINDS, LAYOUT, TIME_BASE } from './maps.js';
import { METRICS, softirq, softirqTime } from './metrics.js';

const NAME = 'cpu_softirq';

export const cpuSoftirqSampler: SamplerDefinition = defineBpfSampler({
  name: NAME,
  description: 'Softirqs per CPU and kind, count and time (BPF, tp_btf softirq_entry/softirq_exit).',
  metrics: METRICS,
  layout: LAYOUT,
  reader(bpf) {
    const counters = bpf.counters('counters');
    // labels[cpu][vector]
    const labels: Labels[][] = cpuLabels(bpf.cpus).map(({ id }) => KINDS.map((kind) => Object.freeze({ id, kind })));
    return (): Reading => {
      const points: Point[] = [];
      for (let cpu = 0; cpu < bpf.cpus; cpu++) {
        const l = labels[cpu]!;
        for (let v = 0; v < KINDS.length; v++) points.push({ metric: softirq, labels: l[v]!, value: counters.cpu(cpu, v) });
      }
      for (let cpu = 0; cpu < bpf.cpus; cpu++) {
        const l = labels[cpu]!;
        for (let v = 0; v < KINDS.length; v++) {
          points.push({ metric: softirqTime, labels: l[v]!, value: counters.cpu(cpu, TIME_BASE + v) });
        }
      }
      return { points, skipped: 0 };
    };
  },
});
