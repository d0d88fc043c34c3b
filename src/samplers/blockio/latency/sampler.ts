import type { Labels, Point, Reading, SamplerDefinition } from '../../types.js';
import { defineBpfSampler } from '../../kernel/define.js';
import { LAYOUT, OPS } from './maps.js';
import { blockioLatency, METRICS } from './metrics.js';

const NAME = 'blockio_latency';

export const blockioLatencySampler: SamplerDefinition = defineBpfSampler({
  name: NAME,
  description: 'Block request issue-to-completion latency histograms by op (BPF, tp_btf block_rq_issue and block_rq_complete).',
  metrics: METRICS,
  layout: LAYOUT,
  reader(bpf) {
    const ops = OPS.map((op, i) => ({ labels: Object.freeze({ op }) as Labels, latency: bpf.histogram('latency', i) }));
    return (): Reading => {
      const points: Point[] = ops.map((o) => ({ metric: blockioLatency, labels: o.labels, value: o.latency.read() }));
      return { points, skipped: 0 };
    };
  },
});
