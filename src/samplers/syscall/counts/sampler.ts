import type { Labels, Point, Reading, SamplerDefinition } from '../../types.js';
import { defineBpfSampler } from '../../kernel/define.js';
import { SYSCALL_CLASSES } from '../classes.js';
import { fillClasses } from '../table.js';
import { CgroupPaths } from '../../cgroup/inodes.js';
import { DEFAULT_LIMITS } from '../../cgroup/limits.js';
import { PerCgroupCounters } from '../../kernel/per-cgroup.js';
import { LAYOUT, MAX_CGROUPS } from './maps.js';
import { cgroupSyscall, METRICS, syscall } from './metrics.js';

const NAME = 'syscall_counts';
const OPS: readonly Labels[] = SYSCALL_CLASSES.map((op) => Object.freeze({ op }));

export const syscallCountsSampler: SamplerDefinition = defineBpfSampler({
  name: NAME,
  description: 'Syscalls by class, in all and per cgroup (BPF, tp_btf sys_enter).',
  metrics: METRICS,
  layout: LAYOUT,
  afterLoad: fillClasses,
  reader(bpf, ctx) {
    const counters = bpf.counters('counters');
    const limits = ctx.cgroups ?? DEFAULT_LIMITS;
    const paths = CgroupPaths.open(ctx.procRoot, ctx.sysRoot, limits.maxDepth);
    const perCgroup = paths === undefined
      ? undefined
      : new PerCgroupCounters(bpf.packed('cgroup_syscall'), bpf.packed('cgroup_inode'), OPS.length, MAX_CGROUPS, paths, limits.maxCgroups);
    if (paths === undefined) ctx.log.info('no cpu cgroup hierarchy: no per-cgroup syscall counts');
    // cgroup → its { cgroup, op } label objects, pruned when the cgroup goes
    const labels = new Map<string, readonly Labels[]>();
    return (): Reading => {
      const points: Point[] = [];
      for (let k = 0; k < OPS.length; k++) points.push({ metric: syscall, labels: OPS[k]!, value: counters.total(k) });
      if (perCgroup !== undefined) {
        const seen = new Set<string>();
        for (const { cgroup, values } of perCgroup.read()) {
          seen.add(cgroup);
          let l = labels.get(cgroup);
          if (l === undefined) labels.set(cgroup, (l = SYSCALL_CLASSES.map((op) => Object.freeze({ cgroup, op }))));
          for (let k = 0; k < OPS.length; k++) points.push({ metric: cgroupSyscall, labels: l[k]!, value: values[k]! });
        }
        for (const cgroup of labels.keys()) if (!seen.has(cgroup)) labels.delete(cgroup);
      }
      return { points, skipped: 0 };
    };
  },
});
