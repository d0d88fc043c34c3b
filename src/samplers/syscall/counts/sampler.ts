import type { Labels, Point, Reading, SamplerDefinition } from '../../types.js';
import { defineBpfSampler } from '../../kernel/define.js';
import { SYSCALL_CLASSES } from '../classes.js';
import { fillClasses } from '../table.js';
import { LAYOUT } from './maps.js';
import { METRICS, syscall } from './metrics.js';

const NAME = 'syscall_counts';
const OPS: readonly Labels[] = SYSCALL_CLASSES.map((op) => Object.freeze({ op }));

export const syscallCountsSampler: SamplerDefinition = defineBpfSampler({
  name: NAME,
  description: 'Syscalls by class (BPF, tp_btf sys_enter).',
  metrics: METRICS,
  layout: LAYOUT,
  afterLoad: fillClasses,
  reader(bpf) {
    const counters = bpf.counters('counters');
    return (): Reading => {
      const points: Point[] = [];
      for (let k = 0; k < OPS.length; k++) points.push({ metric: syscall, labels: OPS[k]!, value: counters.total(k) });
      return { points, skipped: 0 };
    };
  },
});
