import type { Labels, Point, Reading, Sampler, SamplerContext, SamplerDefinition } from '../../types.js';
import { NO_LABELS, SamplerUnsupportedError } from '../../types.js';
import * as m from './metrics.js';

const USER: Labels = { state: 'user' };
const SYSTEM: Labels = { state: 'system' };

export const rezolusSelfSampler: SamplerDefinition = {
  name: 'rezolus_self',
  description: 'The agent measuring itself: CPU, memory, per-sampler refresh cost and errors, publish buffer.',
  metrics: m.METRICS,
  async init(ctx: SamplerContext): Promise<Sampler> {
    const agent = ctx.agent;
    if (agent === undefined) throw new SamplerUnsupportedError('runs only inside the agent');
    const labels = new Map<string, Labels>();
    const byName = (name: string): Labels => {
      let l = labels.get(name);
      if (l === undefined) labels.set(name, (l = { sampler: name }));
      return l;
    };
    return {
      name: 'rezolus_self',
      metrics: m.METRICS,
      async refresh(): Promise<Reading> {
        const cpu = process.cpuUsage();
        const mem = process.memoryUsage();
        const p = agent.publishStats();
        const points: Point[] = [
          { metric: m.cpuUsage, labels: USER, value: cpu.user * 1000 },
          { metric: m.cpuUsage, labels: SYSTEM, value: cpu.system * 1000 },
          { metric: m.residentSetSize, labels: NO_LABELS, value: mem.rss },
          { metric: m.heapUsed, labels: NO_LABELS, value: mem.heapUsed },
          { metric: m.published, labels: NO_LABELS, value: p.published },
          { metric: m.dropped, labels: NO_LABELS, value: p.dropped },
          { metric: m.retries, labels: NO_LABELS, value: p.retries },
          { metric: m.buffered, labels: NO_LABELS, value: p.buffered },
          { metric: m.bufferedBytes, labels: NO_LABELS, value: p.bufferedBytes },
        ];
        for (const s of agent.samplerStats()) {
          const l = byName(s.name);
          points.push(
            { metric: m.refreshTime, labels: l, value: s.refreshNs },
            { metric: m.refreshes, labels: l, value: s.refreshes },
            { metric: m.refreshErrors, labels: l, value: s.errors },
            { metric: m.skippedEntries, labels: l, value: s.skipped },
            { metric: m.overruns, labels: l, value: s.overruns },
          );
        }
        return { points, skipped: 0 };
      },
    };
  },
};
