/**
 * Pure parsers for cgroup v2 files (Documentation/admin-guide/cgroup-v2.rst).
 * Single-value and flat-keyed files (memory.current, memory.max, pids.*,
 * memory.stat, memory.events) use parseSingleValue / parseKnownKeys from ./parse.js.
 */
import type { Counter } from '../../metrics/u64.js';
import { parseU64, scaleU64 } from '../../metrics/u64.js';
import { forEachLine, parseDevice, parseKnownKeys, singleLine } from './parse.js';

/** Pressure files (cpu.pressure, memory.pressure, io.pressure) read exactly like /proc/pressure/*. */
export { parsePressure } from '../scheduler/procs/parse.js';
export type { Pressure } from '../scheduler/procs/parse.js';

const usecToNs = (v: Counter | undefined): Counter | undefined => (v === undefined ? undefined : scaleU64(v, 1000));

const CPU_STAT_V2_KEYS = [
  'usage_usec',
  'user_usec',
  'system_usec',
  'nr_periods',
  'nr_throttled',
  'throttled_usec',
  'nr_bursts',
  'burst_usec',
  'nice_usec',
] as const;

/** cgroup v2 cpu.stat; a field is undefined when absent (the root and controller-less cgroups lack the bandwidth ones) or malformed. */
export interface CpuStatV2 {
  /** usage_usec, in ns */
  readonly usageNs: Counter | undefined;
  /** user_usec, in ns */
  readonly userNs: Counter | undefined;
  /** system_usec, in ns */
  readonly systemNs: Counter | undefined;
  /** nr_periods: enforcement periods that elapsed (only with the cpu controller enabled) */
  readonly nrPeriods: Counter | undefined;
  /** nr_throttled: periods in which the cgroup was throttled */
  readonly nrThrottled: Counter | undefined;
  /** throttled_usec, in ns */
  readonly throttledNs: Counter | undefined;
  /** nr_bursts (Linux 5.14+) */
  readonly nrBursts: Counter | undefined;
  /** burst_usec, in ns (Linux 5.14+) */
  readonly burstNs: Counter | undefined;
  /** nice_usec, in ns (Linux 6.6+) */
  readonly niceNs: Counter | undefined;
  /** known lines with a malformed or repeated value, and lines with no value */
  readonly skipped: number;
}

/** Parses v2 cpu.stat; microsecond fields come back in nanoseconds. Unknown keys (core_sched.force_idle_usec, ...) are ignored. */
export function parseCpuStatV2(text: string): CpuStatV2 {
  const { values: v, skipped } = parseKnownKeys(text, CPU_STAT_V2_KEYS);
  return {
    usageNs: usecToNs(v[0]),
    userNs: usecToNs(v[1]),
    systemNs: usecToNs(v[2]),
    nrPeriods: v[3],
    nrThrottled: v[4],
    throttledNs: usecToNs(v[5]),
    nrBursts: v[6],
    burstNs: usecToNs(v[7]),
    niceNs: usecToNs(v[8]),
    skipped,
  };
}

/** cgroup v2 cpu.max (`$MAX $PERIOD`, both in µs; `max` for no limit). */
export interface CpuMax {
  /** the quota per period in ns; undefined when unlimited or malformed */
  readonly quotaNs: Counter | undefined;
  /** the period in ns; undefined when malformed */
  readonly periodNs: Counter | undefined;
  /** the quota is `max` */
  readonly unlimited: boolean;
  /** 1 when the file is not one `quota period` line, else 0 */
  readonly skipped: number;
}

/** Parses cpu.max: "max 100000" -> unlimited, period 100 ms; "50000 100000" -> quota 50 ms, period 100 ms (in ns). */
export function parseCpuMax(text: string): CpuMax {
  const bad = { quotaNs: undefined, periodNs: undefined, unlimited: false, skipped: 1 };
  const fields = singleLine(text);
  if (fields === undefined || fields.length !== 2) return bad;
  const period = parseU64(fields[1]!);
  if (period === undefined) return bad;
  const periodNs = scaleU64(period, 1000);
  if (fields[0] === 'max') return { quotaNs: undefined, periodNs, unlimited: true, skipped: 0 };
  const quota = parseU64(fields[0]!);
  if (quota === undefined) return bad;
  return { quotaNs: scaleU64(quota, 1000), periodNs, unlimited: false, skipped: 0 };
}

/** One device line of v2 io.stat. */
export interface IoStatDevice {
  readonly major: number;
  readonly minor: number;
  /** bytes read */
  readonly rbytes: Counter;
  /** bytes written */
  readonly wbytes: Counter;
  /** read operations */
  readonly rios: Counter;
  /** write operations */
  readonly wios: Counter;
  /** bytes discarded (Linux 5.0+; absent on older kernels) */
  readonly dbytes?: Counter;
  /** discard operations (Linux 5.0+; absent on older kernels) */
  readonly dios?: Counter;
}

export interface IoStatV2 {
  /** in file order */
  readonly devices: IoStatDevice[];
  /** device lines left out: a bad `major:minor`, a malformed or repeated rbytes/wbytes/rios/wios/dbytes/dios, or only some of rbytes/wbytes/rios/wios */
  readonly skipped: number;
}

const IO_KEYS = ['rbytes', 'wbytes', 'rios', 'wios', 'dbytes', 'dios'] as const;

/**
 * Parses v2 io.stat (`8:0 rbytes=1 wbytes=2 rios=3 wios=4 dbytes=0 dios=0`
 * per device). Other `key=value` pairs (io.cost's `cost.*`, io.latency's
 * `use_delay=`, `depth=`, `avg_lat=`, ...) are ignored. Since Linux 5.15 the
 * kernel prints a device that has seen no read or write as a bare `253:0 `
 * (maybe followed by such other pairs): it is left out, not counted as skipped.
 */
export function parseIoStatV2(text: string): IoStatV2 {
  const devices: IoStatDevice[] = [];
  let skipped = 0;
  forEachLine(text, (fields) => {
    const dev = parseDevice(fields[0]!);
    const v: (Counter | undefined)[] = [undefined, undefined, undefined, undefined, undefined, undefined];
    let ok = dev !== undefined;
    for (let i = 1; ok && i < fields.length; i++) {
      const f = fields[i]!;
      const eq = f.indexOf('=');
      const k = IO_KEYS.indexOf(f.slice(0, eq) as (typeof IO_KEYS)[number]);
      if (eq === -1 || k === -1) continue;
      const n = parseU64(f.slice(eq + 1));
      if (n === undefined || v[k] !== undefined) ok = false;
      else v[k] = n;
    }
    const [rbytes, wbytes, rios, wios, dbytes, dios] = v;
    // a device with no reads or writes yet is printed bare (`253:0 `) or with only other keys
    if (ok && rbytes === undefined && wbytes === undefined && rios === undefined && wios === undefined) return;
    if (!ok || dev === undefined || rbytes === undefined || wbytes === undefined || rios === undefined || wios === undefined) {
      skipped++;
      return;
    }
    const d: { -readonly [K in keyof IoStatDevice]: IoStatDevice[K] } = { ...dev, rbytes, wbytes, rios, wios };
    if (dbytes !== undefined) d.dbytes = dbytes;
    if (dios !== undefined) d.dios = dios;
    devices.push(d);
  });
  return { devices, skipped };
}
