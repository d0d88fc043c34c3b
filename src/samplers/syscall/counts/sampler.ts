import type { Labels, Point, Reading, Sampler, SamplerContext, SamplerDefinition } from '../../types.js';
import { openBpf } from '../../kernel/load.js';
import { SYSCALL_CLASSES } from '../classes.js';
import { fillClasses } from '../table.js';
import { LAYOUT } from './maps.js';
import { METRICS, syscall } from './metrics.js';

const NAME = 'syscall_counts';
const OPS: readonly Labels[] = SYSCALL_CLASSES.map((op) => Object.freeze({ op }));

export const syscallCountsSampler: SamplerDefinition = {
  name: NAME,
  description: 'Syscalls by class (BPF, tp_btf sys_enter).',
  metrics: METRICS,
  kernel: true,
  layouts: [LAYOUT],
  async init(ctx: SamplerContext): Promise<Sampler> {
    const bpf = openBpf(LAYOUT, { sampler: NAME, log: ctx.log, afterLoad: fillClasses, ...(ctx.bpfEvents ? { events: ctx.bpfEvents } : {}) });
    const counters = bpf.counters('counters');
    return {
      name: NAME,
      metrics: METRICS,
      ...(bpf.degraded.length > 0 ? { degraded: bpf.degraded.join('; ') } : {}),
      async refresh(): Promise<Reading> {
        const points: Point[] = [];
        for (let k = 0; k < OPS.length; k++) points.push({ metric: syscall, labels: OPS[k]!, value: counters.total(k) });
        return { points, skipped: 0 };
      },
      async close(): Promise<void> {
        bpf.close();
      },
    };
  },
};
