import { parseU64, scaleU64 } from '../../../metrics/u64.js';
import type { VmstatSource } from './metrics.js';
import { VMSTAT_SOURCES } from './metrics.js';

/** Which source (by index into the sources) each known vmstat field feeds. */
export interface VmstatIndex {
  readonly sources: readonly VmstatSource[];
  /** field name -> slot; slot i feeds source `slotSource[i]` */
  readonly slots: ReadonlyMap<string, number>;
  readonly slotSource: readonly number[];
}

/** Builds the field lookup for a list of sources (done once, at module load). */
export function indexSources(sources: readonly VmstatSource[]): VmstatIndex {
  const slots = new Map<string, number>();
  const slotSource: number[] = [];
  sources.forEach((s, i) => {
    for (const f of s.fields) {
      if (slots.has(f)) throw new Error(`vmstat field ${f} feeds two counters`);
      slots.set(f, slotSource.length);
      slotSource.push(i);
    }
  });
  return { sources, slots, slotSource };
}

export const VMSTAT_INDEX = indexSources(VMSTAT_SOURCES);

export interface Vmstat {
  /** per source, in source order: the scaled (summed) value, undefined when absent or broken */
  readonly values: (number | bigint | undefined)[];
  /** lines left out: no value separator, or a known field with a malformed or repeated value */
  readonly skipped: number;
}

/** Adds two u64 counter values, exactly. */
export function addU64(a: number | bigint, b: number | bigint): number | bigint {
  if (typeof a === 'number' && typeof b === 'number') {
    const r = a + b;
    if (Number.isSafeInteger(r)) return r;
  }
  const big = BigInt(a) + BigInt(b);
  return big <= BigInt(Number.MAX_SAFE_INTEGER) ? Number(big) : big;
}

/**
 * Parses /proc/vmstat (`name value` per line) into the curated counters.
 * Unknown fields are ignored. A line without a value, and a known field whose
 * value is not a u64 or that repeats, is skipped and counted; a summed counter
 * with a skipped component is left out entirely, so it never goes backwards.
 */
export function parseVmstat(text: string, index: VmstatIndex = VMSTAT_INDEX): Vmstat {
  const n = index.sources.length;
  const sums: (number | bigint | undefined)[] = new Array<number | bigint | undefined>(n).fill(undefined);
  const broken = new Uint8Array(n);
  const seen = new Uint8Array(index.slotSource.length);
  let skipped = 0;
  let pos = 0;
  while (pos < text.length) {
    let end = text.indexOf('\n', pos);
    if (end === -1) end = text.length;
    const start = pos;
    pos = end + 1;
    if (start === end) continue;
    const space = text.indexOf(' ', start);
    if (space === -1 || space >= end) {
      skipped++;
      continue;
    }
    const slot = index.slots.get(text.slice(start, space));
    if (slot === undefined) continue;
    const s = index.slotSource[slot]!;
    const v = parseU64(text.slice(space + 1, end));
    if (v === undefined || seen[slot] === 1) {
      skipped++;
      broken[s] = 1;
      continue;
    }
    seen[slot] = 1;
    const sum = sums[s];
    sums[s] = sum === undefined ? v : addU64(sum, v);
  }
  const values = sums.map((sum, i) =>
    sum === undefined || broken[i] === 1 ? undefined : scaleU64(sum, index.sources[i]!.scale),
  );
  return { values, skipped };
}
