import { readText, requireSource } from '../../read.js';
import type { Point, Reading, Sampler, SamplerContext, SamplerDefinition } from '../../types.js';
import { NO_LABELS } from '../../types.js';
import { METRICS } from './metrics.js';
import { parseMeminfo } from './parse.js';

const SOURCE = 'meminfo';


export const memoryMeminfoSampler: SamplerDefinition = {
  name: 'memory_meminfo',
  description: 'System memory usage gauges, one per /proc/meminfo field.',
  metrics: METRICS,
  async init(ctx: SamplerContext): Promise<Sampler> {
    await requireSource(ctx.procRoot, SOURCE);
    return {
      name: 'memory_meminfo',
      metrics: METRICS,
      async refresh(): Promise<Reading> {
        const { entries, skipped } = parseMeminfo(await readText(ctx.procRoot, SOURCE));
        const points: Point[] = new Array<Point>(entries.length);
        for (let i = 0; i < entries.length; i++) {
          const e = entries[i]!;
          points[i] = { metric: e.field.metric, labels: NO_LABELS, value: e.value };
        }
        return { points, skipped };
      },
    };
  },
};
