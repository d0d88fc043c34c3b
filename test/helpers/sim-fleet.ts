/**
 * A simulated fleet for end-to-end tests: N hosts (`sim-000`, `sim-001`, …)
 * publishing real-shaped frames without running N agents.
 *
 * The frames are what an agent on the fixture root would send: the real
 * samplers are refreshed once on test/fixtures/rootfs, their points are
 * described with describe() and each descriptor is put in the descriptor
 * bucket under its hash, as the agent does. Each tick then publishes one
 * encodeFrame() message per host and sampler to metricsSubject(host, sampler),
 * with the fixture values shifted by simDelta(host, tick), so a test can
 * predict every value the exporter serves.
 */
import { encode as msgpackEncode } from '@msgpack/msgpack';
import { jetstreamManager } from '@nats-io/jetstream';
import type { KV } from '@nats-io/kv';
import { headers, type NatsConnection } from '@nats-io/nats-core';
import { connect } from '@nats-io/transport-node';
import { descriptorBucket } from '../../src/bus/kv.js';
import { ensureStream } from '../../src/bus/stream.js';
import { frameMsgId, hostToken, metricsSubject } from '../../src/bus/subjects.js';
import type { AgentConfig } from '../../src/config/agent.js';
import { encodeFrame, type FrameHeader } from '../../src/frame/codec.js';
import { describe, type EncodedDescriptor } from '../../src/frame/descriptor.js';
import { FRAME_VERSION } from '../../src/frame/types.js';
import { silentLogger } from '../../src/log/logger.js';
import type { SparseHistogram } from '../../src/metrics/histogram.js';
import { SAMPLERS } from '../../src/samplers/registry.js';
import { SamplerUnsupportedError, type Point, type Value } from '../../src/samplers/types.js';
import { PROC, SYS } from './fixtures.js';

/** Host names are `sim-` and an index of at least three digits (`sim-007`, `sim-1234`); the fleet bench goes past 1000. */
export const MAX_SIM_HOSTS = 10_000;

export function simHost(index: number): string {
  if (!Number.isInteger(index) || index < 0 || index >= MAX_SIM_HOSTS) throw new RangeError(`sim host index ${index} out of range`);
  return `sim-${String(index).padStart(3, '0')}`;
}

/**
 * How far host `index`'s counters and gauges are from the fixture's in tick
 * `tick` (≥ 1), in the metric's raw unit: 1000 per tick plus the host index.
 * Distinct for every (host, tick) pair, and growing with the tick, so counters stay counters.
 */
export function simDelta(index: number, tick: number): number {
  if (!Number.isInteger(tick) || tick < 1) throw new RangeError(`tick must be an integer ≥ 1, got ${tick}`);
  simHost(index);
  return 1000 * tick + index;
}

/**
 * A fixture value as host `index` reports it in tick `tick`: counters and
 * gauges plus simDelta (exact: integers beyond 2^53 go bigint); histograms
 * keep their buckets, each count plus simDelta (the fixture samplers emit
 * none; synthetic samplers may).
 */
export function simValue(fixture: Value, index: number, tick: number): Value {
  const d = simDelta(index, tick);
  if (typeof fixture === 'bigint') return fixture + BigInt(d);
  if (typeof fixture === 'number') {
    if (Number.isInteger(fixture) && !Number.isSafeInteger(fixture + d)) return BigInt(fixture) + BigInt(d);
    return fixture + d;
  }
  return { ...fixture, count: fixture.count.map((c) => c + d) };
}

/** The kinds of bad message publishMalformed() can send, and the skip reason the exporter counts each under. */
export const MALFORMED: Readonly<Record<MalformedKind, SkipReason>> = {
  'garbage-bytes': 'garbage',
  truncated: 'garbage',
  'wrong-version': 'garbage',
  'ext-type': 'garbage',
  'short-values': 'invalid',
  'wrong-kind': 'invalid',
  'non-finite': 'invalid',
  'unknown-descriptor': 'unknown_descriptor',
};
export type MalformedKind = 'garbage-bytes' | 'truncated' | 'wrong-version' | 'ext-type' | 'short-values' | 'wrong-kind' | 'non-finite' | 'unknown-descriptor';
// (test/helpers/hostile-frames.ts generates every other kind of hostile message, for the flood in test/e2e/hostile.test.ts)
export type SkipReason = 'garbage' | 'invalid' | 'unknown_descriptor';
export const MALFORMED_KINDS = Object.keys(MALFORMED) as MalformedKind[];

