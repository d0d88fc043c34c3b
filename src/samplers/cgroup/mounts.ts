/**
 * Where each cgroup controller's files are: cgroup v1 mounts one hierarchy
 * per controller (or per group of controllers), v2 one unified tree. On a
 * hybrid host (v1 controllers plus a v2 tree without them, as here) a
 * controller is read from its v1 hierarchy; the v2 tree serves what only it
 * has (pressure stall information) and every controller it has enabled.
 */

export interface CgroupMount {
  readonly version: 1 | 2;
  /** where it is mounted, e.g. /sys/fs/cgroup/cpu or /sys/fs/cgroup/unified */
  readonly path: string;
  /** v1: the controllers of this hierarchy (from the mount options); v2: empty, read cgroup.controllers */
  readonly controllers: readonly string[];
}

/** The controllers the sampler reads. */
export const CONTROLLERS = ['cpu', 'cpuacct', 'memory', 'blkio', 'io', 'pids'] as const;
export type Controller = (typeof CONTROLLERS)[number];

/** Unescapes the octal escapes of a mountinfo path field (`\040` for a space). */
function unescapeMountPath(s: string): string {
  return s.replace(/\\([0-7]{3})/g, (_, o: string) => String.fromCharCode(Number.parseInt(o, 8)));
}

/**
 * The cgroup and cgroup2 mounts of /proc/self/mountinfo. Fields: id parent
 * major:minor root mountpoint options [optional...] - fstype source superoptions.
 * A hierarchy mounted twice is listed once (its first mount point).
 */
export function parseMountinfo(text: string): { mounts: CgroupMount[]; skipped: number } {
  const mounts: CgroupMount[] = [];
  const seen = new Set<string>();
  let skipped = 0;
  for (const line of text.split('\n')) {
    if (line === '') continue;
    const dash = line.indexOf(' - ');
    if (dash < 0) {
      skipped++;
      continue;
    }
    const left = line.slice(0, dash).split(' ');
    const right = line.slice(dash + 3).split(' ');
    const fstype = right[0];
    if (fstype !== 'cgroup' && fstype !== 'cgroup2') continue;
    const mountPoint = left[4];
    const root = left[3];
    if (mountPoint === undefined || root === undefined || right.length < 3) {
      skipped++;
      continue;
    }
    // a bind mount of a sub-tree (root other than /) would list only part of the hierarchy
    if (root !== '/') continue;
    const options = (right[2] ?? '').split(',');
    const controllers = fstype === 'cgroup' ? options.filter((o) => o !== 'rw' && o !== 'ro' && !o.includes('=') && !o.startsWith('clone_') && !o.startsWith('noprefix') && o !== 'xattr') : [];
    const key = fstype === 'cgroup2' ? 'cgroup2' : [...controllers].sort().join(',') || options.find((o) => o.startsWith('name=')) || mountPoint;
    if (seen.has(key)) continue;
    seen.add(key);
    mounts.push({ version: fstype === 'cgroup2' ? 2 : 1, path: unescapeMountPath(mountPoint), controllers });
  }
  return { mounts, skipped };
}

export interface Sources {
  /** controller → the mount to read it from; absent when no hierarchy has it */
  readonly byController: ReadonlyMap<Controller, CgroupMount>;
  /** the v2 tree, when mounted (pressure files, cpu.stat of v2) */
  readonly unified: CgroupMount | undefined;
}

/**
 * Picks, per controller, the hierarchy to read: its v1 hierarchy when there
 * is one, else the v2 tree when its root enables it (`v2Controllers`, the
 * root's cgroup.controllers). v2 names io what v1 calls blkio, and its cpu
 * controller carries both usage and bandwidth.
 */
export function pickSources(mounts: readonly CgroupMount[], v2Controllers: readonly string[]): Sources {
  const byController = new Map<Controller, CgroupMount>();
  for (const m of mounts) {
    if (m.version !== 1) continue;
    for (const c of m.controllers) {
      if ((CONTROLLERS as readonly string[]).includes(c) && !byController.has(c as Controller)) byController.set(c as Controller, m);
    }
  }
  const unified = mounts.find((m) => m.version === 2);
  if (unified !== undefined) {
    const v2 = new Set(v2Controllers);
    const fill = (c: Controller, v2name: string): void => {
      if (!byController.has(c) && v2.has(v2name)) byController.set(c, unified);
    };
    fill('cpu', 'cpu');
    fill('memory', 'memory');
    if (!byController.has('blkio')) fill('io', 'io');
    fill('pids', 'pids');
    // v2 reports CPU usage in every cgroup's cpu.stat, controller or not
    if (!byController.has('cpuacct')) byController.set('cpuacct', unified);
  }
  return { byController, unified };
}
