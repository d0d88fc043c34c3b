import { cpus } from 'node:os';
import { totalCount } from '../../../metrics/histogram.js';
import type { Labels, Point, Reading, SamplerDefinition } from '../../types.js';
import { defineSyscallSampler } from '../shared/define.js';
import { DEFAULT_TIMING_BUDGET, SamplingPlan } from '../shared/sampling.js';
import { SYSCALL_CLASSES } from '../classes.js';
import { METRICS, syscallLatency, syscallLatencyTimed } from './metrics.js';

const NAME = 'syscall_latency';
const OPS: readonly Labels[] = SYSCALL_CLASSES.map((op) => Object.freeze({ op }));

export const syscallLatencySampler: SamplerDefinition = defineSyscallSampler({
  name: NAME,
  description: 'Syscall latency histograms by class (BPF, raw_tp sys_enter and sys_exit).',
  metrics: METRICS,
  reader(bpf, ctx, handle) {
    const views = OPS.map((_, k) => bpf.histogram('latency', k));
    const totals = new Float64Array(OPS.length);
    // an object syscall_counts kept loaded may hold this role's histograms from an earlier run: rates start from them
    for (let k = 0; k < OPS.length; k++) totals[k] = totalCount(views[k]!.read());
    const plan = new SamplingPlan(OPS.length, Math.max(1, cpus().length), ctx.syscallTimingBudget ?? DEFAULT_TIMING_BUDGET, performance.now(), totals);
    return (): Reading => {
      const points: Point[] = [];
      for (let k = 0; k < OPS.length; k++) {
        const view = views[k]!;
        const value = view.read();
        totals[k] = view.total;
        points.push({ metric: syscallLatency, labels: OPS[k]!, value });
      }
      // the shares these histograms were timed at, before the rates just read choose the next ones
      for (let k = 0; k < OPS.length; k++) points.push({ metric: syscallLatencyTimed, labels: OPS[k]!, value: 1 / 2 ** plan.shifts[k]! });
      if (plan.update(totals, performance.now())) handle.setSampleShifts(plan.shifts);
      return { points, skipped: 0 };
    };
  },
});