/** One sampler's fixture reading and the descriptor stored for it. */
export interface SimSampler {
  readonly name: string;
  readonly points: readonly Point[];
  readonly descriptor: EncodedDescriptor;
}

export interface SimFleetOptions {
  /** the test server; required, never a default */
  readonly natsUrl: string;
  readonly hosts: number;
  /** the agent config whose [stream] and [descriptors] settings the stream and bucket get, as the agent's would */
  readonly agent: AgentConfig;
  readonly procRoot?: string;
  readonly sysRoot?: string;
  /** sampler names; default every registry sampler but rezolus_self (which measures this process) */
  readonly samplers?: readonly string[];
  /** samplers that are not in the registry, with their fixed reading (e.g. histograms before the eBPF samplers exist) */
  readonly synthetic?: readonly { readonly name: string; readonly points: readonly Point[] }[];
  /** end of tick 0 (unix ns); default now. Tick t ends at startNs + t × periodNs. */
  readonly startNs?: bigint;
  /** default 1 s */
  readonly periodNs?: bigint;
}

/**
 * The samplers a simulated host sends: each registry sampler refreshed once
 * on the fixture root (those with points), then the synthetic ones, each
 * with its descriptor.
 */
export async function fixtureSamplers(
  o: Pick<SimFleetOptions, 'procRoot' | 'sysRoot' | 'samplers' | 'synthetic'> = {},
): Promise<SimSampler[]> {
  const log = silentLogger();
  // the fixture's samplers: not rezolus_self (this process) nor the kernel samplers (the live kernel)
  const wanted = o.samplers ?? SAMPLERS.filter((s) => !s.kernel && s.name !== 'rezolus_self').map((s) => s.name);
  const samplers: SimSampler[] = [];
  for (const name of wanted) {
    const definition = SAMPLERS.find((s) => s.name === name);
    if (definition === undefined) throw new Error(`no sampler ${name}`);
    let sampler;
    try {
      sampler = await definition.init({ procRoot: o.procRoot ?? PROC, sysRoot: o.sysRoot ?? SYS, log });
    } catch (error) {
      if (error instanceof SamplerUnsupportedError) continue;
      throw error;
    }
    try {
      const reading = await sampler.refresh();
      // the agent sends nothing for an empty reading
      if (reading.points.length > 0) samplers.push({ name, points: reading.points, descriptor: describe(name, reading.points) });
    } finally {
      await sampler.close?.();
    }
  }
  for (const { name, points } of o.synthetic ?? []) samplers.push({ name, points, descriptor: describe(name, points) });
  if (samplers.length === 0) throw new Error('no sampler produced points on the fixture root');
  return samplers;

}

export class SimFleet {
  readonly hosts: readonly string[];
  readonly startNs: bigint;
  readonly periodNs: bigint;
  /** frames published (good and bad) */
  published = 0;
  /** per host index, the last good tick published (0 = none) */
  readonly #lastTick: number[];

  private constructor(
    private readonly nc: NatsConnection,
    private readonly kv: KV,
    readonly samplers: readonly SimSampler[],
    hosts: number,
    startNs: bigint,
    periodNs: bigint,
  ) {
    this.hosts = Array.from({ length: hosts }, (_, i) => simHost(i));
    this.#lastTick = new Array<number>(hosts).fill(0);
    this.startNs = startNs;
    this.periodNs = periodNs;
  }

  /** Connects, ensures the stream and descriptor bucket like the agent, reads the fixture and stores the descriptors. */
  static async start(o: SimFleetOptions): Promise<SimFleet> {
    if (typeof o.natsUrl !== 'string' || o.natsUrl.trim() === '') throw new Error('SimFleet needs an explicit natsUrl');
    if (!Number.isInteger(o.hosts) || o.hosts < 1 || o.hosts > MAX_SIM_HOSTS) throw new RangeError(`hosts must be 1..${MAX_SIM_HOSTS}`);
    const samplers = await fixtureSamplers(o);
    const nc = await connect({ servers: o.natsUrl, name: 'rezolus-sim-fleet' });
    try {
      await ensureStream(await jetstreamManager(nc), o.agent.stream, silentLogger());
      const kv = await descriptorBucket(nc, { ttlMs: o.agent.descriptorTtlMs, replicas: o.agent.stream.replicas });
      // the agent's key scheme: key = descriptor hash, value = its JSON
      for (const s of samplers) await kv.put(s.descriptor.hash, s.descriptor.json);
      const startNs = o.startNs ?? BigInt(Date.now()) * 1_000_000n;
      return new SimFleet(nc, kv, samplers, o.hosts, startNs, o.periodNs ?? 1_000_000_000n);
    } catch (error) {
      await nc.close();
      throw error;
    }
  }

