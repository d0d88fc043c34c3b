/**
 * One load process of the fleet run (fleet-run.ts forks it): the simulated
 * hosts `first` .. `first + count - 1`, each with its own NATS connection
 * and its own Publisher (src/bus/publisher.ts), as an agent has, or one
 * shared connection with per-host Publishers (`shared`). Descriptors go
 * through the Publisher under the host's key, as the agent's do; then on
 * every whole second of the schedule each host's 26 frames are encoded and
 * queued, seq = tick, frame end = the tick's time. After each tick it tells
 * the parent when each host published (`tick` message); at the end, once
 * every Publisher is flushed, its totals (`done`).
 *
 * `bundle` sends each host's frames of a tick as one bundle (agent/bundling-sink.ts).
 * `drop` leaves one frame out and `double` publishes one frame a second time
 * under another message id (stored twice): the audits must see each.
 */
import { connect } from '@nats-io/transport-node';
import type { NatsConnection } from '@nats-io/nats-core';
import { openDescriptorBucket } from '../../src/bus/kv.js';
import type { FrameSink } from '../../src/agent/agent.js';
import { BundlingSink } from '../../src/agent/bundling-sink.js';
import { Publisher } from '../../src/bus/publisher.js';
import { frameMsgIdPrefix, hostToken, metricsSubject } from '../../src/bus/subjects.js';
import { encodeFrame } from '../../src/frame/codec.js';
import { silentLogger } from '../../src/log/logger.js';
import { fleetSamplers, fleetValues } from './fleet-shape.js';
import { simHost } from './sim-fleet.js';

export interface FrameRef {
  readonly host: number;
  readonly sampler: string;
  readonly tick: number;
}

export interface WorkerStart {
  readonly url: string;
  readonly first: number;
  readonly count: number;
  readonly ticks: number;
  readonly shared: boolean;
  /** each host's frames of a tick as one bundle, as an agent with [stream] bundle sends them */
  readonly bundle?: boolean;
  readonly drop?: FrameRef;
  readonly double?: FrameRef;
}

export type WorkerMessage =
  | { readonly type: 'ready' }
  | { readonly type: 'tick'; readonly tick: number; readonly first: number; readonly publishMs: readonly number[]; readonly lagMs: number; readonly buffered: number }
  | { readonly type: 'done'; readonly published: number; readonly dropped: number; readonly duplicates: number; readonly retries: number; readonly flushed: boolean; readonly cpuMs: number };

export const instanceOf = (index: number): number => 0x5100_0000 + index;

const send = (m: WorkerMessage): void => void process.send?.(m);
const sleep = (ms: number): Promise<void> => new Promise((r) => setTimeout(r, Math.max(0, ms)));

async function run(o: WorkerStart): Promise<void> {
  const samplers = await fleetSamplers();
  const log = silentLogger();
  const conns: NatsConnection[] = [];
  const open = async (name: string): Promise<NatsConnection> => {
    const nc = await connect({ servers: o.url.split(','), name, maxReconnectAttempts: -1 });
    conns.push(nc);
    return nc;
  };
  const shared = o.shared ? await open(`fleet-load-${o.first}`) : undefined;
  const hosts: { index: number; host: string; publisher: Publisher; sink: FrameSink; subjects: string[]; prefixes: string[] }[] = [];
  for (let i = o.first; i < o.first + o.count; i++) {
    const host = simHost(i);
    const nc = shared ?? (await open(`rezolus-agent ${host}`));
    const publisher = new Publisher({ nc, descriptors: await openDescriptorBucket(nc), host, maxBufferBytes: 64 * 1024 * 1024, log });
    for (const s of samplers) publisher.putDescriptor(s.descriptor.hash, s.descriptor.json);
    hosts.push({
      index: i, host, publisher,
      sink: o.bundle === true ? new BundlingSink(publisher, host, instanceOf(i)) : publisher,
      subjects: samplers.map((s) => metricsSubject(host, s.name)),
      prefixes: samplers.map((s) => frameMsgIdPrefix(host, s.name, instanceOf(i))),
    });
  }
  await Promise.all(hosts.map((h) => h.publisher.flush(60_000)));
  send({ type: 'ready' });
  // tick 1's time (unix ms) comes once every load process and consumer is ready; tick k is published
  // at t1Ms + (k - 1) s and its frames end then
  const t1Ms = await new Promise<number>((r) => process.once('message', (m: { t1Ms: number }) => r(m.t1Ms)));
  const cpu0 = process.cpuUsage();
  for (let tick = 1; tick <= o.ticks; tick++) {
    const due = t1Ms + (tick - 1) * 1000;
    await sleep(due - Date.now());
    const lagMs = Date.now() - due;
    const endNs = BigInt(due) * 1_000_000n;
    const publishMs: number[] = [];
    for (const h of hosts) {
      const now = Date.now();
      publishMs.push(now);
      samplers.forEach((s, k) => {
        if (o.drop !== undefined && o.drop.host === h.index && o.drop.sampler === s.name && o.drop.tick === tick) return;
        const header = { host: hostToken(h.host), sampler: s.name, instance: instanceOf(h.index), seq: tick, beginNs: endNs - 1_000_000n, endNs, descriptor: s.descriptor.hash };
        const data = encodeFrame(header, fleetValues(s, h.index, tick, now));
        h.sink.publishFrame(h.subjects[k] as string, data, h.prefixes[k] as string, tick);
        if (o.double !== undefined && o.double.host === h.index && o.double.sampler === s.name && o.double.tick === tick) {
          // a copy: a bundling sink gives its frame back to the encoder once bundled (frame/frame-slabs.ts)
          h.publisher.publishFrame(h.subjects[k] as string, data.slice(), `${h.prefixes[k] as string}again-`, tick);
        }
      });
      h.sink.endTick?.();
    }
    send({ type: 'tick', tick, first: o.first, publishMs, lagMs, buffered: hosts.reduce((n, h) => n + h.publisher.stats.buffered, 0) });
  }
  const flushed = (await Promise.all(hosts.map((h) => h.publisher.flush(120_000)))).every(Boolean);
  const cpu = process.cpuUsage(cpu0);
  const sum = (k: 'published' | 'dropped' | 'duplicates' | 'retries'): number => hosts.reduce((n, h) => n + h.publisher.stats[k], 0);
  send({ type: 'done', published: sum('published'), dropped: sum('dropped'), duplicates: sum('duplicates'), retries: sum('retries'), flushed, cpuMs: (cpu.user + cpu.system) / 1000 });
  // stay (and be measured) until the parent has its figures
  await new Promise((r) => process.once('message', r));
  for (const h of hosts) await h.publisher.close(1000);
  await Promise.all(conns.map((nc) => nc.close()));
}

process.once('message', (o: WorkerStart) => {
  run(o).then(
    () => process.exit(0),
    (error: unknown) => {
      process.stderr.write(`fleet worker ${o.first}: ${error instanceof Error ? error.stack ?? error.message : String(error)}\n`);
      process.exit(1);
    },
  );
});
// the parent's end is this process's end
process.on('disconnect', () => process.exit(0));
