import { readdirSync, statSync } from 'node:fs';
import { join } from 'node:path';
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
 */
export function listCgroups(mount: string, maxDepth: number, leafByLinks = false, inodes?: Map<string, bigint>): string[] {
  const out = ['/'];
  let level = ['/'];
  for (let depth = 1; depth <= maxDepth && level.length > 0; depth++) {
    const next: string[] = [];
    for (const rel of level) {
      let entries;
      try {
        const dir = join(mount, rel);
        if (inodes !== undefined) {
          const st = statSync(dir, { bigint: true });
          inodes.set(rel, st.ino);
          if (leafByLinks && st.nlink === 2n) continue;
        } else if (leafByLinks && statSync(dir).nlink === 2) continue;
        entries = readdirSync(dir, { withFileTypes: true });
      } catch {
        continue; // removed meanwhile
      }
      for (const e of entries) {
        if (!e.isDirectory()) continue;
        next.push(rel === '/' ? `/${e.name}` : `${rel}/${e.name}`);
      }
    }
    next.sort();
    out.push(...next);
    level = next;
  }
  // the deepest level found was not visited: its directories still want their inode
  if (inodes !== undefined) {
    for (const rel of level) {
      try {
        inodes.set(rel, statSync(join(mount, rel), { bigint: true }).ino);
      } catch {
        // removed meanwhile
      }
    }
  }
  return out;
}
