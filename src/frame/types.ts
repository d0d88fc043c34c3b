import type { MetricKind, Unit } from '../metrics/metric.js';
import type { SparseHistogram } from '../metrics/histogram.js';

/** Version of the frame and descriptor layout; bumped on an incompatible change. */
export const FRAME_VERSION = 1;

/** A metric family as the descriptor carries it (the wire form of MetricDecl). */
export interface DescriptorMetric {
  readonly kind: MetricKind;
  readonly unit: Unit;
  readonly labels: readonly string[];
  readonly description: string;
}

/**
 * The immutable, content-addressed description of a frame's values: the
 * i-th value of a frame is series[i]. Stored as JSON in the descriptor KV
 * bucket under its hash.
 */
export interface Descriptor {
  readonly v: number;
  readonly sampler: string;
  /** metric name -> declaration, keys sorted */
  readonly metrics: Readonly<Record<string, DescriptorMetric>>;
  /** [metric name, label values in the metric's label order] */
  readonly series: readonly (readonly [string, readonly string[]])[];
}

/** A series value after decoding: counters and gauges are numbers or bigints. */
export type FrameValue = number | bigint | SparseHistogram;

/**
 * An agent run's instance id as people read it: 8 lower-case hex digits
 * (`0a1b2c3d`), in logs, the status KV, the agent's /metrics/json and the
 * Nats-Msg-Id. On the wire (the frame's `i`) it stays a uint32.
 */
export function instanceHex(instance: number): string {
  return instance.toString(16).padStart(8, '0');
}

/** A frame after decoding, before its descriptor is resolved. */
export interface RawFrame {
  readonly v: number;
  readonly host: string;
  readonly sampler: string;
  /** random id of the agent run that produced the frame */
  readonly instance: number;
  /** per (instance, sampler) sequence, starting at 1 */
  readonly seq: number;
  /** acquisition window, unix nanoseconds */
  readonly beginNs: bigint;
  readonly endNs: bigint;
  /** descriptor hash (16 hex digits) */
  readonly descriptor: string;
  /** raw wire values; histograms still in [index[], count[]] form */
  readonly values: readonly unknown[];
  /** the last frame of its agent run: the agent stopped cleanly after it */
  readonly last?: boolean;
}

/** A frame with its descriptor resolved and its values typed. */
export interface Frame {
  readonly host: string;
  readonly sampler: string;
  readonly instance: number;
  readonly seq: number;
  readonly beginNs: bigint;
  readonly endNs: bigint;
  readonly descriptorHash: string;
  readonly descriptor: Descriptor;
  readonly values: readonly FrameValue[];
  /** the last frame of its agent run: the agent stopped cleanly after it */
  readonly last?: boolean;
}
