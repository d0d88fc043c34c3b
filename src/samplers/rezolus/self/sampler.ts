import type { Labels, Point, Reading, Sampler, SamplerContext, SamplerDefinition } from '../../types.js';
import { NO_LABELS, SamplerUnsupportedError } from '../../types.js';
import type { MetricDecl } from '../../../metrics/metric.js';
import { SAMPLER_STATES, type SamplerStats } from '../introspection.js';
import * as m from './metrics.js';

const USER: Labels = { state: 'user' };
const SYSTEM: Labels = { state: 'system' };

/** A point whose value is written again each refresh. */
interface Slot {
  readonly metric: MetricDecl;
  readonly labels: Labels;
  value: number | bigint;
}

/** The points of one layout: the samplers with stats, in order, and every sampler's state. */
interface Layout {
  readonly names: readonly string[];
  readonly states: number;
  readonly points: Slot[];
}

const FIXED = [m.cpuUsage, m.cpuUsage, m.residentSetSize, m.heapUsed, m.published, m.dropped, m.retries, m.refused, m.buffered, m.bufferedBytes] as const;
const FIXED_LABELS = [USER, SYSTEM] as const;
const PER_SAMPLER = [m.refreshTime, m.refreshes, m.refreshErrors, m.skippedEntries, m.overruns] as const;

export const rezolusSelfSampler: SamplerDefinition = {
  name: 'rezolus_self',
  description: 'The agent measuring itself: CPU, memory, per-sampler refresh cost and errors, publish buffer.',
  metrics: m.METRICS,
  // The agent's own figures are cumulative counters and gauges that a 10 Hz view of the host does not need ten
  // times a second: 270 series (a third of every sampler's, on a host with 26 samplers); once a second, the agent
  // at 100 ms costs ~5 % less (test/bench/README.md, "agent cost at 10 Hz: where a tick goes"). Recordings chart it
  // between its own frames (their timestamp/rezolus_self column), not as a sawtooth over 100 ms rows.
  minIntervalMs: 1000,
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
    /**
     * The points are made once per layout and their values written again each
     * refresh: some 190 objects a tick otherwise (5 per sampler with stats, 5
     * states per sampler of the registry). A changed layout makes a new array,
     * so the agent's layout check (sameLayout) still sees the change.
     */
    let layout: Layout | undefined;
    const layoutFor = (stats: readonly SamplerStats[], states: readonly { readonly name: string }[]): Layout => {
      const same =
        layout !== undefined && layout.names.length === stats.length && layout.states === states.length && stats.every((s, i) => layout?.names[i] === s.name);
      if (same) return layout as Layout;
      const points: Slot[] = FIXED.map((metric, i) => ({ metric, labels: FIXED_LABELS[i] ?? NO_LABELS, value: 0 }));
      for (const s of stats) for (const metric of PER_SAMPLER) points.push({ metric, labels: byName(s.name), value: 0 });
      for (const { name } of states) for (const l of statesOf(name)) points.push({ metric: m.samplerState, labels: l, value: 0 });
      layout = { names: stats.map((s) => s.name), states: states.length, points };
      return layout;
    };
    return {
      name: 'rezolus_self',
      metrics: m.METRICS,
      async refresh(): Promise<Reading> {
        const cpu = process.cpuUsage();
        const mem = process.memoryUsage();
        const p = agent.publishStats();
        const stats = agent.samplerStats();
        const states = agent.samplerStates();
        const { points } = layoutFor(stats, states);
        let i = 0;
        const put = (v: number | bigint): void => {
          (points[i++] as Slot).value = v;
        };
        put(cpu.user * 1000);
        put(cpu.system * 1000);
        put(mem.rss);
        put(mem.heapUsed);
        put(p.published);
        put(p.dropped);
        put(p.retries);
        put(p.refused ?? 0);
        put(p.buffered);
        put(p.bufferedBytes);
        for (const s of stats) {
          put(s.refreshNs);
          put(s.refreshes);
          put(s.errors);
          put(s.skipped);
          put(s.overruns);
        }
        for (const { state } of states) for (const name of SAMPLER_STATES) put(name === state ? 1 : 0);
        return { points: points as Point[], skipped: 0 };
      },
    };
  },
};
