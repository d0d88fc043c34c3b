/**
 * The path of a cgroup from the kernfs id the BPF programs record (the inode
 * of its directory in the hierarchy of the cpu controller, whose task groups
 * they key by). The hierarchy is listed again once `relistMs` have passed:
 * a cgroup that is gone (its slot keeps its last counts until the id is
 * reused), or deeper than `maxDepth`, has no path and is not published.
 */
import { discoverSources } from './discover.js';
import { decodeCgroupName } from './parse.js';
import { isCgroupFs, listCgroups } from './walk.js';

const shared = new Map<string, CgroupPaths>();

export class CgroupPaths {
  private byInode = new Map<bigint, string>();
  private listedAt = -Infinity;
  /** raised by each listing */
  private listings = 0;
  /** ids a listing did not find, until the next periodic listing */
  private readonly unknown = new Set<bigint>();

  private constructor(
    /** the cpu controller's hierarchy, as a directory to read */
    readonly mount: string,
    private readonly maxDepth: number,
    private readonly relistMs: number,
  ) {
    this.leafByLinks = isCgroupFs(mount);
  }

  /** cgroupfs: leaves are known by their link count, not listed (walk.ts) */
  private readonly leafByLinks: boolean;

  /** Finds the cpu controller's hierarchy (v1 cpu, else the v2 tree); undefined when there is none. */
  /**
   * The lookup for this host's cpu hierarchy. One per hierarchy and depth in
   * the process: the BPF samplers that name cgroups share its listing.
   */
  static open(procRoot: string, sysRoot: string, maxDepth: number, relistMs = 1000): CgroupPaths | undefined {
    const sources = discoverSources(procRoot, sysRoot);
    const cpu = sources?.byController.get('cpu') ?? sources?.unified;
    if (cpu === undefined) return undefined;
    const key = `${cpu.path} ${maxDepth} ${relistMs}`;
    let paths = shared.get(key);
    if (paths === undefined) shared.set(key, (paths = new CgroupPaths(cpu.path, maxDepth, relistMs)));
    return paths;
  }

  /**
   * The path of a cgroup that exists now (as of the last listing, at most
   * `relistMs` old). An id the last listing did not have lists again at
   * once, so a new cgroup is named on its first refresh; one still unknown
   * after that (a removed cgroup whose slot keeps its counts) waits for the
   * periodic listing.
   */
  pathOf(inode: bigint): string | undefined {
    const due = Date.now() - this.listedAt >= this.relistMs;
    if (due) this.relist(true);
    const path = this.byInode.get(inode);
    if (path !== undefined || this.unknown.has(inode)) return path;
    if (!due) this.relist(false);
    const again = this.byInode.get(inode);
    if (again === undefined) this.unknown.add(inode);
    return again;
  }

  /**
   * pathOf of each id, all from one listing. When naming one id lists the
   * hierarchy again, those named before it are named again from the new
   * listing: a cgroup removed and made again under its name before the
   * kernel reuses its id is two ids, and only the new one keeps the name.
   */
  pathsOf(inodes: readonly bigint[]): (string | undefined)[] {
    const before = this.listings;
    const paths = inodes.map((inode) => this.pathOf(inode));
    if (this.listings === before) return paths;
    return inodes.map((inode) => this.byInode.get(inode));
  }

  /** Lists the hierarchy; a periodic listing also forgets the ids earlier listings did not find. */
  private relist(periodic: boolean): void {
    const next = new Map<bigint, string>();
    const inodes = new Map<string, bigint>();
    listCgroups(this.mount, this.maxDepth, this.leafByLinks, inodes);
    for (const [rel, ino] of inodes) next.set(ino, decodeCgroupName(rel));
    this.byInode = next;
    this.listedAt = Date.now();
    this.listings++;
    if (periodic) this.unknown.clear();
  }
}
