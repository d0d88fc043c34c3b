import type { Logger } from 'pino';
import { metricsSubject, frameMsgIdPrefix, hostToken } from '../bus/subjects.js';
import { encodeFrame } from '../frame/codec.js';
import { describe, LayoutMemo, type EncodedDescriptor } from '../frame/descriptor.js';
import type { Point, Sampler, SamplerContext, SamplerDefinition } from '../samplers/types.js';
import { runIntervalMs, SamplerUnsupportedError } from '../samplers/types.js';
import {
  SAMPLER_STATE, SAMPLER_STATES, type AgentIntrospection, type PublishStats, type SamplerStateName, type SamplerStats,
} from '../samplers/rezolus/introspection.js';
import { msToNextTick, nowNs } from './clock.js';

/** Where frames and descriptors go: the Publisher on a live bus, a plain collector in tests. */
export interface FrameSink {
  /**
   * A frame whose Nats-Msg-Id is `idPrefix + seq` (frameMsgId). The sink
   * holds `data` from here on: a sink that only reads it during the call
   * keeps a copy if it wants more, and the last holder may give it back to
   * the encoder (frame/frame-slabs.ts), as the bundling sink does.
   */
  publishFrame(subject: string, data: Uint8Array, idPrefix: string, seq: number): void;
  /** `urgent`: ahead of the frames not yet sent (a descriptor put again after the bucket was lost) */
  putDescriptor(key: string, value: string, urgent?: boolean): void;
  stats: PublishStats;
  /** the largest message the bus takes (the server's max_payload), when known */
  maxPayload?(): number | undefined;
  /**
   * Called when every refresh started on a tick has ended, with the tick's
   * boundary; without one after the last frames at stop (and tickOnce): a
   * sink that bundles (bundling-sink.ts) sends the frames it kept as one
   * message, now or (at fast ticks) at a later tick.
   */
  endTick?(tick?: Tick): void;
}

/** A tick of the agent: its wall clock boundary (a whole multiple of its interval), unix ms. */
export interface Tick {
  readonly boundaryMs: number;
  readonly intervalMs: number;
}

type States = typeof SAMPLER_STATE;

/**
 * A sampler's state (SAMPLER_STATE says what each means) with what explains
 * it: the reason of a degraded, disabled or unsupported one, the error of a
 * failed one.
 */
export type SamplerState =
  | { readonly state: States['active'] }
  | { readonly state: States['degraded'] | States['disabled'] | States['unsupported']; readonly reason: string }
  | { readonly state: States['failed']; readonly error: string };

/** The state of a sampler that works: active, or degraded with its reason. */
function working(sampler: Sampler): SamplerState {
  return sampler.degraded === undefined ? { state: SAMPLER_STATE.active } : { state: SAMPLER_STATE.degraded, reason: sampler.degraded };
}

export interface SamplerStatus extends SamplerStats {
  readonly status: SamplerState;
  readonly intervalMs: number;
  /** size of the last frame and its series count (bytes per series is the wire figure we track) */
  readonly lastFrameBytes: number;
  /** when its last frame was made, unix ms (undefined before the first) */
  readonly lastFrameMs: number | undefined;
  readonly lastSeries: number;
  /** sequence number of the last frame made (frames made so far by this instance) */
  readonly seq: number;
}

export interface AgentOptions {
  readonly host: string;
  readonly instance: number;
  readonly samplers: readonly {
    readonly definition: SamplerDefinition;
    readonly enabled: boolean;
    readonly intervalMs: number;
    /** why a disabled sampler is off, when not its own config */
    readonly reason?: string;
  }[];
  readonly context: Omit<SamplerContext, 'agent' | 'log'>;
  readonly sink: FrameSink;
  readonly descriptorTtlMs: number;
  /**
   * How long a descriptor no frame uses any more is kept to be put again
   * (the stream's window: frames older than that are gone); default the ttl.
   */
  readonly descriptorKeepMs?: number;
  readonly log: Logger;
  /** called when a sampler changes state */
  readonly onStatusChange?: () => void;
}

