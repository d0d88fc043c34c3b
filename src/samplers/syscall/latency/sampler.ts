import type { Labels, Point, Reading, SamplerDefinition } from '../../types.js';
import { defineSyscallSampler } from '../shared/define.js';
import { SYSCALL_CLASSES } from '../classes.js';
import { METRICS, syscallLatency } from './metrics.js';

const NAME = 'syscall_latency';
const OPS: readonly Labels[] = SYSCALL_CLASSES.map((op) => Object.freeze({ op }));

export const syscallLatencySampler: SamplerDefinition = defineSyscallSampler({
  name: NAME,
  description: 'Syscall latency histograms by class (BPF, tp_btf sys_enter and sys_exit).',
  metrics: METRICS,
  reader(bpf) {
    const views = OPS.map((_, k) => bpf.histogram('latency', k));
    return (): Reading => {
      const points: Point[] = [];
      for (let k = 0; k < OPS.length; k++) points.push({ metric: syscallLatency, labels: OPS[k]!, value: views[k]!.read() });
      return { points, skipped: 0 };
    };
  },
});
