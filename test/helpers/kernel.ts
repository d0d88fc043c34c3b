/**
 * Runs real kernel samplers in an Agent with a sink that keeps the frames it
 * publishes, and reads them back decoded: tests check published frames, not
 * the sampler's internals.
 */
import { spawn } from 'node:child_process';
import { Agent, type FrameSink, type SamplerStatus } from '../../src/agent/agent.js';
import { decodeFrame, resolveFrame } from '../../src/frame/codec.js';
import { parseDescriptor } from '../../src/frame/descriptor.js';
import type { Descriptor, FrameValue } from '../../src/frame/types.js';
import type { SparseHistogram } from '../../src/metrics/histogram.js';
import { percentiles, subtract, totalCount } from '../../src/metrics/histogram.js';
import { silentLogger } from '../../src/log/logger.js';
import { SAMPLERS } from '../../src/samplers/registry.js';
import type { PublishStats } from '../../src/samplers/rezolus/introspection.js';
import type { SamplerContext } from '../../src/samplers/types.js';

/** series key → value: `metric` or `metric{k=v,k2=v2}` in the metric's label order. */
export type Values = Map<string, FrameValue>;

class KeepingSink implements FrameSink {
  readonly latest = new Map<string, Uint8Array>();
  readonly descriptors = new Map<string, Descriptor>();
  stats: PublishStats = { published: 0, dropped: 0, retries: 0, buffered: 0, bufferedBytes: 0 };
  publishFrame(subject: string, data: Uint8Array): void {
    this.latest.set(subject, data);
  }
  putDescriptor(key: string, value: string): void {
    this.descriptors.set(key, parseDescriptor(value));
  }
}

export class KernelHarness {
  private constructor(
    readonly agent: Agent,
    private readonly sink: KeepingSink,
  ) {}

  /** `intervalMs`: how often the agent refreshes on its own besides read() (tests read when they choose) */
  static async start(names: readonly string[], context: Partial<SamplerContext> = {}, intervalMs = 60_000): Promise<KernelHarness> {
    const sink = new KeepingSink();
    const agent = new Agent({
      host: 'kernel-test',
      instance: 1,
      samplers: SAMPLERS.map((definition) => ({ definition, enabled: names.includes(definition.name), intervalMs })),
      context: { procRoot: '/proc', sysRoot: '/sys', ...context },
      sink,
      descriptorTtlMs: 3_600_000,
      log: silentLogger(),
    });
    await agent.start();
    return new KernelHarness(agent, sink);
  }

  status(name: string): SamplerStatus {
    const s = this.agent.status().find((x) => x.name === name);
    if (s === undefined) throw new Error(`no sampler ${name}`);
    return s;
  }

  /** Refreshes every sampler now (unless `tick` is false: the frame of the last refresh) and returns the series of `sampler`'s frame. */
  async read(sampler: string, tick = true): Promise<Values> {
    if (tick) await this.agent.tickOnce();
    const data = [...this.sink.latest.entries()].find(([subject]) => subject.endsWith(`.${sampler}`))?.[1];
    if (data === undefined) throw new Error(`${sampler} published no frame`);
    const raw = decodeFrame(data);
    const descriptor = this.sink.descriptors.get(raw.descriptor);
    if (descriptor === undefined) throw new Error(`descriptor ${raw.descriptor} was never put`);
    const frame = resolveFrame(raw, descriptor);
    const out: Values = new Map();
    descriptor.series.forEach(([name, labels], i) => {
      const keys = descriptor.metrics[name]?.labels ?? [];
      const key = labels.length === 0 ? name : `${name}{${keys.map((k, j) => `${k}=${labels[j]}`).join(',')}}`;
      out.set(key, frame.values[i] as FrameValue);
    });
    return out;
  }

  async stop(): Promise<void> {
    await this.agent.stop();
  }
}

/** A counter's value as a number (tests stay far below 2^53). */
export function num(v: FrameValue | undefined): number {
  if (v === undefined) throw new Error('series missing');
  if (typeof v === 'object') throw new Error('not a counter');
  return Number(v);
}

export function hist(v: FrameValue | undefined): SparseHistogram {
  if (v === undefined || typeof v !== 'object') throw new Error('not a histogram');
  return v;
}

/** Sum of a counter over every series of `metric` whose labels include all of `match`. */
export function sumOf(values: Values, metric: string, match: Record<string, string> = {}): number {
  let sum = 0;
  for (const [key, v] of values) {
    if (key !== metric && !key.startsWith(`${metric}{`)) continue;
    if (!Object.entries(match).every(([k, val]) => key.includes(`${k}=${val}`))) continue;
    sum += num(v);
  }
  return sum;
}

/** The histogram of events between two reads. */
export function window(before: FrameValue | undefined, after: FrameValue | undefined): SparseHistogram {
  const d = subtract(hist(after), hist(before));
  if (d === undefined) throw new Error('histogram went backwards');
  return d;
}

export function count(h: SparseHistogram): number {
  return totalCount(h);
}

/** The q-quantile (bucket upper bound) as a number, or 0 for an empty histogram. */
export function quantile(h: SparseHistogram, q: number): number {
  const p = percentiles(h, [q]);
  return p === undefined ? 0 : Number(p[0]);
}

/** Runs a command to completion; rejects on a non-zero exit. */
export function run(cmd: string, args: readonly string[]): Promise<void> {
  return new Promise((resolve, reject) => {
    const child = spawn(cmd, args, { stdio: ['ignore', 'ignore', 'pipe'] });
    let err = '';
    child.stderr.on('data', (d: Buffer) => (err += d.toString()));
    child.on('error', reject);
    child.on('exit', (code) => (code === 0 ? resolve() : reject(new Error(`${cmd} exited ${code}: ${err}`))));
  });
}

/** Runs a Node snippet in a child process. */
export function node(script: string, args: readonly string[] = []): Promise<void> {
  return run(process.execPath, ['-e', script, ...args]);
}
