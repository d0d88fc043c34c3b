import type { Descriptor, DescriptorMetric, Frame, FrameValue } from '../../src/frame/types.js';
import { FRAME_VERSION } from '../../src/frame/types.js';
import { hashDescriptorJson } from '../../src/frame/descriptor.js';
import { encodeFrame } from '../../src/frame/codec.js';
import type { SparseHistogram } from '../../src/metrics/histogram.js';
import type { MetricKind, Unit } from '../../src/metrics/metric.js';

export const SECOND = 1_000_000_000n;
/** 2025-01-01T00:00:00Z in unix ns, the start of the test timeline */
export const T0 = 1_735_689_600n * SECOND;

/** A descriptor metric in one call: `m('counter', 'nanoseconds', ['state'], 'CPU time')`. */
export function m(kind: MetricKind, unit: Unit, labels: readonly string[], description: string): DescriptorMetric {
  return { kind, unit, labels, description };
}

/** A descriptor built by hand (no validation, so tests can make hostile ones). */
export function makeDescriptor(
  sampler: string,
  metrics: Record<string, DescriptorMetric>,
  series: readonly (readonly [string, readonly string[]])[],
): Descriptor {
  return { v: FRAME_VERSION, sampler, metrics, series };
}

export interface FrameSpec {
  readonly host: string;
  readonly descriptor: Descriptor;
  readonly values: readonly FrameValue[];
  readonly seq?: number;
  readonly instance?: number;
  /** end of the acquisition window; default T0 + seq seconds */
  readonly endNs?: bigint;
  /** default: the hash of the descriptor's JSON, as the agent makes it */
  readonly hash?: string;
}

export function makeFrame(spec: FrameSpec): Frame {
  const seq = spec.seq ?? 1;
  const endNs = spec.endNs ?? T0 + BigInt(seq) * SECOND;
  return {
    host: spec.host,
    sampler: spec.descriptor.sampler,
    instance: spec.instance ?? 1,
    seq,
    beginNs: endNs - 1_000n,
    endNs,
    descriptorHash: spec.hash ?? hashDescriptorJson(JSON.stringify(spec.descriptor)),
    descriptor: spec.descriptor,
    values: spec.values,
  };
}

/** A g=3, m=64 sparse histogram literal from [index, count] pairs. */
export function h(...buckets: readonly (readonly [number, number])[]): SparseHistogram {
  return {
    groupingPower: 3,
    maxValuePower: 64,
    index: buckets.map(([i]) => i),
    count: buckets.map(([, c]) => c),
  };
}

/** The message bytes an agent would publish for `f` (its values as the wire carries them). */
export function frameBytes(f: Frame): Uint8Array {
  const header = { host: f.host, sampler: f.sampler, instance: f.instance, seq: f.seq, beginNs: f.beginNs, endNs: f.endNs, descriptor: f.descriptorHash };
  return encodeFrame(header, f.values);
}