interface Runtime {
  readonly definition: SamplerDefinition;
  readonly intervalMs: number;
  sampler: Sampler | undefined;
  status: SamplerState;
  busy: Promise<void> | undefined;
  /** its frames' subject and Nats-Msg-Id prefix: one string each, shared by every frame it buffers */
  readonly subject: string;
  readonly idPrefix: string;
  seq: number;
  /** the layout its descriptor was made from (not the reading: see LayoutMemo) */
  readonly layout: LayoutMemo;
  descriptor: EncodedDescriptor | undefined;
  refreshNs: bigint;
  refreshes: number;
  errors: number;
  skipped: number;
  overruns: number;
  lastFrameBytes: number;
  lastFrameMs: number | undefined;
  lastSeries: number;
  lastError: string;
}

/**
 * Runs every enabled sampler on its own wall-clock-aligned interval and turns
 * each reading into a frame: cumulative values positional against a
 * content-addressed descriptor that is put (again) before it is needed.
 */
export class Agent implements AgentIntrospection {
  readonly host: string;
  private readonly runtimes: Runtime[];
  private readonly timers = new Map<number, NodeJS.Timeout>();
  private readonly lastTick = new Map<number, number>();
  private readonly descriptorPutAt = new Map<string, number>();
  /** hash -> JSON and when a frame last named it: what to put again if the bucket loses it */
  private readonly recent = new Map<string, { readonly json: string; usedAt: number }>();
  private stopped = false;

  constructor(private readonly o: AgentOptions) {
    this.host = hostToken(o.host);
    this.runtimes = o.samplers.map((s) => ({
      definition: s.definition,
      intervalMs: runIntervalMs(s.definition, s.intervalMs),
      sampler: undefined,
      status: s.enabled ? { state: SAMPLER_STATE.failed, error: 'not started' } : { state: SAMPLER_STATE.disabled, reason: s.reason ?? 'disabled in config' },
      busy: undefined,
      subject: metricsSubject(hostToken(o.host), s.definition.name),
      idPrefix: frameMsgIdPrefix(o.host, s.definition.name, o.instance),
      seq: 0,
      layout: new LayoutMemo(),
      descriptor: undefined,
      refreshNs: 0n,
      refreshes: 0,
      errors: 0,
      skipped: 0,
      overruns: 0,
      lastFrameBytes: 0,
      lastFrameMs: undefined,
      lastSeries: 0,
      lastError: '',
    }));
    this.enabled = new Set(o.samplers.filter((s) => s.enabled).map((s) => s.definition.name));
  }

  private readonly enabled: Set<string>;

  /**
   * Initialises the samplers (an unsupported or failing one is reported, not
   * fatal) and starts the clocks; `starting` is told each sampler's name
   * before its init (the start-up steps say a slow one).
   */
  async start(starting?: (sampler: string) => void): Promise<void> {
    const ctx: SamplerContext = { ...this.o.context, log: this.o.log, agent: this };
    for (const r of this.runtimes) {
      if (!this.enabled.has(r.definition.name)) continue;
      starting?.(r.definition.name);
      const log = this.o.log.child({ sampler: r.definition.name });
      const asked = this.o.samplers.find((x) => x.definition === r.definition)?.intervalMs ?? r.intervalMs;
      if (asked < r.intervalMs) log.info({ interval_ms: r.intervalMs, asked_ms: asked }, 'interval raised to the sampler\'s minimum');
      try {
        r.sampler = await r.definition.init({ ...ctx, log });
        r.status = working(r.sampler);
      } catch (error) {
        if (error instanceof SamplerUnsupportedError) {
          r.status = { state: SAMPLER_STATE.unsupported, reason: error.message };
          log.info({ reason: error.message }, 'sampler not supported here');
        } else {
          r.status = { state: SAMPLER_STATE.failed, error: String(error) };
          log.error({ err: error }, 'sampler failed to start');
        }
      }
    }
    const counts = Object.fromEntries(SAMPLER_STATES.map((s) => [s, 0])) as Record<SamplerStateName, number>;
    for (const r of this.runtimes) counts[r.status.state]++;
    const others = Object.fromEntries(
      this.runtimes.filter((r) => r.status.state !== SAMPLER_STATE.active).map((r) => [r.definition.name, r.status.state]),
    );
    this.o.log.info({ ...counts, not_active: others }, 'samplers started');
    for (const interval of new Set(this.runtimes.filter((r) => r.sampler).map((r) => r.intervalMs))) {
      this.schedule(interval);
    }
    this.o.onStatusChange?.();
  }

