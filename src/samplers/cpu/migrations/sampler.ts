import type { Labels, Point, Reading, SamplerDefinition } from '../../types.js';
import { cpuLabels } from '../../kernel/labels.js';
import { defineBpfSampler } from '../../kernel/define.js';
import { LAYOUT, MIGRATE_FROM, MIGRATE_TO } from './maps.js';
import { CgroupLabelCache, openPerCgroup, pushPerCgroup } from '../../kernel/per-cgroup.js';
import { cgroupCpuMigrations, cpuMigrations, METRICS } from './metrics.js';

const NAME = 'cpu_migrations';

export const cpuMigrationsSampler: SamplerDefinition = defineBpfSampler({
  name: NAME,
  description: 'Task migrations per CPU, from and to (BPF, tp_btf sched_migrate_task).',
  metrics: METRICS,
  layout: LAYOUT,
  reader(bpf, ctx) {
    const counters = bpf.counters('counters');
    const perCgroup = openPerCgroup(bpf, ctx, 'cgroup_migrations', 1);
    const cgroupLabels = new CgroupLabelCache();
    const labels: { from: Labels; to: Labels }[] = cpuLabels(bpf.cpus).map(({ id }) => ({
      from: Object.freeze({ id, direction: 'from' }),
      to: Object.freeze({ id, direction: 'to' }),
    }));
    return (): Reading => {
      const points: Point[] = [];
      for (let cpu = 0; cpu < bpf.cpus; cpu++) {
        const l = labels[cpu]!;
        points.push({ metric: cpuMigrations, labels: l.from, value: counters.cpu(cpu, MIGRATE_FROM) });
        points.push({ metric: cpuMigrations, labels: l.to, value: counters.cpu(cpu, MIGRATE_TO) });
      }
      pushPerCgroup(points, perCgroup, cgroupLabels, cgroupCpuMigrations);
      return { points, skipped: 0 };
    };
  },
});
