import { parseU64 } from '../../../metrics/u64.js';
import type { MeminfoField } from './metrics.js';
import { MEMINFO_FIELDS } from './metrics.js';

export const BYTES_PER_KB = 1024;

/** The known fields by their /proc/meminfo key. */
export const MEMINFO_INDEX: ReadonlyMap<string, MeminfoField> = new Map(MEMINFO_FIELDS.map((f) => [f.field, f]));

export interface MeminfoEntry {
  readonly field: MeminfoField;
  /** bytes for kB fields, the plain count otherwise */
  readonly value: number;
}

export interface Meminfo {
  /** the known fields that parsed, in file order */
  readonly entries: MeminfoEntry[];
  /** lines left out: no colon, or a known field whose value or unit is malformed */
  readonly skipped: number;
}

/**
 * Parses /proc/meminfo (`Key:   <digits>[ kB]` per line). Fields missing from
 * `index` are ignored without being counted; a line without a colon, and a
 * known field with a missing or non-numeric value, an unexpected unit or a
 * repeated key, is skipped and counted.
 */
export function parseMeminfo(text: string, index: ReadonlyMap<string, MeminfoField> = MEMINFO_INDEX): Meminfo {
  const entries: MeminfoEntry[] = [];
  const seen = new Set<MeminfoField>();
  let skipped = 0;
  let pos = 0;
  while (pos < text.length) {
    let end = text.indexOf('\n', pos);
    if (end === -1) end = text.length;
    const start = pos;
    pos = end + 1;
    if (start === end) continue;
    const colon = text.indexOf(':', start);
    if (colon === -1 || colon >= end) {
      skipped++;
      continue;
    }
    const field = index.get(text.slice(start, colon));
    if (field === undefined) continue;
    const value = parseValue(text, colon + 1, end, field.kb);
    if (value === undefined || seen.has(field)) {
      skipped++;
      continue;
    }
    seen.add(field);
    entries.push({ field, value });
  }
  return { entries, skipped };
}

/** digits that always make a safe integer (10^15 < 2^53) */
const SAFE_DIGITS = 15;

/**
 * Parses `   <digits>[ kB]` in [start, end) (blanks around the unit allowed);
 * undefined when malformed or the unit is not the expected one. Reads the
 * digits where they are (no substring, no Number(string)) up to 15 of them:
 * meminfo is read at every tick.
 */
function parseValue(text: string, start: number, end: number, kb: boolean): number | undefined {
  let i = start;
  while (i < end && text.charCodeAt(i) === 32) i++;
  let j = i;
  let n = 0;
  for (; j < end; j++) {
    const c = text.charCodeAt(j);
    if (c === 32) break;
    if (c < 48 || c > 57) return undefined;
    n = n * 10 + (c - 48);
  }
  if (j === i) return undefined;
  if (j - i > SAFE_DIGITS) {
    const raw = parseU64(text.slice(i, j));
    if (raw === undefined) return undefined;
    n = Number(raw);
  }
  // the unit as the kernel prints it, or else as trimmed text
  const printed = kb ? j + 3 === end && text.startsWith(' kB', j) : j === end;
  if (!printed && text.slice(j, end).trim() !== (kb ? 'kB' : '')) return undefined;
  return kb ? n * BYTES_PER_KB : n;
}
