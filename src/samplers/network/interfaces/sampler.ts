import { readText, requireSource } from '../../read.js';
import type { Labels, Point, Reading, Sampler, SamplerContext, SamplerDefinition } from '../../types.js';
import {
  METRICS,
  networkDeviceBytes,
  networkDeviceCarrierErrors,
  networkDeviceCollisions,
  networkDeviceCompressed,
  networkDeviceDrops,
  networkDeviceErrors,
  networkDeviceFifoErrors,
  networkDeviceFrameErrors,
  networkDeviceMulticast,
  networkDevicePackets,
} from './metrics.js';
import { parseNetDev } from './parse.js';

const NAME = 'network_interfaces';
const SOURCE = 'net/dev';

/** The label objects of one interface, built once and reused by every refresh. */
interface DeviceLabels {
  readonly device: Labels;
  readonly receive: Labels;
  readonly transmit: Labels;
  /** the refresh that last saw this interface */
  tick: number;
}

export const networkInterfacesSampler: SamplerDefinition = {
  name: NAME,
  description: 'Per-interface network counters from /proc/net/dev.',
  metrics: METRICS,
  async init(ctx: SamplerContext): Promise<Sampler> {
    await requireSource(ctx.procRoot, SOURCE);
    const cache = new Map<string, DeviceLabels>();
    let tick = 0;
    return {
      name: NAME,
      metrics: METRICS,
      async refresh(): Promise<Reading> {
        const table = parseNetDev(await readText(ctx.procRoot, SOURCE));
        tick++;
        let skipped = table.skipped;
        const points: Point[] = [];
        let live = 0;
        for (const d of table.devices) {
          let l = cache.get(d.device);
          if (l === undefined) {
            l = {
              device: Object.freeze({ device: d.device }),
              receive: Object.freeze({ device: d.device, direction: 'receive' }),
              transmit: Object.freeze({ device: d.device, direction: 'transmit' }),
              tick,
            };
            cache.set(d.device, l);
          } else if (l.tick === tick) {
            skipped++; // the same name twice would give duplicate series
            continue;
          }
          l.tick = tick;
          live++;
          const rx = d.receive;
          const tx = d.transmit;
          points.push(
            { metric: networkDeviceBytes, labels: l.receive, value: rx.bytes },
            { metric: networkDeviceBytes, labels: l.transmit, value: tx.bytes },
            { metric: networkDevicePackets, labels: l.receive, value: rx.packets },
            { metric: networkDevicePackets, labels: l.transmit, value: tx.packets },
            { metric: networkDeviceErrors, labels: l.receive, value: rx.errs },
            { metric: networkDeviceErrors, labels: l.transmit, value: tx.errs },
            { metric: networkDeviceDrops, labels: l.receive, value: rx.drop },
            { metric: networkDeviceDrops, labels: l.transmit, value: tx.drop },
            { metric: networkDeviceFifoErrors, labels: l.receive, value: rx.fifo },
            { metric: networkDeviceFifoErrors, labels: l.transmit, value: tx.fifo },
            { metric: networkDeviceCompressed, labels: l.receive, value: rx.compressed },
            { metric: networkDeviceCompressed, labels: l.transmit, value: tx.compressed },
            { metric: networkDeviceFrameErrors, labels: l.device, value: rx.frame },
            { metric: networkDeviceMulticast, labels: l.device, value: rx.multicast },
            { metric: networkDeviceCollisions, labels: l.device, value: tx.colls },
            { metric: networkDeviceCarrierErrors, labels: l.device, value: tx.carrier },
          );
        }
        if (cache.size > live) {
          for (const [name, l] of cache) if (l.tick !== tick) cache.delete(name);
        }
        return { points, skipped };
      },
    };
  },
};
