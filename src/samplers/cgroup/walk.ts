import { readdirSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { PathCache } from '../path-cache.js';
import { fileSystemType } from '../pseudo-file.js';

/** Orders cgroup paths breadth first: the root, then its children, then theirs; by name within a level. */
export function breadthFirst(a: string, b: string): number {
  const da = a === '/' ? 0 : a.split('/').length;
  const db = b === '/' ? 0 : b.split('/').length;
  return da - db || (a < b ? -1 : a > b ? 1 : 0);
}

const CGROUP_SUPER_MAGIC = 0x27e0eb;
const CGROUP2_SUPER_MAGIC = 0x63677270;

/** Whether `path` is on a cgroup file system (v1 or v2), not a fixture tree. */
export function isCgroupFs(path: string): boolean {
  const type = fileSystemType(path);
  return type === CGROUP_SUPER_MAGIC || type === CGROUP2_SUPER_MAGIC;
}

/**
 * The cgroups of a hierarchy as paths relative to its mount (`/` for the
 * root, `/system.slice/nginx.service`), breadth first, down to `maxDepth`
 * levels below the root. Directories that vanish while listed are skipped.
 *
 * `leafByLinks` (for cgroupfs, whose directories have 2 + subdirectories
 * links, as kernfs keeps them) skips listing a directory whose stat says it
 * has no subdirectory: a cgroup directory holds 20-60 files, and listing the
 * leaves was ~30 % of cgroup_resources' time at 100-1000 cgroups.
 *
 * `inodes`, when given, gets each listed directory's inode (the kernfs id of
 * a cgroup) from the same stat, so that a caller wanting ids does not stat
 * every directory a second time; a directory gone before its stat has none.
 * `links`, when given, gets each listed directory's link count as kernfs
 * keeps it (2 + subdirectories): 2 for a leaf known by its stat, 2 + the
 * subdirectories read for a directory listed, the stat's for the deepest
 * level (not read).
 */
export function listCgroups(
  mount: string, maxDepth: number, leafByLinks = false, inodes?: Map<string, bigint>, links?: Map<string, number>,
): string[] {
  const out = ['/'];
  let level = ['/'];
  for (let depth = 1; depth <= maxDepth && level.length > 0; depth++) {
    const next: string[] = [];
    for (const rel of level) {
      let entries;
      try {
        const dir = join(mount, rel);
        if (inodes !== undefined || links !== undefined) {
          const st = statSync(dir, { bigint: true });
          inodes?.set(rel, st.ino);
          links?.set(rel, Number(st.nlink));
          if (leafByLinks && st.nlink === 2n) continue;
        } else if (leafByLinks && statSync(dir).nlink === 2) continue;
        entries = readdirSync(dir, { withFileTypes: true });
      } catch {
        // removed meanwhile, or not readable now (EMFILE): no count, so that a kept listing
        // (TreeListing) is not taken for complete and the next check lists again
        links?.delete(rel);
        continue;
      }
      let subdirs = 0;
      for (const e of entries) {
        if (!e.isDirectory()) continue;
        next.push(rel === '/' ? `/${e.name}` : `${rel}/${e.name}`);
        subdirs++;
      }
      // the count of what was listed, not the stat's: a child removed between the stat and the
      // read, then another made, would leave the stat's count right and the listing short
      links?.set(rel, 2 + subdirs);
    }
    next.sort();
    out.push(...next);
    level = next;
  }
  // the deepest level found was not visited: its directories still want their inode and links
  if (inodes !== undefined || links !== undefined) {
    for (const rel of level) {
      try {
        const st = statSync(join(mount, rel), { bigint: true });
        inodes?.set(rel, st.ino);
        links?.set(rel, Number(st.nlink));
      } catch {
        // removed meanwhile
      }
    }
  }
  return out;
}

/**
 * A hierarchy's listing, kept from one refresh to the next on cgroupfs.
 * Listing reads every directory that has subdirectories, files and all (a
 * v1 hierarchy's root holds 30-70 entries); checking that nothing changed
 * is one stat per cgroup: on kernfs a directory's link count is 2 + its
 * subdirectories. The kept listing is used again when every cgroup in it
 * still stats with the link count and the inode it had: a cgroup made shows
 * as a link more on its parent; one removed or renamed, as a failed stat of
 * its path (so does one renamed over a removed sibling); one removed and
 * made again under its name, as a new inode (the sampler then opens its
 * files again, missing.ts). Anything else lists the hierarchy again. Not on
 * a fixture tree (`cgroupFs` false), whose directories count links their
 * own way: listed every time.
 */
export class TreeListing {
  private paths: readonly string[] | undefined;
  private readonly links = new Map<string, number>();
  private readonly inodes = new Map<string, bigint>();
  private readonly dirs = new PathCache();

  constructor(
    readonly mount: string,
    readonly maxDepth: number,
    readonly cgroupFs: boolean,
  ) {}

  /**
   * The cgroups now (as listCgroups), and whether they may differ from the
   * last call's; `inodes` gets each one's inode, as listCgroups.
   */
  list(inodes?: Map<string, bigint>): { readonly paths: readonly string[]; readonly changed: boolean } {
    if (this.paths !== undefined && this.unchanged()) {
      if (inodes !== undefined) for (const [rel, ino] of this.inodes) inodes.set(rel, ino);
      return { paths: this.paths, changed: false };
    }
    this.links.clear();
    this.inodes.clear();
    // the paths stat'ed since the listing before stay (one listing more), those of cgroups gone before it go
    this.dirs.sweep();
    this.dirs.mark();
    const paths = listCgroups(this.mount, this.maxDepth, this.cgroupFs, this.inodes, this.cgroupFs ? this.links : undefined);
    this.paths = this.cgroupFs ? paths : undefined;
    if (inodes !== undefined) for (const [rel, ino] of this.inodes) inodes.set(rel, ino);
    return { paths, changed: true };
  }

  /** How many joined paths are kept for the stats of unchanged(). */
  get pathsKept(): number {
    return this.dirs.size;
  }

  /** Stats every cgroup of the kept listing: true when each has the links and inode it had. */
  private unchanged(): boolean {
    for (const rel of this.paths ?? []) {
      let st;
      try {
        st = statSync(this.dirs.join(this.mount, rel.slice(1)), { bigint: true, throwIfNoEntry: false });
      } catch {
        return false;
      }
      if (st === undefined || Number(st.nlink) !== this.links.get(rel) || st.ino !== this.inodes.get(rel)) return false;
    }
    return true;
  }
}
