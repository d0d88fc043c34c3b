/**
 * Per-cgroup counters kept by BPF programs in slots indexed by css.id
 * (bpf/include/cgroup.h), read back as (cgroup path, counters): slots whose
 * cgroup is gone or unknown are left out, and past `maxCgroups` cgroups the
 * rest are summed into `other`, as cgroup_resources does.
 */
import type { CgroupPaths } from '../cgroup/inodes.js';
import type { PackedView } from './views.js';

export interface CgroupCounts {
  readonly cgroup: string;
  readonly values: readonly (number | bigint)[];
}

function add(a: number | bigint, b: number | bigint): number | bigint {
  if (typeof a === 'number' && typeof b === 'number' && Number.isSafeInteger(a + b)) return a + b;
  return BigInt(a) + BigInt(b);
}

const depth = (p: string): number => (p === '/' ? 0 : p.split('/').length);

export class PerCgroupCounters {
  constructor(
    private readonly counters: PackedView,
    private readonly inodes: PackedView,
    private readonly width: number,
    private readonly slots: number,
    private readonly paths: CgroupPaths,
    private readonly maxCgroups: number,
  ) {}

  read(): CgroupCounts[] {
    const found: CgroupCounts[] = [];
    for (let id = 0; id < this.slots; id++) {
      const inode = this.inodes.get(id);
      if (inode === 0) continue;
      const values: (number | bigint)[] = new Array(this.width);
      let any = false;
      for (let k = 0; k < this.width; k++) {
        const v = this.counters.get(id * this.width + k);
        values[k] = v;
        if (v !== 0) any = true;
      }
      if (!any) continue;
      const cgroup = this.paths.pathOf(BigInt(inode));
      if (cgroup !== undefined) found.push({ cgroup, values });
    }
    found.sort((a, b) => depth(a.cgroup) - depth(b.cgroup) || (a.cgroup < b.cgroup ? -1 : a.cgroup > b.cgroup ? 1 : 0));
    if (found.length <= this.maxCgroups) return found;
    const own = found.slice(0, this.maxCgroups);
    const other = found.slice(this.maxCgroups).reduce<(number | bigint)[]>(
      (sum, c) => sum.map((s, k) => add(s, c.values[k] ?? 0)),
      new Array<number | bigint>(this.width).fill(0),
    );
    return [...own, { cgroup: 'other', values: other }];
  }
}
