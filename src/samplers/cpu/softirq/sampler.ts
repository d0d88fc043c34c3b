import type { Labels, Point, Reading, Sampler, SamplerContext, SamplerDefinition } from '../../types.js';
import { cpuLabels } from '../../kernel/labels.js';
import { openBpf } from '../../kernel/load.js';
import { KINDS, LAYOUT, TIME_BASE } from './maps.js';
import { METRICS, softirq, softirqTime } from './metrics.js';

const NAME = 'cpu_softirq';

export const cpuSoftirqSampler: SamplerDefinition = {
  name: NAME,
  description: 'Softirqs per CPU and kind, count and time (BPF, tp_btf softirq_entry/softirq_exit).',
  metrics: METRICS,
  kernel: true,
  layouts: [LAYOUT],
  async init(ctx: SamplerContext): Promise<Sampler> {
    const bpf = openBpf(LAYOUT, { sampler: NAME, log: ctx.log, ...(ctx.bpfEvents ? { events: ctx.bpfEvents } : {}) });
    const counters = bpf.counters('counters');
    // labels[cpu][vector]
    const labels: Labels[][] = cpuLabels(bpf.cpus).map(({ id }) => KINDS.map((kind) => Object.freeze({ id, kind })));
    return {
      name: NAME,
      metrics: METRICS,
      ...(bpf.degraded.length > 0 ? { degraded: bpf.degraded.join('; ') } : {}),
      async refresh(): Promise<Reading> {
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
      },
      async close(): Promise<void> {
        bpf.close();
      },
    };
  },
};
