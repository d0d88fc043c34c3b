import { parseU64, scaleU64 } from '../../../metrics/u64.js';
import { CPU_STATES } from './metrics.js';

/**
 * USER_HZ, the unit of the /proc/stat cpu columns. The kernel reports these
 * times in clock ticks of USER_HZ, which is fixed at 100 for every Linux
 * architecture's userspace ABI (independent of the kernel's internal HZ).
 */
export const USER_HZ = 100;
/** Nanoseconds per USER_HZ tick: 1e9 / USER_HZ. */
export const NS_PER_TICK = 1_000_000_000 / USER_HZ;

/** The fewest columns a well-formed cpu line has (user nice system idle). */
const MIN_COLUMNS = 4;

/** One `cpu` line: the CPU index (-1 for the aggregate line) and its columns in ticks. */
export interface CpuTimes {
  readonly id: number;
  /** one value per present column, in CPU_STATES order */
  readonly ticks: readonly (number | bigint)[];
}

export interface CpuStat {
  /** the aggregate `cpu` line, when present and well formed */
  readonly all: CpuTimes | undefined;
  /** the `cpuN` lines that parsed, in file order */
  readonly cpus: CpuTimes[];
  /** cpu lines left out: truncated, garbage value, bad CPU number */
  readonly skipped: number;
}

/** Converts ticks of USER_HZ to nanoseconds, exactly (bigint past 2^53). */
export function ticksToNs(ticks: number | bigint): number | bigint {
  return scaleU64(ticks, NS_PER_TICK);
}

/**
 * Parses the `cpu` lines of /proc/stat. They come first in the file; parsing
 * stops at the first other line, so the long `intr` line is never scanned.
 *
 * A line is taken whole or not at all: a line with a value that is not a u64,
 * a bad CPU number, or fewer columns than the aggregate line (a truncated
 * line, whose last value may be cut short) is skipped and counted. Columns
 * beyond the ten known ones are ignored.
 */
export function parseCpuStat(text: string): CpuStat {
  const cpus: CpuTimes[] = [];
  let all: CpuTimes | undefined;
  let skipped = 0;
  // the column count of the aggregate line; per-CPU lines must match it
  let expected = MIN_COLUMNS;
  let pos = 0;
  while (pos < text.length) {
    let end = text.indexOf('\n', pos);
    if (end === -1) end = text.length;
    if (!text.startsWith('cpu', pos)) break;
    const line = parseCpuLine(text, pos, end);
    pos = end + 1;
    if (line === undefined) {
      skipped++;
      continue;
    }
    if (line.id === -1) {
      if (all !== undefined) {
        skipped++;
        continue;
      }
      all = line;
      expected = Math.max(MIN_COLUMNS, line.ticks.length);
    } else if (line.ticks.length < expected) {
      skipped++;
    } else {
      cpus.push(line);
    }
  }
  return { all, cpus, skipped };
}

/** Parses one cpu line between [start, end); undefined when malformed. */
function parseCpuLine(text: string, start: number, end: number): CpuTimes | undefined {
  // the name: `cpu` or `cpu<digits>`, ended by a space
  let i = start + 3;
  let id = -1;
  if (i < end && text.charCodeAt(i) !== 32) {
    id = 0;
    const digitsStart = i;
    while (i < end) {
      const c = text.charCodeAt(i);
      if (c === 32) break;
      if (c < 48 || c > 57 || i - digitsStart >= 6) return undefined;
      id = id * 10 + (c - 48);
      i++;
    }
  }
  if (i >= end) return undefined;
  const ticks: (number | bigint)[] = [];
  while (i < end && ticks.length < CPU_STATES.length) {
    while (i < end && text.charCodeAt(i) === 32) i++;
    if (i >= end) break;
    let j = i;
    while (j < end && text.charCodeAt(j) !== 32) j++;
    const v = parseU64(text.slice(i, j));
    if (v === undefined) return undefined;
    ticks.push(v);
    i = j;
  }
  if (ticks.length < MIN_COLUMNS) return undefined;
  return { id, ticks };
}