  /**
   * Stops the clocks and, after any refresh under way, takes one last
   * reading of every working sampler, marked as the last frame of this run
   * (consumers then let the next run of this host take over at once).
   */
  async stop(): Promise<void> {
    if (this.stopped) return;
    this.stopped = true;
    for (const t of this.timers.values()) clearTimeout(t);
    this.timers.clear();
    await Promise.all(this.runtimes.map((r) => r.busy));
    await Promise.all(this.runtimes.filter((r) => r.sampler !== undefined && r.seq > 0).map((r) => this.refresh(r, true)));
    this.o.sink.endTick?.();
    for (const r of this.runtimes) await r.sampler?.close?.();
  }

  status(): SamplerStatus[] {
    return this.runtimes.map((r) => ({
      name: r.definition.name,
      status: r.status,
      intervalMs: r.intervalMs,
      refreshNs: r.refreshNs,
      refreshes: r.refreshes,
      errors: r.errors,
      skipped: r.skipped,
      overruns: r.overruns,
      lastFrameBytes: r.lastFrameBytes,
      lastFrameMs: r.lastFrameMs,
      lastSeries: r.lastSeries,
      seq: r.seq,
    }));
  }

  samplerStats(): readonly SamplerStats[] {
    return this.status().filter((s) => s.status.state !== SAMPLER_STATE.disabled && s.status.state !== SAMPLER_STATE.unsupported);
  }

  samplerStates(): { name: string; state: SamplerStateName }[] {
    return this.runtimes.map((r) => ({ name: r.definition.name, state: r.status.state }));
  }

  publishStats(): PublishStats {
    return this.o.sink.stats;
  }

  /** Refreshes every active sampler once, now, and waits for the frames to be queued (tests, benchmarks). */
  async tickOnce(): Promise<void> {
    await Promise.all(this.runtimes.filter((r) => r.sampler).map((r) => this.refresh(r)));
    this.o.sink.endTick?.();
  }

  /**
   * The next tick, one millisecond past the boundary: node counts timers on
   * the monotonic clock in whole milliseconds, whose edges are not the wall
   * clock's, so a timer set for the boundary itself can fire up to a
   * millisecond before it, and tick() then sets another for the rest: one
   * more wake-up of the process, which costs about as much as a small
   * sampler's refresh at 1 Hz on a VM.
   */
  private schedule(intervalMs: number): void {
    if (this.stopped) return;
    const timer = setTimeout(() => this.tick(intervalMs), msToNextTick(intervalMs) + 1);
    timer.unref?.();
    this.timers.set(intervalMs, timer);
  }

  private tick(intervalMs: number): void {
    if (this.stopped) return;
    // Timers may fire a hair before the boundary they were set for: wait out the rest,
    // so every acquisition starts on or just after a whole interval of the wall clock.
    const now = Date.now();
    const phase = now % intervalMs;
    if (phase > intervalMs / 2) {
      const timer = setTimeout(() => this.tick(intervalMs), intervalMs - phase);
      timer.unref?.();
      this.timers.set(intervalMs, timer);
      return;
    }
    const slot = Math.floor(now / intervalMs);
    if (this.lastTick.get(intervalMs) !== slot) {
      this.lastTick.set(intervalMs, slot);
      const started: Promise<void>[] = [];
      for (const r of this.runtimes) {
        if (r.intervalMs !== intervalMs || r.sampler === undefined) continue;
        if (r.busy !== undefined) {
          r.overruns++;
          continue;
        }
        r.busy = this.refresh(r).finally(() => {
          r.busy = undefined;
        });
        started.push(r.busy);
      }
      // refresh() settles every error itself: the tick is over when each has ended
      const tick: Tick = { boundaryMs: slot * intervalMs, intervalMs };
      if (started.length > 0 && this.o.sink.endTick !== undefined) void Promise.allSettled(started).then(() => this.o.sink.endTick?.(tick));
    }
    this.schedule(intervalMs);
  }