  /** A deterministic agent instance id per host (non-zero u32). */
  instanceOf(index: number): number {
    return 0x5100_0000 + index;
  }

  /** End of tick `tick`'s acquisition window. */
  endNs(tick: number): bigint {
    return this.startNs + BigInt(tick) * this.periodNs;
  }

  lastTick(index: number): number {
    return this.#lastTick[index] ?? 0;
  }

  sampler(name: string): SimSampler {
    const s = this.samplers.find((x) => x.name === name);
    if (s === undefined) throw new Error(`the sim fleet has no sampler ${name}`);
    return s;
  }

  /**
   * The raw value host `index` sends in tick `tick` for the series `metric`
   * with `labels` (every label of the metric, as in the descriptor).
   */
  rawValue(index: number, tick: number, metric: string, labels: Readonly<Record<string, string>> = {}): Value {
    for (const s of this.samplers) {
      for (const p of s.points) {
        if (p.metric.name !== metric) continue;
        if (p.metric.labels.every((l) => p.labels[l] === labels[l]) && Object.keys(labels).length === p.metric.labels.length) {
          return simValue(p.value, index, tick);
        }
      }
    }
    throw new Error(`no series ${metric}${JSON.stringify(labels)} in the fixture reading`);
  }

  #header(index: number, sampler: string, seq: number, tick: number, descriptor: string): FrameHeader {
    const endNs = this.endNs(tick);
    return { host: hostToken(this.hosts[index] as string), sampler, instance: this.instanceOf(index), seq, beginNs: endNs - 1_000_000n, endNs, descriptor };
  }

  #publish(index: number, sampler: string, data: Uint8Array, seq: number): void {
    const host = this.hosts[index] as string;
    const h = headers();
    h.set('Nats-Msg-Id', frameMsgId(host, sampler, this.instanceOf(index), seq));
    this.nc.publish(metricsSubject(host, sampler), data, { headers: h });
    this.published++;
  }

  /**
   * Publishes tick `tick` (seq = tick) of every sampler for the given hosts
   * (default all), then flushes: when it resolves the server has every
   * message. A host's ticks must increase. Returns the number of frames.
   */
  async publishTick(tick: number, indexes: readonly number[] = this.hosts.map((_, i) => i)): Promise<number> {
    let n = 0;
    for (const i of indexes) {
      if (i < 0 || i >= this.hosts.length) throw new RangeError(`no sim host ${i}`);
      if (tick <= this.lastTick(i)) throw new Error(`${this.hosts[i]} already sent tick ${this.lastTick(i)}; ticks must increase`);
      for (const s of this.samplers) {
        const values = s.points.map((p) => simValue(p.value, i, tick));
        this.#publish(i, s.name, encodeFrame(this.#header(i, s.name, tick, tick, s.descriptor.hash), values), tick);
        n++;
      }
      this.#lastTick[i] = tick;
    }
    await this.nc.flush();
    return n;
  }

  /**
   * Publishes one bad message for host `index` on the subject of `samplerName`
   * and flushes. It carries the seq the host's next good frame will have, so a
   * bad frame wrongly taken in would make that good frame look out of order.
   * Returns the skip reason the exporter should count it under.
   */
  async publishMalformed(index: number, kind: MalformedKind, samplerName = this.samplers[0]?.name ?? ''): Promise<SkipReason> {
    const s = this.sampler(samplerName);
    const tick = this.lastTick(index) + 1;
    const seq = tick;
    const good = s.points.map((p) => simValue(p.value, index, tick));
    let data: Uint8Array;
    switch (kind) {
      case 'garbage-bytes':
        // 0xc1 is the one byte msgpack never uses
        data = Uint8Array.from([0xc1, 0x00, 0xff, 0x13, 0x37, 0xde, 0xad, 0xbe, 0xef]);
        break;
      case 'truncated': {
        const full = encodeFrame(this.#header(index, s.name, seq, tick, s.descriptor.hash), good);
        data = full.subarray(0, Math.floor(full.byteLength / 2));
        break;
      }
      case 'wrong-version': {
        const h = this.#header(index, s.name, seq, tick, s.descriptor.hash);
        data = msgpackEncode(
          { v: FRAME_VERSION + 1, h: h.host, s: h.sampler, i: h.instance, q: h.seq, b: h.beginNs, e: h.endNs, d: h.descriptor, x: good },
          { useBigInt64: true },
        );
        break;
      }
      case 'ext-type': {
        // a timestamp extension as the first value: frames carry no msgpack extension types
        const full = encodeFrame(this.#header(index, s.name, seq, tick, s.descriptor.hash), []);
        data = Uint8Array.from([...full.subarray(0, -1), 0x91, 0xd6, 0xff, 0, 0, 0, 0]);
        break;
      }
      case 'non-finite': {
        // NaN where the first series (a counter or a gauge) needs a finite number
        const first = s.descriptor.descriptor.series[0]?.[0] ?? '';
        if (s.descriptor.descriptor.metrics[first]?.kind === 'histogram') throw new Error(`${s.name}'s first series is a histogram`);
        data = encodeFrame(this.#header(index, s.name, seq, tick, s.descriptor.hash), [Number.NaN, ...good.slice(1)]);
        break;
      }
      case 'short-values':
        data = encodeFrame(this.#header(index, s.name, seq, tick, s.descriptor.hash), good.slice(0, -1));
        break;
      case 'wrong-kind': {
        // a histogram where the descriptor has a counter or gauge
        const first = s.descriptor.descriptor.series[0]?.[0] ?? '';
        if (s.descriptor.descriptor.metrics[first]?.kind === 'histogram') throw new Error(`${s.name}'s first series is a histogram`);
        const h: SparseHistogram = { groupingPower: 3, maxValuePower: 64, index: [1], count: [1] };
        data = encodeFrame(this.#header(index, s.name, seq, tick, s.descriptor.hash), [h, ...good.slice(1)]);
        break;
      }
      case 'unknown-descriptor': {
        // a well-formed descriptor that was never put: as if the agent's KV put had been lost
        const unknown = describe(s.name, s.points.slice(0, -1));
        if ((await this.kv.get(unknown.hash)) !== null) throw new Error(`descriptor ${unknown.hash} is in the bucket after all`);
        data = encodeFrame(this.#header(index, s.name, seq, tick, unknown.hash), good.slice(0, -1));
        break;
      }
      default:
        throw new Error(`unknown malformed kind ${String(kind)}`);
    }
    this.#publish(index, s.name, data, seq);
    await this.nc.flush();
    return MALFORMED[kind];
  }

  /**
   * Publishes on host `index`'s subject of `samplerName` a well-formed frame
   * whose header names another host (and agent instance): the bus contract
   * says a frame's host is the one in its subject, so a consumer should not
   * file it under `claimed.host`. Values are host `index`'s for `tick`,
   * seq is `tick`. Flushes.
   */
  async publishImpostor(index: number, samplerName: string, claimed: { readonly host: string; readonly instance: number }, tick: number): Promise<void> {
    const s = this.sampler(samplerName);
    const values = s.points.map((p) => simValue(p.value, index, tick));
    const endNs = this.endNs(tick);
    const header: FrameHeader = {
      host: hostToken(claimed.host), sampler: s.name, instance: claimed.instance, seq: tick, beginNs: endNs - 1_000_000n, endNs, descriptor: s.descriptor.hash,
    };
    this.#publish(index, s.name, encodeFrame(header, values), tick);
    await this.nc.flush();
  }

  async close(): Promise<void> {
    await this.nc.drain().catch(() => this.nc.close());
  }
}

/**
 * Publishes `fleet`'s ticks on the wall clock, each `lagMs` after it ended
 * (0: as an agent on time), checking every `everyMs`. stop() ends it and
 * waits for a tick being published: a fleet closed under a publish in
 * flight would reject it, unhandled, and fail the test file after its tests.
 */
export function publishOnSchedule(fleet: SimFleet, o: { readonly lagMs?: number; readonly everyMs: number }): { stop(): Promise<void> } {
  let tick = 0;
  let running: Promise<void> | undefined;
  let stopped = false;
  const timer = setInterval(() => {
    if (running !== undefined || stopped) return;
    running = (async () => {
      const due = Number((BigInt(Date.now() - (o.lagMs ?? 0)) * 1_000_000n - fleet.startNs) / fleet.periodNs);
      while (tick < due && !stopped) await fleet.publishTick(++tick);
    })().finally(() => (running = undefined));
  }, o.everyMs);
  return {
    async stop() {
      stopped = true;
      clearInterval(timer);
      await running;
    },
  };
}
