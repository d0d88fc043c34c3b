/**
 * cgroup_resources: per-cgroup CPU, CFS bandwidth, memory, I/O, pids and
 * pressure from cgroupfs, v1 hierarchies or the v2 tree (mounts.ts), with
 * bounded cardinality: at most [cgroups] max_cgroups cgroups get series of
 * their own, the rest are summed into cgroup="other" and counted. The set is
 * checked at every refresh (a stat per cgroup: walk.ts, TreeListing) and
 * listed again when it changed: a cgroup that goes away stops being
 * published (and the descriptor of the old layout expires unused).
 */
import { readlinkSync } from 'node:fs';
import { basename, join } from 'node:path';
import { addU64, toCounter, type Counter } from '../../metrics/u64.js';
import type { Labels, Point, Reading, Sampler, SamplerContext, SamplerDefinition } from '../types.js';
import { NO_LABELS, SamplerUnsupportedError } from '../types.js';
import { keepBelowFd, OpenFiles, openFilesBudget, ownSoftOpenFilesLimit } from '../open-files.js';
import { readPseudoFile } from '../read.js';
import * as m from './metrics.js';
import { discoverSources } from './discover.js';
import { decodeCgroupName } from './parse.js';
import { cgroupPaths, cpuTotal, PSI_RESOURCES, readCgroup, splitUsage, type CgroupFigures } from './read.js';
import { MissingFiles } from './missing.js';
import { CgroupSelection } from './select.js';
import { breadthFirst, isCgroupFs, TreeListing } from './walk.js';
import { cgroupLabels, type CgroupLabels } from './labels.js';
import { RenameGuard } from './renames.js';
import { DEFAULT_LIMITS } from './limits.js';

const NAME = 'cgroup_resources';
/** refreshes after which a file found missing is opened again (missing.ts) */
const MISSING_RETRY = 30;
/**
 * A cgroup's limits (CFS quota and period, memory limit: 3 of a v1 cgroup's
 * ~13 files) are read every this many refreshes, when it is new and when a
 * listing changed; in between they are the last ones read. A limit changed
 * by hand or by an orchestrator shows within this many refreshes.
 */
const LIMITS_EVERY = 10;

/** The sum of two figures, either of which may be missing. */
function add(a: Counter | undefined, b: Counter | undefined): Counter | undefined {
  if (b === undefined) return a;
  if (a === undefined) return b;
  return addU64(a, b);
}

/** The figures of the folded cgroups, summed where a sum means something (not limits, quotas or pressure). */
function sum(all: readonly CgroupFigures[]): CgroupFigures {
  const s: CgroupFigures = { pressure: new Map(), io: new Map(), skipped: 0 };
  for (const f of all) {
    s.usageNs = add(s.usageNs, f.usageNs);
    s.userNs = add(s.userNs, f.userNs);
    s.systemNs = add(s.systemNs, f.systemNs);
    s.periods = add(s.periods, f.periods);
    s.throttledPeriods = add(s.throttledPeriods, f.throttledPeriods);
    s.throttledNs = add(s.throttledNs, f.throttledNs);
    s.memoryCurrent = add(s.memoryCurrent, f.memoryCurrent);
    s.anon = add(s.anon, f.anon);
    s.file = add(s.file, f.file);
    s.oomKills = add(s.oomKills, f.oomKills);
    s.pids = add(s.pids, f.pids);
    for (const [dev, io] of f.io) {
      const t = s.io.get(dev);
      s.io.set(dev, t === undefined ? io : {
        readBytes: add(t.readBytes, io.readBytes) as Counter,
        writeBytes: add(t.writeBytes, io.writeBytes) as Counter,
        readOps: add(t.readOps, io.readOps),
        writeOps: add(t.writeOps, io.writeOps),
      });
    }
  }
  return s;
}

