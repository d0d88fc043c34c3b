import { scaleU64 } from '../../../metrics/u64.js';
import { readText, requireSource } from '../../read.js';
import type { Labels, Point, Reading, Sampler, SamplerContext, SamplerDefinition } from '../../types.js';
import {
  blockioDeviceBusyTime,
  blockioDeviceBytes,
  blockioDeviceInFlight,
  blockioDeviceMerged,
  blockioDeviceOperations,
  blockioDeviceTime,
  blockioDeviceWeightedTime,
  METRICS,
} from './metrics.js';
import type { Counter } from './parse.js';
import { isWholeDisk, parseDiskstats } from './parse.js';

const NAME = 'blockio_diskstats';
const SOURCE = 'diskstats';
const SECTOR_BYTES = 512;
const MS_TO_NS = 1_000_000;

/** 512-byte sectors to bytes, exact beyond 2^53 */
const toBytes = (sectors: Counter): Counter => scaleU64(sectors, SECTOR_BYTES);
/** kernel milliseconds to nanoseconds, exact beyond 2^53 */
const toNs = (ms: Counter): Counter => scaleU64(ms, MS_TO_NS);

/** The label objects of one device, built once and reused by every refresh. */
interface DeviceLabels {
  readonly device: Labels;
  readonly read: Labels;
  readonly write: Labels;
  readonly discard: Labels;
  readonly flush: Labels;
}

/** What the sampler remembers per device name. */
interface Entry {
  /** null when the device is filtered out (partition, loop, ram, zram, floppy) */
  readonly labels: DeviceLabels | null;
  /** the refresh that last listed this name */
  seen: number;
  /** the refresh that last emitted points for it */
  emitted: number;
}

function deviceLabels(device: string): DeviceLabels {
  return {
    device: Object.freeze({ device }),
    read: Object.freeze({ device, op: 'read' }),
    write: Object.freeze({ device, op: 'write' }),
    discard: Object.freeze({ device, op: 'discard' }),
    flush: Object.freeze({ device, op: 'flush' }),
  };
}

export const blockioDiskstatsSampler: SamplerDefinition = {
  name: NAME,
  description: 'Per-device block I/O counters from /proc/diskstats (whole devices; no partitions, loop, ram or zram).',
  metrics: METRICS,
  async init(ctx: SamplerContext): Promise<Sampler> {
    await requireSource(ctx.procRoot, SOURCE);
    const cache = new Map<string, Entry>();
    let tick = 0;
    let listed = 0;
    const include = (device: string): boolean => {
      let e = cache.get(device);
      if (e === undefined) {
        e = { labels: isWholeDisk(device) ? deviceLabels(device) : null, seen: 0, emitted: 0 };
        cache.set(device, e);
      }
      if (e.seen !== tick) {
        e.seen = tick;
        listed++;
      }
      return e.labels !== null;
    };
    return {
      name: NAME,
      metrics: METRICS,
      async refresh(): Promise<Reading> {
        const text = await readText(ctx.procRoot, SOURCE);
        tick++;
        listed = 0;
        const table = parseDiskstats(text, include);
        let skipped = table.skipped;
        const points: Point[] = [];
        for (const d of table.disks) {
          const e = cache.get(d.device) as Entry;
          const l = e.labels as DeviceLabels;
          if (e.emitted === tick) {
            skipped++; // the same name twice would give duplicate series
            continue;
          }
          e.emitted = tick;
          const { read, write, discard, flush } = d;
          const ops = blockioDeviceOperations;
          const merged = blockioDeviceMerged;
          const bytes = blockioDeviceBytes;
          const time = blockioDeviceTime;
          points.push(
            { metric: ops, labels: l.read, value: read.ios },
            { metric: ops, labels: l.write, value: write.ios },
          );
          if (discard) points.push({ metric: ops, labels: l.discard, value: discard.ios });
          if (flush) points.push({ metric: ops, labels: l.flush, value: flush.ios });
          points.push(
            { metric: merged, labels: l.read, value: read.merges },
            { metric: merged, labels: l.write, value: write.merges },
          );
          if (discard) points.push({ metric: merged, labels: l.discard, value: discard.merges });
          points.push(
            { metric: bytes, labels: l.read, value: toBytes(read.sectors) },
            { metric: bytes, labels: l.write, value: toBytes(write.sectors) },
          );
          if (discard) points.push({ metric: bytes, labels: l.discard, value: toBytes(discard.sectors) });
          points.push(
            { metric: time, labels: l.read, value: toNs(read.ms) },
            { metric: time, labels: l.write, value: toNs(write.ms) },
          );
          if (discard) points.push({ metric: time, labels: l.discard, value: toNs(discard.ms) });
          if (flush) points.push({ metric: time, labels: l.flush, value: toNs(flush.ms) });
          points.push(
            { metric: blockioDeviceInFlight, labels: l.device, value: d.inFlight },
            { metric: blockioDeviceBusyTime, labels: l.device, value: toNs(d.ioTicksMs) },
            { metric: blockioDeviceWeightedTime, labels: l.device, value: toNs(d.weightedMs) },
          );
        }
        if (cache.size > listed) {
          for (const [name, e] of cache) if (e.seen !== tick) cache.delete(name); // devices that went away
        }
        return { points, skipped };
      },
    };
  },
};
