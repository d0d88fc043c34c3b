/**
 * One cgroup's figures, read from the hierarchy that serves each controller
 * (v1 or v2, see mounts.ts). A file that is missing or malformed leaves its
 * figures out ("missing beats wrong"); malformed lines are counted.
 */
import { PathCache } from '../path-cache.js';
import type { Counter } from '../../metrics/u64.js';
import { readPseudoFile } from '../read.js';
import type { Sources } from './mounts.js';
import { parseKnownKeys, parseSingleValue } from './parse.js';
import { parseBlkioV1, parseCfsQuota, parseCpuacctUsage, parseCpuStatV1 } from './parse-v1.js';
import { parseCpuMax, parseCpuStatV2, parseIoStatV2, parsePressure } from './parse-v2.js';

export const PSI_RESOURCES = ['cpu', 'memory', 'io'] as const;
const PSI_FILES = { cpu: 'cpu.pressure', memory: 'memory.pressure', io: 'io.pressure' } as const;

/** memory.stat's anonymous and file-backed bytes: v2 `anon`, `file`; v1 the hierarchical totals `total_rss`, `total_cache` */
const MEMORY_STAT_V2_KEYS = ['anon', 'file'] as const;
const MEMORY_STAT_V1_KEYS = ['total_rss', 'total_cache'] as const;
/** memory.events (v2) and memory.oom_control (v1) both count OOM kills as `oom_kill` */
const OOM_KILL_KEY = ['oom_kill'] as const;

export interface IoFigures {
  readonly readBytes: Counter;
  readonly writeBytes: Counter;
  readonly readOps: Counter | undefined;
  readonly writeOps: Counter | undefined;
}

export interface CgroupFigures {
  /** CPU time, exact (v1 cpuacct.usage, v2 usage_usec) */
  usageNs?: Counter;
  /** the user/system split as the files give it (v1: tick-sampled, see splitUsage) */
  userNs?: Counter;
  systemNs?: Counter;
  quotaNs?: Counter;
  periodNs?: Counter;
  periods?: Counter;
  throttledPeriods?: Counter;
  throttledNs?: Counter;
  memoryCurrent?: Counter;
  memoryLimit?: Counter;
  anon?: Counter;
  file?: Counter;
  oomKills?: Counter;
  /** resource → total stall µs of some and full */
  pressure: Map<(typeof PSI_RESOURCES)[number], { some?: Counter; full?: Counter }>;
  /** "major:minor" → bytes and operations */
  io: Map<string, IoFigures>;
  pids?: Counter;
  skipped: number;
}

/** cgroup directories and their files, joined once */
const dirs = new PathCache();
const files = new PathCache();

/**
 * The paths above, for a refresh whose listing changed: mark() before it
 * reads, sweep() after, and the paths of cgroups it did not read (gone, or
 * no longer selected) are forgotten.
 */
export const cgroupPaths = {
  mark(): void {
    dirs.mark();
    files.mark();
  },
  sweep(): void {
    dirs.sweep();
    files.sweep();
  },
  /** how many directory and file paths are kept */
  get size(): number {
    return dirs.size + files.size;
  },
};

/** Reads a file as text, throwing as open(2) or read(2) do (readPseudoFile, or OpenFiles.read). */
export type ReadFile = (path: string) => string;

/**
 * Reads every figure of `path` (relative to the hierarchies' roots) that its
 * hierarchies have. `inTree(mount, path)` says whether the hierarchy mounted
 * there has the cgroup (from the refresh's listing), so that no file of a
 * hierarchy without it is tried: a failed open costs as much as a read.
 * `limits` false leaves out the files of limits (CFS quota and period, the
 * memory limit): quotaNs, periodNs and memoryLimit stay unset.
 */
