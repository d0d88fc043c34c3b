import { readdirSync } from 'node:fs';
import { join } from 'node:path';

/** Orders cgroup paths breadth first: the root, then its children, then theirs; by name within a level. */
export function breadthFirst(a: string, b: string): number {
  const da = a === '/' ? 0 : a.split('/').length;
  const db = b === '/' ? 0 : b.split('/').length;
  return da - db || (a < b ? -1 : a > b ? 1 : 0);
}

/**
 * The cgroups of a hierarchy as paths relative to its mount (`/` for the
 * root, `/system.slice/nginx.service`), breadth first, down to `maxDepth`
 * levels below the root. Directories that vanish while listed are skipped.
 */
export function listCgroups(mount: string, maxDepth: number): string[] {
  const out = ['/'];
  let level = ['/'];
  for (let depth = 1; depth <= maxDepth && level.length > 0; depth++) {
    const next: string[] = [];
    for (const rel of level) {
      let entries;
      try {
        entries = readdirSync(join(mount, rel), { withFileTypes: true });
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
  return out;
}
