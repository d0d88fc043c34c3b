/**
 * Per-cgroup counters kept by BPF programs in slots indexed by css.id
 * (bpf/include/cgroup.h), read back as (cgroup path, counters): slots whose
 * cgroup is gone or unknown are left out, and past `maxCgroups` cgroups the
 * rest are summed into `other`, as cgroup_resources does.
 */
import { CgroupPaths } from '../cgroup/inodes.js';
import { DEFAULT_LIMITS } from '../cgroup/limits.js';
import { breadthFirst } from '../cgroup/walk.js';
import { addU64 } from '../../metrics/u64.js';
import type { MetricDecl } from '../../metrics/metric.js';
import type { Labels, Point, SamplerContext } from '../types.js';
import type { LoadedBpf } from './load.js';
import type { PackedView } from './views.js';

/** The slots of bpf/include/cgroup.h: css ids below this. */
export const MAX_CGROUPS = 4096;
/** Copies per slot of bpf/include/cgroup.h's CGROUP_STRIPED_COUNTERS (CPU c adds to copy c % this). */
export const CGROUP_STRIPES = 8;

export interface CgroupCounts {
  readonly cgroup: string;
  readonly values: readonly (number | bigint)[];
}


/** A slot with a cgroup and a counter not zero: its css id, the cgroup's kernfs id and its counters. */
export interface LiveSlot {
  readonly id: number;
  readonly inode: number | bigint;
  readonly values: (number | bigint)[];
}

/**
 * The slots below `slots` that have a cgroup (a non-zero inode, found by one
 * native scan of the inode array rather than a read per slot) and any
 * counter not zero, ids ascending; a slot of `stripes` copies (the striped
 * counters) is the sum of the first `used` (on a host with fewer CPUs than
 * copies, the others are never written).
 */
export function liveSlots(counters: PackedView, inodes: PackedView, width: number, slots: number, stripes = 1, used = stripes): LiveSlot[] {
  const live: LiveSlot[] = [];
  const { index, value } = inodes.nonZero();
  for (let j = 0; j < index.length; j++) {
    const id = index[j]!;
    if (id >= slots) break;
    const values: (number | bigint)[] = new Array(width);
    let any = false;
    for (let k = 0; k < width; k++) {
      let v: number | bigint = counters.get(id * stripes * width + k);
      for (let s = 1; s < used; s++) v = addU64(v, counters.get((id * stripes + s) * width + k));
      values[k] = v;
      if (v !== 0) any = true;
    }
    if (any) live.push({ id, inode: value[j]!, values });
  }
  return live;
}

export class PerCgroupCounters {
  constructor(
    private readonly counters: PackedView,
    private readonly inodes: PackedView,
    private readonly width: number,
    private readonly slots: number,
    private readonly paths: CgroupPaths,
    private readonly maxCgroups: number,
    private readonly stripes = 1,
    private readonly used = stripes,
  ) {}

  read(): CgroupCounts[] {
    const found: CgroupCounts[] = [];
    const live = liveSlots(this.counters, this.inodes, this.width, this.slots, this.stripes, this.used);
    const paths = this.paths.pathsOf(live.map((slot) => BigInt(slot.inode)));
    for (let i = 0; i < live.length; i++) {
      const cgroup = paths[i];
      if (cgroup !== undefined) found.push({ cgroup, values: live[i]!.values });
    }
    found.sort((a, b) => breadthFirst(a.cgroup, b.cgroup));
    if (found.length <= this.maxCgroups) return found;
    const own = found.slice(0, this.maxCgroups);
    const other = found.slice(this.maxCgroups).reduce<(number | bigint)[]>(
      (sum, c) => sum.map((s, k) => addU64(s, c.values[k] ?? 0)),
      new Array<number | bigint>(this.width).fill(0),
    );
    return [...own, { cgroup: 'other', values: other }];
  }
}

/**
 * The per-cgroup counters of a loaded object (`map`, `width` per slot in
 * `stripes` copies, CPU c adding to copy c % stripes, of which `cpus` CPUs
 * use the first min(cpus, stripes); with the object's cgroup_inode slots),
 * or undefined, said once, when this host has no hierarchy of the cpu
 * controller to name the cgroups by.
 */
export function openPerCgroup(bpf: LoadedBpf, ctx: SamplerContext, map: string, width: number, stripes = 1, cpus = stripes): PerCgroupCounters | undefined {
  const limits = ctx.cgroups ?? DEFAULT_LIMITS;
  const paths = CgroupPaths.open(ctx.procRoot, ctx.sysRoot, limits.maxDepth);
  if (paths === undefined) {
    ctx.log.info('no hierarchy of the cpu cgroup controller: no per-cgroup series');
    return undefined;
  }
  return new PerCgroupCounters(bpf.packed(map), bpf.packed('cgroup_inode'), width, MAX_CGROUPS, paths, limits.maxCgroups, stripes, Math.max(1, Math.min(stripes, cpus)));
}

/** `{ cgroup, ...extra[i] }` label objects per cgroup, made once; `prune` drops the cgroups not seen. */
export class CgroupLabelCache {
  private readonly byCgroup = new Map<string, readonly Labels[]>();

  constructor(private readonly extra: readonly Readonly<Record<string, string>>[] = [{}]) {}

  get(cgroup: string): readonly Labels[] {
    let l = this.byCgroup.get(cgroup);
    if (l === undefined) this.byCgroup.set(cgroup, (l = this.extra.map((e) => Object.freeze({ cgroup, ...e }))));
    return l;
  }

  prune(seen: ReadonlySet<string>): void {
    for (const cgroup of this.byCgroup.keys()) if (!seen.has(cgroup)) this.byCgroup.delete(cgroup);
  }
}

/**
 * Appends `metric` for every counter of every cgroup (label set k of
 * `labels` for counter k), then drops the labels of cgroups no longer there.
 */
export function pushPerCgroup(points: Point[], counters: PerCgroupCounters | undefined, labels: CgroupLabelCache, metric: MetricDecl): void {
  if (counters === undefined) return;
  const seen = new Set<string>();
  for (const { cgroup, values } of counters.read()) {
    seen.add(cgroup);
    const l = labels.get(cgroup);
    for (let k = 0; k < values.length; k++) points.push({ metric, labels: l[k]!, value: values[k]! });
  }
  labels.prune(seen);
}