export function readCgroup(
  sources: Sources,
  path: string,
  inTree: (mount: string, path: string) => boolean = () => true,
  read: ReadFile = readPseudoFile,
  limits = true,
): CgroupFigures {
  /** A cgroupfs file as text, or undefined when it cannot be read. */
  const text = (dir: string, file: string): string | undefined => {
    try {
      return read(files.join(dir, file));
    } catch {
      return undefined;
    }
  };
  const f: CgroupFigures = { pressure: new Map(), io: new Map(), skipped: 0 };
  const at = (c: Parameters<Sources['byController']['get']>[0]): { dir: string; v2: boolean } | undefined => {
    const m = sources.byController.get(c);
    return m === undefined || !inTree(m.path, path) ? undefined : { dir: dirs.join(m.path, path), v2: m.version === 2 };
  };

  const usage = at('cpuacct');
  if (usage?.v2) {
    const t = text(usage.dir, 'cpu.stat');
    if (t !== undefined) {
      const s = parseCpuStatV2(t);
      f.usageNs = s.usageNs;
      f.userNs = s.userNs;
      f.systemNs = s.systemNs;
      f.skipped += s.skipped;
    }
  } else if (usage !== undefined) {
    for (const [file, key] of [['cpuacct.usage', 'usageNs'], ['cpuacct.usage_user', 'userNs'], ['cpuacct.usage_sys', 'systemNs']] as const) {
      const t = text(usage.dir, file);
      if (t === undefined) continue;
      const u = parseCpuacctUsage(t);
      f[key] = u.ns;
      f.skipped += u.skipped;
    }
  }

  const cpu = at('cpu');
  if (cpu !== undefined) {
    const stat = text(cpu.dir, 'cpu.stat');
    if (stat !== undefined) {
      const s = cpu.v2 ? parseCpuStatV2(stat) : parseCpuStatV1(stat);
      f.periods = s.nrPeriods;
      f.throttledPeriods = s.nrThrottled;
      f.throttledNs = s.throttledNs;
      f.skipped += s.skipped;
    }
    if (limits && cpu.v2) {
      const max = text(cpu.dir, 'cpu.max');
      if (max !== undefined) {
        const q = parseCpuMax(max);
        if (!q.unlimited) {
          f.quotaNs = q.quotaNs;
          f.periodNs = q.periodNs;
        }
        f.skipped += q.skipped;
      }
    } else if (limits) {
      const quota = text(cpu.dir, 'cpu.cfs_quota_us');
      const period = text(cpu.dir, 'cpu.cfs_period_us');
      if (quota !== undefined && period !== undefined) {
        const q = parseCfsQuota(quota);
        const p = parseSingleValue(period);
        if (!q.unlimited && q.quotaNs !== undefined && typeof p.value === 'number') {
          f.quotaNs = q.quotaNs;
          f.periodNs = p.value * 1000;
        }
        f.skipped += q.skipped + p.skipped;
      }
    }
  }

  const memory = at('memory');
  if (memory !== undefined) {
    const current = text(memory.dir, memory.v2 ? 'memory.current' : 'memory.usage_in_bytes');
    if (current !== undefined) {
      const c = parseSingleValue(current);
      f.memoryCurrent = c.value;
      f.skipped += c.skipped;
    }
    const limit = limits ? text(memory.dir, memory.v2 ? 'memory.max' : 'memory.limit_in_bytes') : undefined;
    if (limit !== undefined) {
      const l = parseSingleValue(limit);
      if (!l.unlimited) f.memoryLimit = l.value;
      f.skipped += l.skipped;
    }
    const stat = text(memory.dir, 'memory.stat');
    if (stat !== undefined) {
      const s = parseKnownKeys(stat, memory.v2 ? MEMORY_STAT_V2_KEYS : MEMORY_STAT_V1_KEYS);
      f.anon = s.values[0];
      f.file = s.values[1];
      f.skipped += s.skipped;
    }
    const events = text(memory.dir, memory.v2 ? 'memory.events' : 'memory.oom_control');
    if (events !== undefined) {
      const e = parseKnownKeys(events, OOM_KILL_KEY);
      f.oomKills = e.values[0];
      f.skipped += e.skipped;
    }
  }

  const v1io = at('blkio');
  const v2io = at('io');
  if (v1io !== undefined) {
    const bytes = text(v1io.dir, 'blkio.throttle.io_service_bytes');
    const ops = text(v1io.dir, 'blkio.throttle.io_serviced');
    if (bytes !== undefined) {
      const b = parseBlkioV1(bytes);
      const o = ops === undefined ? undefined : parseBlkioV1(ops);
      f.skipped += b.skipped + (o?.skipped ?? 0);
      for (const d of b.devices) {
        const od = o?.devices.find((x) => x.major === d.major && x.minor === d.minor);
        f.io.set(`${d.major}:${d.minor}`, { readBytes: d.read, writeBytes: d.write, readOps: od?.read, writeOps: od?.write });
      }
    }
  } else if (v2io !== undefined) {
    const stat = text(v2io.dir, 'io.stat');
    if (stat !== undefined) {
      const s = parseIoStatV2(stat);
      f.skipped += s.skipped;
      for (const d of s.devices) {
        f.io.set(`${d.major}:${d.minor}`, { readBytes: d.rbytes, writeBytes: d.wbytes, readOps: d.rios, writeOps: d.wios });
      }
    }
  }

  const pids = at('pids');
  if (pids !== undefined) {
    const current = text(pids.dir, 'pids.current');
    if (current !== undefined) {
      const p = parseSingleValue(current);
      f.pids = p.value;
      f.skipped += p.skipped;
    }
  }

  if (sources.unified !== undefined && inTree(sources.unified.path, path)) {
    const dir = dirs.join(sources.unified.path, path);
    for (const resource of PSI_RESOURCES) {
      const t = text(dir, PSI_FILES[resource]);
      if (t === undefined) continue;
      const p = parsePressure(t);
      f.pressure.set(resource, { ...(p.some !== undefined ? { some: p.some } : {}), ...(p.full !== undefined ? { full: p.full } : {}) });
      f.skipped += p.skipped;
    }
  }
  return f;
}

/**
 * A cgroup's total CPU time (the exact usage, else user + system), which
 * never falls while the cgroup exists: a lower one than last time is a
 * cgroup made anew under the same name.
 */
export function cpuTotal(f: CgroupFigures): bigint | undefined {
  if (f.usageNs !== undefined) return BigInt(f.usageNs);
  if (f.userNs === undefined || f.systemNs === undefined) return undefined;
  return BigInt(f.userNs) + BigInt(f.systemNs);
}

/**
 * User and system CPU time that add up to the exact usage. v1's
 * cpuacct.usage_user/usage_sys charge whole ticks to whoever is running, so
 * a task throttled every period is over-counted (measured here under a 10 %
 * quota: 472 ms of user+system for 374 ms of usage); the exact usage is
 * split in their proportion instead, as the kernel does for a task's own
 * utime/stime. Never below what was published before (`prev`), so the
 * counters stay monotonic when the proportion moves.
 */
export function splitUsage(
  f: CgroupFigures, prev: { user: bigint; system: bigint } | undefined,
): { user: bigint; system: bigint } | undefined {
  if (f.userNs === undefined || f.systemNs === undefined) return undefined;
  const u = BigInt(f.userNs);
  const s = BigInt(f.systemNs);
  let user = u;
  let system = s;
  if (f.usageNs !== undefined && u + s > 0n) {
    const usage = BigInt(f.usageNs);
    user = (usage * u) / (u + s);
    system = usage - user;
  }
  if (prev !== undefined) {
    if (user < prev.user) user = prev.user;
    if (system < prev.system) system = prev.system;
  }
  return { user, system };
}
