import { parseU64 } from '../../../metrics/u64.js';
import { nthField, splitFields } from '../../fields.js';

export type { Counter } from '../../../metrics/u64.js';
import type { Counter } from '../../../metrics/u64.js';

/** Counters of one request type that the kernel merges and sizes (read, write, discard). */
export interface OpStats {
  /** requests completed */
  readonly ios: Counter;
  /** requests merged into an adjacent one */
  readonly merges: Counter;
  /** 512-byte sectors transferred, whatever the device's sector size */
  readonly sectors: Counter;
  /** milliseconds spent on the completed requests */
  readonly ms: Counter;
}

/** Flush requests: counted and timed only. */
export interface FlushStats {
  readonly ios: Counter;
  readonly ms: Counter;
}

/** One line of /proc/diskstats (Documentation/admin-guide/iostats.rst). */
export interface DiskStats {
  readonly major: number;
  readonly minor: number;
  readonly device: string;
  readonly read: OpStats;
  readonly write: OpStats;
  /** requests in flight right now (field 9) */
  readonly inFlight: number;
  /** milliseconds with at least one request in flight (field 10, io_ticks) */
  readonly ioTicksMs: Counter;
  /** milliseconds of request time weighted by requests in flight (field 11) */
  readonly weightedMs: Counter;
  /** fields 12-15, since Linux 4.18 */
  readonly discard?: OpStats;
  /** fields 16-17, since Linux 5.5 */
  readonly flush?: FlushStats;
}

export interface DiskstatsTable {
  readonly disks: DiskStats[];
  /** lines left out because their field count or a value did not parse (filtered devices are not counted) */
  readonly skipped: number;
}

/** Field counts per line, major, minor and name included: up to 4.17, since 4.18, since 5.5. */
export const FIELDS_BASE = 14;
export const FIELDS_DISCARD = 18;
export const FIELDS_FLUSH = 20;

/**
 * Parses /proc/diskstats. Lines of 14, 18 or 20 (and more, for fields a later
 * kernel may append) whitespace-separated fields are read; any other count or
 * a value that is not a u64 skips and counts the line. `include` filters by
 * device name before the numbers are parsed. Never throws.
 */
export function parseDiskstats(text: string, include?: (device: string) => boolean): DiskstatsTable {
  const disks: DiskStats[] = [];
  let skipped = 0;
  for (const line of text.split('\n')) {
    // the name first: a device left out (loop devices, of which a host with snaps has dozens) is not split
    const name = include === undefined ? undefined : nthField(line, 2);
    if (name !== undefined && include !== undefined && !include(name)) continue;
    const f = splitFields(line);
    if (f.length === 0) continue;
    const device = f[2];
    const n = f.length;
    if (device === undefined || (n !== FIELDS_BASE && n !== FIELDS_DISCARD && n < FIELDS_FLUSH)) {
      skipped++;
      continue;
    }
    const used = n >= FIELDS_FLUSH ? FIELDS_FLUSH : n;
    const v: Counter[] = new Array<Counter>(used);
    let ok = true;
    for (let i = 0; i < used && ok; i++) {
      if (i === 2) continue;
      const x = parseU64(f[i] as string);
      if (x === undefined) ok = false;
      else v[i] = x;
    }
    if (!ok) {
      skipped++;
      continue;
    }
    const at = (i: number): Counter => v[i] as Counter;
    const disk: DiskStats = {
      major: Number(at(0)),
      minor: Number(at(1)),
      device,
      read: { ios: at(3), merges: at(4), sectors: at(5), ms: at(6) },
      write: { ios: at(7), merges: at(8), sectors: at(9), ms: at(10) },
      inFlight: Number(at(11)),
      ioTicksMs: at(12),
      weightedMs: at(13),
      ...(used >= FIELDS_DISCARD ? { discard: { ios: at(14), merges: at(15), sectors: at(16), ms: at(17) } } : {}),
      ...(used >= FIELDS_FLUSH ? { flush: { ios: at(18), ms: at(19) } } : {}),
    };
    disks.push(disk);
  }
  return { disks, skipped };
}

const VIRTUAL_PREFIXES = ['ram', 'zram', 'loop', 'fd'] as const;
/** sda1, vdb2, hda1, xvda1: a letter-named disk followed by a partition number */
const LETTER_DISK_PARTITION = /^(?:[shv]d|xvd)[a-z]+\d+$/;
/** nvme0n1p1, mmcblk0p1, md0p1, nbd0p1, zd0p1: a numbered disk, `p`, a partition number */
const NUMBERED_DISK_PARTITION = /\dp\d+$/;

/**
 * True for a whole block device worth reporting: not a RAM disk, zram, loop or
 * floppy device, and not a partition. Device-mapper (dm-*), md, nvme
 * namespaces and the like are kept. Name-based, so cache the answer per name.
 */
export function isWholeDisk(device: string): boolean {
  for (const p of VIRTUAL_PREFIXES) if (device.startsWith(p)) return false;
  return !LETTER_DISK_PARTITION.test(device) && !NUMBERED_DISK_PARTITION.test(device);
}
