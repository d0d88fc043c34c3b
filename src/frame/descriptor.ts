import { createHash } from 'node:crypto';
import type { MetricDecl } from '../metrics/metric.js';
import type { Labels, Point } from '../metrics/point.js';
import type { Descriptor, DescriptorMetric } from './types.js';
import { FRAME_VERSION } from './types.js';

/** A descriptor together with its hash and the JSON text the hash was taken over. */
export interface EncodedDescriptor {
  readonly hash: string;
  readonly json: string;
  readonly descriptor: Descriptor;
}

/** Builds the descriptor of a reading's series (in point order) and content-addresses it. */
export function describe(sampler: string, points: readonly Point[]): EncodedDescriptor {
  const metrics: Record<string, DescriptorMetric> = {};
  const series: [string, string[]][] = [];
  for (const p of points) {
    const m = p.metric;
    metrics[m.name] ??= { kind: m.kind, unit: m.unit, labels: [...m.labels], description: m.description };
    series.push([m.name, m.labels.map((l) => p.labels[l] ?? '')]);
  }
  const sorted: Record<string, DescriptorMetric> = {};
  for (const name of Object.keys(metrics).sort()) sorted[name] = metrics[name] as DescriptorMetric;
  const descriptor: Descriptor = { v: FRAME_VERSION, sampler, metrics: sorted, series };
  const json = JSON.stringify(descriptor);
  return { hash: hashDescriptorJson(json), json, descriptor };
}

export function hashDescriptorJson(json: string): string {
  return createHash('sha256').update(json).digest('hex').slice(0, 16);
}

const KINDS = new Set(['counter', 'gauge', 'histogram']);

/** Parses and validates a descriptor read from the KV bucket; throws a plain Error naming the problem. */
export function parseDescriptor(json: string): Descriptor {
  const d = JSON.parse(json) as Partial<Descriptor>;
  if (typeof d !== 'object' || d === null) throw new Error('descriptor is not an object');
  if (d.v !== FRAME_VERSION) throw new Error(`descriptor version ${String(d.v)} is not supported`);
  if (typeof d.sampler !== 'string') throw new Error('descriptor has no sampler');
  if (typeof d.metrics !== 'object' || d.metrics === null) throw new Error('descriptor has no metrics');
  for (const [name, m] of Object.entries(d.metrics)) {
    if (typeof m !== 'object' || m === null || !KINDS.has(m.kind) || !Array.isArray(m.labels) || typeof m.unit !== 'string') {
      throw new Error(`descriptor metric "${name}" is malformed`);
    }
  }
  if (!Array.isArray(d.series)) throw new Error('descriptor has no series');
  for (const s of d.series) {
    const m = Array.isArray(s) && typeof s[0] === 'string' && Object.hasOwn(d.metrics, s[0]) ? d.metrics[s[0]] : undefined;
    if (m === undefined || !Array.isArray(s[1]) || s[1].length !== m.labels.length) {
      throw new Error(`descriptor series ${JSON.stringify(s)} does not match its metric`);
    }
  }
  return d as Descriptor;
}

/**
 * True when two readings have the same series in the same order, so the
 * previous descriptor still applies. Samplers reuse metric and label objects,
 * so the identity checks usually decide without comparing strings.
 */
export function sameLayout(a: readonly Point[], b: readonly Point[]): boolean {
  if (a.length !== b.length) return false;
  for (let i = 0; i < a.length; i++) {
    const p = a[i] as Point;
    const q = b[i] as Point;
    if (p.metric !== q.metric) return false;
    if (p.labels === q.labels) continue;
    for (const l of p.metric.labels) if (p.labels[l] !== q.labels[l]) return false;
  }
  return true;
}

/** A point's layout without its value: what sameLayout looks at. */
interface Shell {
  metric: MetricDecl;
  labels: Labels;
  readonly value: 0;
}

/**
 * The layout (metric and label objects, in order) of the points a descriptor
 * was last made from, for sameLayout's check of the next reading. It keeps no
 * reference to the reading itself: its values (a histogram's arrays among
 * them) would otherwise live for a whole interval, long enough at 1 Hz for V8
 * to move them to the old space, where they pile up until a full GC (12 of
 * the 26 kB a second the agent promoted at 1 Hz). A sampler that writes new
 * labels into the array it returned last time is seen to have changed too.
 */
export class LayoutMemo {
  readonly #shells: Shell[] = [];
  #remembered = false;

  /** True when `points` have the layout last remembered (false before the first). */
  matches(points: readonly Point[]): boolean {
    return this.#remembered && sameLayout(this.#shells, points);
  }

  /** Remembers the layout of `points`, reusing its own objects. */
  remember(points: readonly Point[]): void {
    const shells = this.#shells;
    for (let i = 0; i < points.length; i++) {
      const p = points[i] as Point;
      const s = shells[i];
      if (s === undefined) shells.push({ metric: p.metric, labels: p.labels, value: 0 });
      else {
        s.metric = p.metric;
        s.labels = p.labels;
      }
    }
    shells.length = points.length;
    this.#remembered = true;
  }
}
