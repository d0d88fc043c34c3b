/**
 * Bounded cardinality: at most `max` cgroups get series of their own. A
 * cgroup keeps its place while it exists (its series do not jump into the
 * folded `other` and back); places that free up go to newcomers in the order
 * they are listed (breadth first: slices before the services in them).
 */
export class CgroupSelection {
  private readonly kept = new Set<string>();

  constructor(private readonly max: number) {}

  /** Splits the cgroups present now into those published on their own and those folded into `other`. */
  update(present: readonly string[]): { kept: string[]; folded: string[] } {
    const now = new Set(present);
    for (const p of this.kept) if (!now.has(p)) this.kept.delete(p);
    const folded: string[] = [];
    for (const p of present) {
      if (this.kept.has(p)) continue;
      if (this.kept.size < this.max) this.kept.add(p);
      else folded.push(p);
    }
    return { kept: present.filter((p) => this.kept.has(p)), folded };
  }
}
