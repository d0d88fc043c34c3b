/**
 * cgroup v1 lets a cgroup be renamed, within its parent (v2 refuses). After
 * `A` is renamed to `B` and a new `A` made, the files kept open under the name
 * A (open-files.ts) are B's: their fds still read fine. A rename shows in the
 * listing as a name that was not there before under that parent; so when a
 * refresh's listing of a v1 hierarchy has a new name, the kept files of its
 * siblings are dropped and opened again. Nothing is checked while the
 * listing stays the same (a stat per directory and refresh cost 0.49x ->
 * 0.65x against the base at 100 cgroups, test/bench/README.md). Not caught:
 * two siblings that swap names within one refresh.
 */
import type { OpenFiles } from '../open-files.js';

/** `/a/b` -> `/a`, `/a` -> `/` */
function parentOf(path: string): string {
  const i = path.lastIndexOf('/');
  return i <= 0 ? '/' : path.slice(0, i);
}

export class RenameGuard {
  /** v1 hierarchy -> the cgroups its last listing had */
  private readonly previous = new Map<string, ReadonlySet<string>>();

  constructor(
    private readonly files: OpenFiles,
    /** the mount points of the v1 hierarchies */
    private readonly v1Mounts: ReadonlySet<string>,
  ) {}

  /** After a hierarchy is listed (paths relative to its mount, `/` for the root). */
  listed(mount: string, paths: ReadonlySet<string>): void {
    if (!this.v1Mounts.has(mount)) return;
    const before = this.previous.get(mount);
    this.previous.set(mount, paths);
    if (before === undefined) return;
    const parents = new Set<string>();
    for (const p of paths) if (p !== '/' && !before.has(p)) parents.add(parentOf(p));
    if (parents.size === 0) return;
    const dirs = new Set<string>();
    for (const p of paths) if (p !== '/' && before.has(p) && parents.has(parentOf(p))) dirs.add(`${mount}${p}`);
    if (dirs.size > 0) this.files.forgetDirs(dirs);
  }
}
