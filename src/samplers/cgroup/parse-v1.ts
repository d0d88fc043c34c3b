/**
 * Pure parsers for cgroup v1 files (cpu, cpuacct, blkio). Memory and pids
 * files use parseSingleValue / parseKnownKeys from ./parse.js: memory.usage_in_bytes,
 * memory.limit_in_bytes (unlimited when ≥ 2^62), memory.stat, memory.oom_control.
 */
import type { Counter } from '../../metrics/u64.js';
import { parseU64, scaleU64 } from '../../metrics/u64.js';
import { forEachLine, parseDevice, parseKnownKeys, singleLine } from './parse.js';

/** cpuacct.usage, cpuacct.usage_user or cpuacct.usage_sys: CPU time in ns. */
export interface CpuacctUsage {
  /** undefined when the file is empty or malformed */
  readonly ns: Counter | undefined;
  /** 1 when the file is not one u64, else 0 */
  readonly skipped: number;
}

/** Parses cpuacct.usage / cpuacct.usage_user / cpuacct.usage_sys (one number, ns). */
export function parseCpuacctUsage(text: string): CpuacctUsage {
  const fields = singleLine(text);
  const ns = fields?.length === 1 ? parseU64(fields[0]!) : undefined;
  return { ns, skipped: ns === undefined ? 1 : 0 };
}

/** cpuacct.stat, in USER_HZ ticks (usually 1/100 s: the caller converts). */
export interface CpuacctStat {
  readonly userTicks: Counter | undefined;
  readonly systemTicks: Counter | undefined;
  /** user/system lines with a malformed or repeated value, and lines with no value */
  readonly skipped: number;
}

/** Parses cpuacct.stat (`user N\nsystem N`). */
export function parseCpuacctStat(text: string): CpuacctStat {
  const { values, skipped } = parseKnownKeys(text, ['user', 'system']);
  return { userTicks: values[0], systemTicks: values[1], skipped };
}

/** cpu.cfs_quota_us. */
export interface CfsQuota {
  /** the quota per period in ns (the file is in µs); undefined when unlimited or malformed */
  readonly quotaNs: Counter | undefined;
  /** the file holds -1 */
  readonly unlimited: boolean;
  /** 1 when the file is not -1 or one u64, else 0 */
  readonly skipped: number;
}

/**
 * Parses cpu.cfs_quota_us: "-1" is unlimited, else a quota in µs, returned in
 * ns like parseCpuMax's. The period (cpu.cfs_period_us, µs) is a plain
 * parseSingleValue.
 */
export function parseCfsQuota(text: string): CfsQuota {
  const fields = singleLine(text);
  if (fields?.length === 1 && fields[0] === '-1') return { quotaNs: undefined, unlimited: true, skipped: 0 };
  const us = fields?.length === 1 ? parseU64(fields[0]!) : undefined;
  if (us === undefined) return { quotaNs: undefined, unlimited: false, skipped: 1 };
  return { quotaNs: scaleU64(us, 1000), unlimited: false, skipped: 0 };
}

const CPU_STAT_V1_KEYS = ['nr_periods', 'nr_throttled', 'throttled_time', 'nr_bursts', 'burst_time'] as const;

/** v1 cpu.stat (CFS bandwidth); a field is undefined when absent or malformed. */
export interface CpuStatV1 {
  readonly nrPeriods: Counter | undefined;
  readonly nrThrottled: Counter | undefined;
  /** throttled_time, already ns */
  readonly throttledNs: Counter | undefined;
  /** nr_bursts (Linux 5.14+) */
  readonly nrBursts: Counter | undefined;
  /** burst_time, ns (Linux 5.14+) */
  readonly burstNs: Counter | undefined;
  /** known lines with a malformed or repeated value, and lines with no value */
  readonly skipped: number;
}

/** Parses v1 cpu.stat (`nr_periods`, `nr_throttled`, `throttled_time` and, on newer kernels, `nr_bursts`, `burst_time`). */
export function parseCpuStatV1(text: string): CpuStatV1 {
  const { values: v, skipped } = parseKnownKeys(text, CPU_STAT_V1_KEYS);
  return { nrPeriods: v[0], nrThrottled: v[1], throttledNs: v[2], nrBursts: v[3], burstNs: v[4], skipped };
}

/** One device of a v1 blkio file: bytes (io_service_bytes) or operations (io_serviced). */
export interface BlkioDevice {
  readonly major: number;
  readonly minor: number;
  readonly read: Counter;
  readonly write: Counter;
  /** Linux 4.19+; absent on older kernels */
  readonly discard?: Counter;
}

export interface BlkioV1 {
  /** in order of first appearance */
  readonly devices: BlkioDevice[];
  /** the last `Total N` line over all devices; undefined when absent */
  readonly total: Counter | undefined;
  /** lines left out (bad device, value or shape, or a repeated op), plus devices missing Read or Write */
  readonly skipped: number;
}

type Op = 'read' | 'write' | 'discard';
const OPS: ReadonlyMap<string, Op> = new Map([
  ['Read', 'read'],
  ['Write', 'write'],
  ['Discard', 'discard'],
]);
const OTHER_OPS = new Set(['Sync', 'Async', 'Total']);

/**
 * Parses blkio.throttle.io_service_bytes / io_serviced (and their _recursive
 * and bfq./cfq. variants): `8:0 Read 4096`, `8:0 Write 0`, `8:0 Sync ..`,
 * `8:0 Async ..`, `8:0 Discard ..`, `8:0 Total ..` per device, then `Total N`.
 * Sync, Async and the per-device Total are read past; unknown ops are ignored.
 */
export function parseBlkioV1(text: string): BlkioV1 {
  const byDevice = new Map<string, { major: number; minor: number } & Partial<Record<Op, Counter>>>();
  let total: Counter | undefined;
  let skipped = 0;
  forEachLine(text, (fields) => {
    if (fields[0] === 'Total') {
      const v = fields.length === 2 ? parseU64(fields[1]!) : undefined;
      if (v === undefined) skipped++;
      else total = v;
      return;
    }
    const dev = parseDevice(fields[0]!);
    if (dev === undefined || fields.length !== 3) {
      skipped++;
      return;
    }
    const op = OPS.get(fields[1]!);
    // an op this parser does not know is a newer kernel's, not an error
    if (op === undefined && !OTHER_OPS.has(fields[1]!)) return;
    const v = parseU64(fields[2]!);
    if (v === undefined) {
      skipped++;
      return;
    }
    if (op === undefined) return;
    let d = byDevice.get(fields[0]!);
    if (d === undefined) byDevice.set(fields[0]!, (d = { ...dev }));
    if (d[op] !== undefined) skipped++;
    else d[op] = v;
  });
  const devices: BlkioDevice[] = [];
  for (const d of byDevice.values()) {
    if (d.read === undefined || d.write === undefined) {
      skipped++;
      continue;
    }
    const out: { -readonly [K in keyof BlkioDevice]: BlkioDevice[K] } = {
      major: d.major,
      minor: d.minor,
      read: d.read,
      write: d.write,
    };
    if (d.discard !== undefined) out.discard = d.discard;
    devices.push(out);
  }
  return { devices, total, skipped };
}
