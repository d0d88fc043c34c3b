/**
 * The path of a cgroup from the kernfs id the BPF programs record (the inode
 * of its directory in the hierarchy of the cpu controller, whose task groups
 * they key by). The hierarchy is listed again once `relistMs` have passed:
 * a cgroup that is gone (its slot keeps its last counts until the id is
 * reused), or deeper than `maxDepth`, has no path and is not published.
 */
import { statSync } from 'node:fs';
import { join } from 'node:path';
import { discoverSources } from './discover.js';
import { decodeCgroupName } from './parse.js';
import { listCgroups } from './walk.js';

export class CgroupPaths {
  private byInode = new Map<bigint, string>();
  private listedAt = -Infinity;

  private constructor(
    /** the cpu controller's hierarchy, as a directory to read */
    readonly mount: string,
    private readonly maxDepth: number,
    private readonly relistMs: number,
  ) {}

  /** Finds the cpu controller's hierarchy (v1 cpu, else the v2 tree); undefined when there is none. */
  static open(procRoot: string, sysRoot: string, maxDepth: number, relistMs = 1000): CgroupPaths | undefined {
    const sources = discoverSources(procRoot, sysRoot);
    const cpu = sources?.byController.get('cpu') ?? sources?.unified;
    return cpu === undefined ? undefined : new CgroupPaths(cpu.path, maxDepth, relistMs);
  }

  /** The path of a cgroup that exists now (as of the last listing, at most `relistMs` old). */
  pathOf(inode: bigint): string | undefined {
    if (Date.now() - this.listedAt >= this.relistMs) this.relist();
    return this.byInode.get(inode);
  }

  private relist(): void {
    const next = new Map<bigint, string>();
    for (const rel of listCgroups(this.mount, this.maxDepth)) {
      try {
        next.set(statSync(join(this.mount, rel), { bigint: true }).ino, decodeCgroupName(rel));
      } catch {
        // removed meanwhile
      }
    }
    this.byInode = next;
    this.listedAt = Date.now();
  }
}
