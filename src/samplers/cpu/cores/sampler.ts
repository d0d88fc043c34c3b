import { readText } from '../../read.js';
import type { Reading, Sampler, SamplerContext, SamplerDefinition } from '../../types.js';
import { SamplerUnsupportedError } from '../../types.js';
import { cpuCores, METRICS } from './metrics.js';
import { parseCpuList } from './parse.js';

const SOURCE = 'devices/system/cpu/online';

export const cpuCoresSampler: SamplerDefinition = {
  name: 'cpu_cores',
  description: 'Online CPU count from sysfs.',
  metrics: METRICS,
  async init(ctx: SamplerContext): Promise<Sampler> {
    try {
      await readText(ctx.sysRoot, SOURCE);
    } catch (error) {
      throw new SamplerUnsupportedError(`cannot read ${ctx.sysRoot}/${SOURCE}`, { cause: error });
    }
    return {
      name: 'cpu_cores',
      metrics: METRICS,
      async refresh(): Promise<Reading> {
        const cpus = parseCpuList(await readText(ctx.sysRoot, SOURCE));
        if (cpus === undefined) return { points: [], skipped: 1 };
        return { points: [{ metric: cpuCores, labels: {}, value: cpus.length }], skipped: 0 };
      },
    };
  },
};