export const cgroupResourcesSampler: SamplerDefinition = {
  name: NAME,
  description: 'Per-cgroup CPU, CFS throttling, memory, OOM kills, block I/O, pids and pressure from cgroupfs (v1 or v2), bounded by [cgroups].',
  metrics: m.METRICS,
  // ~250 µs per cgroup per refresh: at 10 Hz a host's few dozen cgroups would cost more than every other sampler
  minIntervalMs: 1000,
  async init(ctx: SamplerContext): Promise<Sampler> {
    const limits = ctx.cgroups ?? DEFAULT_LIMITS;
    const sources = discoverSources(ctx.procRoot, ctx.sysRoot);
    if (sources === undefined) throw new SamplerUnsupportedError(`cannot read ${ctx.procRoot}/self/mountinfo`);
    if (sources.byController.size === 0) throw new SamplerUnsupportedError('no cgroup hierarchy with cpu, memory, io or pids is mounted');
    // ids come from the hierarchy whose ids BPF records, the cpu controller's, when it is a real
    // cgroup file system (a fixture root's directories have inodes, but not kernfs ids)
    const idMount = (sources.byController.get('cpu') ?? sources.unified ?? [...sources.byController.values()][0])!.path;
    const idTree = isCgroupFs(idMount) ? idMount : undefined;
    const trees = [...new Set([...sources.byController.values(), ...(sources.unified ? [sources.unified] : [])].map((x) => x.path))];
    ctx.log.debug({ sources: Object.fromEntries([...sources.byController].map(([c, x]) => [c, x.path])) }, 'cgroup hierarchies');
    // files stay open between refreshes only on cgroupfs, where a removed cgroup's fd fails (open-files.ts)
    const soft = ownSoftOpenFilesLimit();
    const openFiles = openFilesBudget(limits.openFiles ?? DEFAULT_LIMITS.openFiles, soft);
    const onCgroupFs = trees.every(isCgroupFs);
    const files = openFiles > 0 && onCgroupFs ? new OpenFiles(openFiles, keepBelowFd(soft), true) : undefined;
    // a v1 cgroup renamed and its name made again: its kept files are the renamed one's (renames.ts)
    const v1Mounts = new Set([...sources.byController.values()].filter((x) => x.version === 1).map((x) => x.path));
    const renames = files !== undefined && v1Mounts.size > 0 ? new RenameGuard(files, v1Mounts) : undefined;
    const open = files === undefined ? readPseudoFile : (path: string): string => files.read(path);
    const missing = new MissingFiles(MISSING_RETRY);
    const read = (path: string): string => missing.read(open, path);

    const selection = new CgroupSelection(limits.maxCgroups);
    // each hierarchy's listing, kept while it stays the same (walk.ts), and the selection made from them
    const listings = trees.map((tree) => new TreeListing(tree, limits.maxDepth, onCgroupFs));
    const listed = new Map<string, ReadonlySet<string>>();
    const inTree = (tree: string, path: string): boolean => listed.get(tree)?.has(path) === true;
    let current: { kept: string[]; folded: string[] } | undefined;
    let refreshes = 0;
    /** the limits last read of each kept cgroup */
    const limitsOf = new Map<string, Pick<CgroupFigures, 'quotaNs' | 'periodNs' | 'memoryLimit'>>();
    const labels = new Map<string, CgroupLabels>();
    const devices = new Map<string, string>();
    const deviceName = (majmin: string): string => {
      let name = devices.get(majmin);
      if (name === undefined) {
        try {
          name = basename(readlinkSync(join(ctx.sysRoot, 'dev', 'block', majmin)));
        } catch {
          name = majmin;
        }
        devices.set(majmin, name);
      }
      return name;
    };
    // the CPU split last published per cgroup, so that it never goes back, and the total it came from
    const cpuSplit = new Map<string, { user: bigint; system: bigint; total?: bigint }>();
    const labelsOf = (cgroup: string): CgroupLabels => {
      let l = labels.get(cgroup);
      if (l === undefined) labels.set(cgroup, (l = cgroupLabels(cgroup)));
      return l;
    };

    return {
      name: NAME,
      metrics: m.METRICS,
      async refresh(): Promise<Reading> {
        // the id tree's listing also gives each cgroup's inode (cgroup_id) from the stat it makes anyway
        const ids = idTree === undefined ? undefined : new Map<string, bigint>();
        let changed = false;
        for (const l of listings) {
          const now = l.list(l.mount === idTree ? ids : undefined);
          if (!now.changed) continue;
          changed = true;
          const paths = new Set(now.paths);
          listed.set(l.mount, paths);
          renames?.listed(l.mount, paths);
        }
        if (changed || current === undefined) {
          missing.clear();
          const present = [...new Set([...listed.values()].flatMap((set) => [...set]))].sort(breadthFirst);
          current = selection.update(present);
        }
        const { kept, folded } = current;
        // the paths of cgroups not read in this refresh (gone) are forgotten at its end
        if (changed) cgroupPaths.mark();
        const allLimits = changed || refreshes % LIMITS_EVERY === 0;
        refreshes++;
        const points: Point[] = [];
        let skipped = 0;
        const keptNames = new Set<string>();
        for (const path of kept) {
          const name = decodeCgroupName(path);
          const known = limitsOf.get(name);
          const f = readCgroup(sources, path, inTree, read, allLimits || known === undefined);
          if (allLimits || known === undefined) limitsOf.set(name, { quotaNs: f.quotaNs, periodNs: f.periodNs, memoryLimit: f.memoryLimit });
          else Object.assign(f, known);
          skipped += f.skipped;
          keptNames.add(name);
          // less CPU time than last refresh: removed and made again under this name, its counters start anew
          const total = cpuTotal(f);
          const before = cpuSplit.get(name);
          const prev = before?.total !== undefined && total !== undefined && total < before.total ? undefined : before;
          const split = splitUsage(f, prev);
          if (split !== undefined) cpuSplit.set(name, { ...split, ...(total !== undefined ? { total } : {}) });
          const l = labelsOf(name);
          emit(points, l, f, split, deviceName, true);
          const ino = ids?.get(path);
          if (ino !== undefined) points.push({ metric: m.cgroupId, labels: l.cgroup, value: toCounter(ino) });
        }
        if (folded.length > 0) {
          // the sum of folded cgroups has no limits: theirs are not read
          const figures = folded.map((path) => readCgroup(sources, path, inTree, read, false));
          for (const f of figures) skipped += f.skipped;
          const other = sum(figures);
          const split = splitUsage(other, cpuSplit.get('other'));
          if (split !== undefined) cpuSplit.set('other', split);
          emit(points, labelsOf('other'), other, split, deviceName, false);
        }
        points.push({ metric: m.cgroupFolded, labels: NO_LABELS, value: folded.length });
        // label objects of cgroups that went away are dropped: memory stays bounded by max_cgroups
        for (const name of labels.keys()) {
          if (name !== 'other' && !keptNames.has(name)) {
            labels.delete(name);
            cpuSplit.delete(name);
            limitsOf.delete(name);
          }
        }
        files?.sweep();
        if (changed) cgroupPaths.sweep();
        missing.refreshed();
        return { points, skipped };
      },
      async close(): Promise<void> {
        files?.close();
      },
    };
  },
};

