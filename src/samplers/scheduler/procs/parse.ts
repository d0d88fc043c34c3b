import { parseNumber, parseU64 } from '../../../metrics/u64.js';

/** The scheduler lines of /proc/stat; a field is undefined when absent or malformed. */
export interface SchedStat {
  /** ctxt */
  readonly contextSwitches: number | bigint | undefined;
  /** processes */
  readonly forks: number | bigint | undefined;
  /** intr, first number */
  readonly interrupts: number | bigint | undefined;
  /** procs_running */
  readonly running: number | undefined;
  /** procs_blocked */
  readonly blocked: number | undefined;
  /** known lines left out because their value is malformed */
  readonly skipped: number;
}

const isSchedKey = (key: string): boolean =>
  key === 'ctxt' || key === 'processes' || key === 'intr' || key === 'procs_running' || key === 'procs_blocked';

/**
 * Parses the ctxt, processes, intr, procs_running and procs_blocked lines of
 * /proc/stat. Other lines (cpu, softirq, btime, ...) are ignored; of the long
 * intr line only the first number is read. A known line whose value is not a
 * u64 is skipped and counted.
 */
export function parseSchedStat(text: string): SchedStat {
  let contextSwitches: number | bigint | undefined;
  let forks: number | bigint | undefined;
  let interrupts: number | bigint | undefined;
  let running: number | undefined;
  let blocked: number | undefined;
  let skipped = 0;
  let pos = 0;
  while (pos < text.length) {
    let end = text.indexOf('\n', pos);
    if (end === -1) end = text.length;
    const start = pos;
    pos = end + 1;
    // cpu lines are the bulk of the file and never interesting here
    if (text.startsWith('cpu', start)) continue;
    let space = text.indexOf(' ', start);
    if (space === -1 || space > end) space = end;
    const key = text.slice(start, space);
    if (!isSchedKey(key)) continue;
    // the value ends at the next space (intr has more numbers after its total) or at the end of the line
    let valueEnd = space < end ? text.indexOf(' ', space + 1) : end;
    if (valueEnd === -1 || valueEnd > end) valueEnd = end;
    const v = space < end ? parseU64(text.slice(space + 1, valueEnd)) : undefined;
    if (v === undefined) {
      skipped++;
      continue;
    }
    if (key === 'ctxt') contextSwitches = v;
    else if (key === 'processes') forks = v;
    else if (key === 'intr') interrupts = v;
    else if (key === 'procs_running') running = Number(v);
    else blocked = Number(v);
  }
  return { contextSwitches, forks, interrupts, running, blocked, skipped };
}

/** The averaging periods of /proc/loadavg, in file order. */
export const LOAD_PERIODS = ['1m', '5m', '15m'] as const;

export interface LoadAverage {
  /** one per LOAD_PERIODS entry; undefined when missing or malformed */
  readonly values: (number | undefined)[];
  /** load averages left out */
  readonly skipped: number;
}

/**
 * Parses the three load averages of /proc/loadavg (`0.04 0.11 0.05 4/157 6822`).
 * Each is taken on its own: a missing or malformed one is skipped and counted.
 */
export function parseLoadavg(text: string): LoadAverage {
  const fields = text.trim().split(' ');
  const values: (number | undefined)[] = [];
  let skipped = 0;
  for (let i = 0; i < LOAD_PERIODS.length; i++) {
    const f = fields[i];
    const v = f === undefined ? undefined : parseNumber(f);
    if (v === undefined || v < 0) {
      skipped++;
      values.push(undefined);
    } else {
      values.push(v);
    }
  }
  return { values, skipped };
}

/** The pressure stall totals of one /proc/pressure file, in microseconds. */
export interface Pressure {
  readonly some: number | bigint | undefined;
  readonly full: number | bigint | undefined;
  /** some/full lines left out because their total= is missing or malformed */
  readonly skipped: number;
}

/**
 * Parses a /proc/pressure/<resource> file
 * (`some avg10=0.00 avg60=0.00 avg300=0.00 total=123`, then the same for `full`).
 * Lines other than some and full are ignored; a some/full line without a
 * valid total= is skipped and counted.
 */
export function parsePressure(text: string): Pressure {
  let some: number | bigint | undefined;
  let full: number | bigint | undefined;
  let skipped = 0;
  let pos = 0;
  while (pos < text.length) {
    let end = text.indexOf('\n', pos);
    if (end === -1) end = text.length;
    const start = pos;
    pos = end + 1;
    const isSome = text.startsWith('some ', start);
    if (!isSome && !text.startsWith('full ', start)) continue;
    const at = text.indexOf(' total=', start);
    let v: number | bigint | undefined;
    if (at !== -1 && at < end) {
      let valueEnd = text.indexOf(' ', at + 7);
      if (valueEnd === -1 || valueEnd > end) valueEnd = end;
      v = parseU64(text.slice(at + 7, valueEnd));
    }
    if (v === undefined) skipped++;
    else if (isSome) some = v;
    else full = v;
  }
  return { some, full, skipped };
}
