/** The section menu of one or several hosts. Pure. */
import type { SectionInfo } from '../api.js';

/** The sections of several hosts: the first host's order, then any section only another has (metrics merged). */
export function mergeSections(lists: readonly (readonly SectionInfo[])[]): SectionInfo[] {
  const out: { name: string; metrics: string[] }[] = [];
  for (const list of lists) {
    for (const s of list) {
      let have = out.find((o) => o.name === s.name);
      if (have === undefined) out.push((have = { name: s.name, metrics: [] }));
      for (const m of s.metrics) if (!have.metrics.includes(m)) have.metrics.push(m);
    }
  }
  return out;
}