function emit(
  points: Point[], l: CgroupLabels, f: CgroupFigures, split: { user: bigint; system: bigint } | undefined,
  deviceName: (majmin: string) => string, own: boolean,
): void {
  const push = (metric: Point['metric'], labels: Labels, value: Counter | undefined): void => {
    if (value !== undefined) points.push({ metric, labels, value });
  };
  if (split !== undefined) {
    push(m.cgroupCpuUsage, l.user, toCounter(split.user));
    push(m.cgroupCpuUsage, l.system, toCounter(split.system));
  }
  if (own) {
    push(m.cgroupCpuBandwidthQuota, l.cgroup, f.quotaNs);
    push(m.cgroupCpuBandwidthPeriod, l.cgroup, f.periodNs);
  }
  push(m.cgroupCpuBandwidthPeriods, l.cgroup, f.periods);
  push(m.cgroupCpuBandwidthThrottledPeriods, l.cgroup, f.throttledPeriods);
  push(m.cgroupCpuBandwidthThrottledTime, l.cgroup, f.throttledNs);
  push(m.cgroupMemoryCurrent, l.cgroup, f.memoryCurrent);
  if (own) push(m.cgroupMemoryLimit, l.cgroup, f.memoryLimit);
  push(m.cgroupMemoryAnon, l.cgroup, f.anon);
  push(m.cgroupMemoryFile, l.cgroup, f.file);
  push(m.cgroupMemoryOomKills, l.cgroup, f.oomKills);
  for (const resource of PSI_RESOURCES) {
    const p = f.pressure.get(resource);
    if (p === undefined) continue;
    push(m.cgroupPressure, l.pressure(resource, 'some'), p.some);
    push(m.cgroupPressure, l.pressure(resource, 'full'), p.full);
  }
  for (const dev of [...f.io.keys()].sort()) {
    const io = f.io.get(dev)!;
    const name = deviceName(dev);
    push(m.cgroupBlockioBytes, l.io(name, 'read'), io.readBytes);
    push(m.cgroupBlockioBytes, l.io(name, 'write'), io.writeBytes);
    push(m.cgroupBlockioOperations, l.io(name, 'read'), io.readOps);
    push(m.cgroupBlockioOperations, l.io(name, 'write'), io.writeOps);
  }
  push(m.cgroupPids, l.cgroup, f.pids);
}
