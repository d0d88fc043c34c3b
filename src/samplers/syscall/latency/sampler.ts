import type { Labels, Point, Reading, SamplerDefinition } from '../../types.js';
import { defineBpfSampler } from '../../kernel/define.js';
import { SYSCALL_CLASSES } from '../classes.js';
import { fillClasses } from '../table.js';
import { LAYOUT } from './maps.js';
import { METRICS, syscallLatency } from './metrics.js';

const NAME = 'syscall_latency';
const OPS: readonly Labels[] = SYSCALL_CLASSES.map((op) => Object.freeze({ op }));

export const syscallLatencySampler: SamplerDefinition = defineBpfSampler({
  name: NAME,
  description: 'Syscall latency histograms by class (BPF, tp_btf sys_enter and sys_exit).',
  metrics: METRICS,
  layout: LAYOUT,
  afterLoad: fillClasses,
  reader(bpf) {
    const views = OPS.map((_, k) => bpf.histogram('latency', k));
    return (): Reading => {
      const points: Point[] = [];
      for (let k = 0; k < OPS.length; k++) points.push({ metric: syscallLatency, labels: OPS[k]!, value: views[k]!.read() });
      return { points, skipped: 0 };
    };
  },
});
