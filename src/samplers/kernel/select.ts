/**
 * Which programs of a BPF object to load on this kernel: those whose
 * tracepoint exists here and, for a program written for one version of a
 * tracepoint's arguments (`args`), the variant that matches this kernel.
 * What cannot run is said per program, for the sampler's degraded status.
 */
import type { NativeAddon } from '../../native/index.js';
import type { BpfLayout } from './layout.js';

export interface Selection {
  /** program names to load, in layout order */
  readonly load: readonly string[];
  readonly degraded: readonly string[];
}

export function selectPrograms(layout: BpfLayout, native: NativeAddon, events?: Readonly<Record<string, string>>): Selection {
  const load: string[] = [];
  const degraded: string[] = [];
  /** event → its variants' names and argument counts, and what this kernel passes */
  const variants = new Map<string, { names: string[]; counts: number[]; here: number }>();
  for (const p of layout.programs) {
    const event = events?.[p.name] ?? p.event;
    let args = native.btfTracepointArgs(event);
    if (args < 0 && p.module !== undefined) args = native.btfTracepointArgs(event, p.module);
    if (args < 0) {
      degraded.push(`${p.name}: no tracepoint ${event} on this kernel${p.module ? ` (module ${p.module} not loaded?)` : ''}`);
      continue;
    }
    if (p.args !== undefined) {
      const v = variants.get(event) ?? { names: [], counts: [], here: args };
      v.names.push(p.name);
      v.counts.push(p.args);
      variants.set(event, v);
      if (p.args !== args) continue; // the variant for another kernel
    }
    load.push(p.name);
  }
  for (const [event, v] of variants) {
    if (v.counts.includes(v.here)) continue;
    degraded.push(`${v.names.join(', ')}: tracepoint ${event} passes ${v.here} arguments here, the programs know ${v.counts.join(' or ')}`);
  }
  return { load, degraded };
}
