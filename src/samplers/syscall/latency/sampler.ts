import type { Labels, Point, Reading, Sampler, SamplerContext, SamplerDefinition } from '../../types.js';
import { openBpf } from '../../kernel/load.js';
import { SYSCALL_CLASSES } from '../classes.js';
import { fillClasses } from '../table.js';
import { LAYOUT } from './maps.js';
import { METRICS, syscallLatency } from './metrics.js';

const NAME = 'syscall_latency';
const OPS: readonly Labels[] = SYSCALL_CLASSES.map((op) => Object.freeze({ op }));

export const syscallLatencySampler: SamplerDefinition = {
  name: NAME,
  description: 'Syscall latency histograms by class (BPF, tp_btf sys_enter and sys_exit).',
  metrics: METRICS,
  kernel: true,
  layouts: [LAYOUT],
  async init(ctx: SamplerContext): Promise<Sampler> {
    const bpf = openBpf(LAYOUT, { sampler: NAME, log: ctx.log, afterLoad: fillClasses, ...(ctx.bpfEvents ? { events: ctx.bpfEvents } : {}) });
    const views = OPS.map((_, k) => bpf.histogram('latency', k));
    return {
      name: NAME,
      metrics: METRICS,
      ...(bpf.degraded.length > 0 ? { degraded: bpf.degraded.join('; ') } : {}),
      async refresh(): Promise<Reading> {
        const points: Point[] = [];
        for (let k = 0; k < OPS.length; k++) points.push({ metric: syscallLatency, labels: OPS[k]!, value: views[k]!.read() });
        return { points, skipped: 0 };
      },
      async close(): Promise<void> {
        bpf.close();
      },
    };
  },
};
