import type { Labels, Point, Reading, Sampler, SamplerContext, SamplerDefinition } from '../../types.js';
import { cpuLabels } from '../../kernel/labels.js';
import { openBpf } from '../../kernel/load.js';
import { LAYOUT, MIGRATE_FROM, MIGRATE_TO } from './maps.js';
import { cpuMigrations, METRICS } from './metrics.js';

const NAME = 'cpu_migrations';

export const cpuMigrationsSampler: SamplerDefinition = {
  name: NAME,
  description: 'Task migrations per CPU, from and to (BPF, tp_btf sched_migrate_task).',
  metrics: METRICS,
  kernel: true,
  layouts: [LAYOUT],
  async init(ctx: SamplerContext): Promise<Sampler> {
    const bpf = openBpf(LAYOUT, { sampler: NAME, log: ctx.log, ...(ctx.bpfEvents ? { events: ctx.bpfEvents } : {}) });
    const counters = bpf.counters('counters');
    const labels: { from: Labels; to: Labels }[] = cpuLabels(bpf.cpus).map(({ id }) => ({
      from: Object.freeze({ id, direction: 'from' }),
      to: Object.freeze({ id, direction: 'to' }),
    }));
    return {
      name: NAME,
      metrics: METRICS,
      ...(bpf.degraded.length > 0 ? { degraded: bpf.degraded.join('; ') } : {}),
      async refresh(): Promise<Reading> {
        const points: Point[] = [];
        for (let cpu = 0; cpu < bpf.cpus; cpu++) {
          const l = labels[cpu]!;
          points.push({ metric: cpuMigrations, labels: l.from, value: counters.cpu(cpu, MIGRATE_FROM) });
          points.push({ metric: cpuMigrations, labels: l.to, value: counters.cpu(cpu, MIGRATE_TO) });
        }
        return { points, skipped: 0 };
      },
      async close(): Promise<void> {
        bpf.close();
      },
    };
  },
};
