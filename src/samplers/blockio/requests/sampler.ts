import type { Labels, Point, Reading, SamplerDefinition } from '../../types.js';
import { defineBpfSampler } from '../../kernel/define.js';
import { BYTES, ERROR_KINDS, ERRORS, LAYOUT, OPERATIONS, OPS, REQUEUES } from './maps.js';
import { blockioBytes, blockioErrors, blockioOperations, blockioRequeues, blockioSize, METRICS } from './metrics.js';

const NAME = 'blockio_requests';

export const blockioRequestsSampler: SamplerDefinition = defineBpfSampler({
  name: NAME,
  description:
    'Completed block requests by op: operations, bytes, size histogram, errors by kind and requeues, every device summed ' +
    '(BPF, tp_btf block_rq_complete and block_rq_requeue).',
  metrics: METRICS,
  layout: LAYOUT,
  reader(bpf) {
    const counters = bpf.counters('counters');
    const ops = OPS.map((op, i) => ({
      labels: Object.freeze({ op }) as Labels,
      size: bpf.histogram('size', i),
      errors: ERROR_KINDS.map((error, e) => ({
        labels: Object.freeze({ op, error }) as Labels,
        slot: ERRORS + i * ERROR_KINDS.length + e,
      })),
    }));
    return (): Reading => {
      const points: Point[] = [];
      ops.forEach((o, i) => points.push({ metric: blockioOperations, labels: o.labels, value: counters.total(OPERATIONS + i) }));
      ops.forEach((o, i) => points.push({ metric: blockioBytes, labels: o.labels, value: counters.total(BYTES + i) }));
      for (const o of ops) points.push({ metric: blockioSize, labels: o.labels, value: o.size.read() });
      for (const o of ops) {
        for (const e of o.errors) points.push({ metric: blockioErrors, labels: e.labels, value: counters.total(e.slot) });
      }
      ops.forEach((o, i) => points.push({ metric: blockioRequeues, labels: o.labels, value: counters.total(REQUEUES + i) }));
      return { points, skipped: 0 };
    };
  },
});
