/**
 * The cgroup hierarchies of this host, from /proc/self/mountinfo and the v2
 * root's cgroup.controllers (the I/O around the pure mounts.ts). Mount points
 * under /sys are read below the sysfs root, so a fixture root works too.
 */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { parseMountinfo, pickSources, type CgroupMount, type Sources } from './mounts.js';

function underSys(mount: CgroupMount, sysRoot: string): CgroupMount {
  return mount.path.startsWith('/sys/') ? { ...mount, path: join(sysRoot, mount.path.slice('/sys/'.length)) } : mount;
}

/** The sources of each controller; undefined when mountinfo cannot be read. */
export function discoverSources(procRoot: string, sysRoot: string): Sources | undefined {
  let mountinfo: string;
  try {
    mountinfo = readFileSync(join(procRoot, 'self', 'mountinfo'), 'utf8');
  } catch {
    return undefined;
  }
  const mounts = parseMountinfo(mountinfo).mounts.map((m) => underSys(m, sysRoot));
  const unified = mounts.find((m) => m.version === 2);
  let v2Controllers: string[] = [];
  if (unified !== undefined) {
    try {
      v2Controllers = readFileSync(join(unified.path, 'cgroup.controllers'), 'utf8').trim().split(/\s+/).filter((c) => c !== '');
    } catch {
      // a v2 tree without cgroup.controllers offers no controller
    }
  }
  return pickSources(mounts, v2Controllers);
}
