import type { Labels, Point, Reading, SamplerDefinition } from '../../types.js';
import { defineSyscallSampler } from '../shared/define.js';
import { SYSCALL_CLASSES } from '../classes.js';
import { CGROUP_STRIPES, CgroupLabelCache, openPerCgroup, pushPerCgroup } from '../../kernel/per-cgroup.js';
import { cgroupSyscall, METRICS, syscall } from './metrics.js';

const NAME = 'syscall_counts';
const OPS: readonly Labels[] = SYSCALL_CLASSES.map((op) => Object.freeze({ op }));

export const syscallCountsSampler: SamplerDefinition = defineSyscallSampler({
  name: NAME,
  description: 'Syscalls by class, in all and per cgroup (BPF, raw_tp sys_enter).',
  metrics: METRICS,
  reader(bpf, ctx) {
    const counters = bpf.counters('counters');
    // CPU c adds to copy c % CGROUP_STRIPES and CPU ids run below counters.cpus: copies past it are never written
    const perCgroup = openPerCgroup(bpf, ctx, 'cgroup_syscall', OPS.length, CGROUP_STRIPES, counters.cpus);
    const labels = new CgroupLabelCache(SYSCALL_CLASSES.map((op) => ({ op })));
    return (): Reading => {
      const points: Point[] = [];
      for (let k = 0; k < OPS.length; k++) points.push({ metric: syscall, labels: OPS[k]!, value: counters.total(k) });
      pushPerCgroup(points, perCgroup, labels, cgroupSyscall);
      return { points, skipped: 0 };
    };
  },
});
