import { readText, requireSource } from '../../read.js';
import type { Reading, Sampler, SamplerContext, SamplerDefinition } from '../../types.js';
import { NO_LABELS } from '../../types.js';
import { cpuCores, METRICS } from './metrics.js';
import { parseCpuList } from './parse.js';

const SOURCE = 'devices/system/cpu/online';

export const cpuCoresSampler: SamplerDefinition = {
  name: 'cpu_cores',
  description: 'Online CPU count from sysfs.',
  metrics: METRICS,
  async init(ctx: SamplerContext): Promise<Sampler> {
    await requireSource(ctx.sysRoot, SOURCE);
    return {
      name: 'cpu_cores',
      metrics: METRICS,
      async refresh(): Promise<Reading> {
        const cpus = parseCpuList(await readText(ctx.sysRoot, SOURCE));
        if (cpus === undefined) return { points: [], skipped: 1 };
        return { points: [{ metric: cpuCores, labels: NO_LABELS, value: cpus.length }], skipped: 0 };
      },
    };
  },
};
