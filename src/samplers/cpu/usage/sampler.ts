import { readText, requireSource } from '../../read.js';
import type { Labels, Point, Reading, Sampler, SamplerContext, SamplerDefinition } from '../../types.js';
import { CPU_STATES, cpuUsage, cpuUsageAll, METRICS } from './metrics.js';
import { parseCpuStat, ticksToNs } from './parse.js';

const SOURCE = 'stat';

/** `{ state }` for the aggregate line, one per state, shared by every refresh. */
const ALL_LABELS: readonly Labels[] = CPU_STATES.map((state) => Object.freeze({ state }));

export const cpuUsageSampler: SamplerDefinition = {
  name: 'cpu_usage',
  description: 'CPU time per CPU and state, from the cpu lines of /proc/stat.',
  metrics: METRICS,
  async init(ctx: SamplerContext): Promise<Sampler> {
    await requireSource(ctx.procRoot, SOURCE);
    // `{ state, id }` label objects per CPU index, built the first time a CPU is seen
    const perCpu: (readonly Labels[] | undefined)[] = [];
    const labelsOf = (id: number): readonly Labels[] => {
      let labels = perCpu[id];
      if (labels === undefined) {
        const cpu = String(id);
        labels = CPU_STATES.map((state) => Object.freeze({ state, id: cpu }));
        perCpu[id] = labels;
      }
      return labels;
    };
    return {
      name: 'cpu_usage',
      metrics: METRICS,
      async refresh(): Promise<Reading> {
        const stat = parseCpuStat(await readText(ctx.procRoot, SOURCE));
        const points: Point[] = [];
        if (stat.all !== undefined) {
          const ticks = stat.all.ticks;
          for (let s = 0; s < ticks.length; s++) {
            points.push({ metric: cpuUsageAll, labels: ALL_LABELS[s]!, value: ticksToNs(ticks[s]!) });
          }
        }
        for (const cpu of stat.cpus) {
          const labels = labelsOf(cpu.id);
          const ticks = cpu.ticks;
          for (let s = 0; s < ticks.length; s++) {
            points.push({ metric: cpuUsage, labels: labels[s]!, value: ticksToNs(ticks[s]!) });
          }
        }
        return { points, skipped: stat.skipped };
      },
    };
  },
};
