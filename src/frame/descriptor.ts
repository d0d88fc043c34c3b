import { createHash } from 'node:crypto';
import type { Point } from '../metrics/point.js';
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