  private async refresh(r: Runtime, last = false): Promise<void> {
    const sampler = r.sampler as Sampler;
    const t0 = process.hrtime.bigint();
    const beginNs = nowNs();
    let points: Point[];
    try {
      const reading = await sampler.refresh();
      points = reading.points;
      r.skipped += reading.skipped;
    } catch (error) {
      r.errors++;
      r.refreshNs += process.hrtime.bigint() - t0;
      r.refreshes++;
      const message = String(error);
      if (r.status.state !== SAMPLER_STATE.failed || message !== r.lastError) {
        this.o.log.warn({ sampler: r.definition.name, err: error }, 'sampler refresh failed');
      }
      r.lastError = message;
      this.setStatus(r, { state: SAMPLER_STATE.failed, error: message });
      return;
    }
    const endNs = nowNs();
    try {
      if (points.length > 0) this.emit(r, points, beginNs, endNs, last);
    } catch (error) {
      // A reading that cannot become a frame (say a counter beyond u64, or a descriptor the bus
      // cannot carry) is dropped, never half-sent; the sampler shows as failed until one can.
      r.errors++;
      r.refreshNs += process.hrtime.bigint() - t0;
      r.refreshes++;
      const message = String(error);
      if (r.status.state !== SAMPLER_STATE.failed || r.status.error !== message) {
        this.o.log.warn({ sampler: r.definition.name, err: error }, 'reading could not be encoded; dropped');
        this.setStatus(r, { state: SAMPLER_STATE.failed, error: message });
      }
      return;
    }
    if (r.status.state === SAMPLER_STATE.failed) this.setStatus(r, working(sampler));
    r.refreshNs += process.hrtime.bigint() - t0;
    r.refreshes++;
  }

  private emit(r: Runtime, points: Point[], beginNs: bigint, endNs: bigint, last: boolean): void {
    const name = r.definition.name;
    if (r.descriptor === undefined || !r.layout.matches(points)) {
      r.descriptor = describe(name, points);
      r.layout.remember(points);
    }
    const d = r.descriptor;
    const limit = this.o.sink.maxPayload?.();
    if (limit !== undefined && d.json.length > limit) {
      // put, it would be refused, and every frame of the sampler would be undecodable
      throw new Error(
        `its descriptor (${points.length} series) is ${d.json.length} bytes, more than the bus takes (max_payload ${limit}): ` +
          'fewer series (for cgroups, lower [cgroups] max_cgroups) or a larger max_payload in nats-server',
      );
    }
    const now = Date.now();
    const used = this.recent.get(d.hash);
    if (used !== undefined) used.usedAt = now;
    else this.recent.set(d.hash, { json: d.json, usedAt: now });
    const putAt = this.descriptorPutAt.get(d.hash);
    if (putAt === undefined || now - putAt > this.o.descriptorTtlMs / 4) {
      this.o.sink.putDescriptor(d.hash, d.json);
      this.descriptorPutAt.set(d.hash, now);
    }
    const values = new Array<Point['value']>(points.length);
    for (let i = 0; i < points.length; i++) values[i] = (points[i] as Point).value;
    r.seq++;
    const data = encodeFrame(
      { host: this.host, sampler: name, instance: this.o.instance, seq: r.seq, beginNs, endNs, descriptor: d.hash, ...(last ? { last } : {}) },
      values,
    );
    r.lastFrameBytes = data.byteLength;
    r.lastFrameMs = now;
    r.lastSeries = points.length;
    this.o.sink.publishFrame(r.subject, data, r.idPrefix, r.seq);
  }

  /**
   * The descriptors frames named within descriptorKeepMs (the ones a
   * consumer of the stream may still need), with when each was last queued
   * for a put.
   */
  recentDescriptors(): { readonly hash: string; readonly json: string; readonly putAt: number }[] {
    const horizon = Date.now() - (this.o.descriptorKeepMs ?? this.o.descriptorTtlMs);
    const out = [];
    for (const [hash, e] of this.recent) {
      if (e.usedAt < horizon) {
        // and when it was put: cgroups that come and go make a new descriptor each time, never used again
        this.recent.delete(hash);
        this.descriptorPutAt.delete(hash);
        continue;
      }
      out.push({ hash, json: e.json, putAt: this.descriptorPutAt.get(hash) ?? 0 });
    }
    return out;
  }

  /**
   * Puts recent descriptors again, ahead of the frames not yet sent: all of
   * them, or those `only` names. Returns how many were queued.
   */
  reputDescriptors(only?: ReadonlySet<string>): number {
    let n = 0;
    const now = Date.now();
    for (const d of this.recentDescriptors()) {
      if (only !== undefined && !only.has(d.hash)) continue;
      this.o.sink.putDescriptor(d.hash, d.json, true);
      this.descriptorPutAt.set(d.hash, now);
      n++;
    }
    return n;
  }

  private setStatus(r: Runtime, s: SamplerState): void {
    r.status = s;
    this.o.onStatusChange?.();
  }
}
