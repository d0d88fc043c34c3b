import type { Labels, Point, Reading, Sampler, SamplerContext, SamplerDefinition } from '../../types.js';
import { openBpf } from '../../kernel/load.js';
import { LAYOUT, OPS } from './maps.js';
import { blockioLatency, METRICS } from './metrics.js';

const NAME = 'blockio_latency';

export const blockioLatencySampler: SamplerDefinition = {
  name: NAME,
  description: 'Block request issue-to-completion latency histograms by op (BPF, tp_btf block_rq_issue and block_rq_complete).',
  metrics: METRICS,
  kernel: true,
  layouts: [LAYOUT],
  async init(ctx: SamplerContext): Promise<Sampler> {
    const bpf = openBpf(LAYOUT, { sampler: NAME, log: ctx.log, ...(ctx.bpfEvents ? { events: ctx.bpfEvents } : {}) });
    const ops = OPS.map((op, i) => ({ labels: Object.freeze({ op }) as Labels, latency: bpf.histogram('latency', i) }));
    return {
      name: NAME,
      metrics: METRICS,
      ...(bpf.degraded.length > 0 ? { degraded: bpf.degraded.join('; ') } : {}),
      async refresh(): Promise<Reading> {
        const points: Point[] = ops.map((o) => ({ metric: blockioLatency, labels: o.labels, value: o.latency.read() }));
        return { points, skipped: 0 };
      },
      async close(): Promise<void> {
        bpf.close();
      },
    };
  },
};
