import { readText, requireSource } from '../../read.js';
import type { Point, Reading, Sampler, SamplerContext, SamplerDefinition } from '../../types.js';
import { NO_LABELS } from '../../types.js';
import { METRICS, VMSTAT_SOURCES } from './metrics.js';
import { parseVmstat } from './parse.js';

const SOURCE = 'vmstat';


export const memoryVmstatSampler: SamplerDefinition = {
  name: 'memory_vmstat',
  description: 'Curated virtual memory counters from /proc/vmstat: NUMA, faults, paging, swap, reclaim, THP, OOM.',
  metrics: METRICS,
  async init(ctx: SamplerContext): Promise<Sampler> {
    await requireSource(ctx.procRoot, SOURCE);
    return {
      name: 'memory_vmstat',
      metrics: METRICS,
      async refresh(): Promise<Reading> {
        const { values, skipped } = parseVmstat(await readText(ctx.procRoot, SOURCE));
        const points: Point[] = [];
        for (let i = 0; i < values.length; i++) {
          const value = values[i];
          if (value !== undefined) points.push({ metric: VMSTAT_SOURCES[i]!.metric, labels: NO_LABELS, value });
        }
        return { points, skipped };
      },
    };
  },
};
