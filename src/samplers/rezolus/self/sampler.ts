import type { Labels, Point, Reading, Sampler, SamplerContext, SamplerDefinition } from '../../types.js';
import { NO_LABELS, SamplerUnsupportedError } from '../../types.js';
import { SAMPLER_STATES } from '../introspection.js';
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
    // sampler → one { sampler, state } label object per state, made once
    const stateLabels = new Map<string, readonly Labels[]>();
    const statesOf = (name: string): readonly Labels[] => {
      let l = stateLabels.get(name);
      if (l === undefined) stateLabels.set(name, (l = SAMPLER_STATES.map((state) => Object.freeze({ sampler: name, state }))));
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
          { metric: m.refused, labels: NO_LABELS, value: p.refused ?? 0 },
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
        for (const { name, state } of agent.samplerStates()) {
          const l = statesOf(name);
          for (let i = 0; i < SAMPLER_STATES.length; i++) {
            points.push({ metric: m.samplerState, labels: l[i]!, value: SAMPLER_STATES[i] === state ? 1 : 0 });
          }
        }
        return { points, skipped: 0 };
      },
    };
  },
};
