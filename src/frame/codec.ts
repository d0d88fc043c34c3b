import { Unpackr } from 'msgpackr';
import type { SparseHistogram } from '../metrics/histogram.js';
import type { MetricKind } from '../metrics/metric.js';
import type { Descriptor, Frame, FrameValue, RawFrame } from './types.js';
import { FRAME_VERSION } from './types.js';
import { msgpackProblem } from './msgpack-check.js';
import { H2_BUCKETS } from '../metrics/histogram.js';

export { encodeFrame, type FrameHeader } from './encode.js';

// Plain msgpack: no records, no shared structures (encode.ts writes frames so), so any msgpack reader decodes it.
const unpackr = new Unpackr({ useRecords: false, mapsAsObjects: true });

const MAX_SAFE = BigInt(Number.MAX_SAFE_INTEGER);
const U64_MAX = 2n ** 64n - 1n;
const I64_MIN_BIG = -(2n ** 63n);
/** Containers a frame nests: the map, its values, a histogram pair, its index array; a few more for later versions. */
const MAX_DEPTH = 8;

/**
 * Thrown for bytes that are not a frame of a known layout, and for values
 * that do not fit their descriptor; the only error decodeFrame and
 * resolveFrame throw, whatever the bytes.
 */
export class FrameDecodeError extends Error {
  override readonly name = 'FrameDecodeError';
  readonly code = 'FRAME_DECODE';
}

function asBigInt(v: unknown, field: string): bigint {
  if (typeof v === 'bigint') return v;
  if (typeof v === 'number' && Number.isSafeInteger(v) && v >= 0) return BigInt(v);
  throw new FrameDecodeError(`frame field "${field}" is not an unsigned integer`);
}

function asUint(v: unknown, field: string): number {
  if (typeof v === 'number' && Number.isSafeInteger(v) && v >= 0) return v;
  if (typeof v === 'bigint' && v >= 0n && v <= BigInt(Number.MAX_SAFE_INTEGER)) return Number(v);
  throw new FrameDecodeError(`frame field "${field}" is not an unsigned integer`);
}

function asString(v: unknown, field: string): string {
  if (typeof v === 'string' && v !== '') return v;
  throw new FrameDecodeError(`frame field "${field}" is not a string`);
}

/** Decodes the envelope of a frame; values stay raw until a descriptor resolves them. */
export function decodeFrame(bytes: Uint8Array): RawFrame {
  const problem = msgpackProblem(bytes, MAX_DEPTH);
  if (problem !== undefined) throw new FrameDecodeError(`not msgpack: ${problem}`);
  let o: unknown;
  try {
    o = unpackr.unpack(bytes);
  } catch (error) {
    throw new FrameDecodeError('not msgpack', { cause: error });
  }
  if (typeof o !== 'object' || o === null || Array.isArray(o)) throw new FrameDecodeError('frame is not a map');
  const f = o as Record<string, unknown>;
  const v = asUint(f.v, 'v');
  if (v !== FRAME_VERSION) throw new FrameDecodeError(`frame version ${v} is not supported`);
  if (!Array.isArray(f.x)) throw new FrameDecodeError('frame field "x" is not an array');
  const beginNs = asBigInt(f.b, 'b');
  const endNs = asBigInt(f.e, 'e');
  if (beginNs > endNs) throw new FrameDecodeError('frame window begins after it ends');
  return {
    v,
    host: asString(f.h, 'h'),
    sampler: asString(f.s, 's'),
    instance: asUint(f.i, 'i'),
    seq: asUint(f.q, 'q'),
    beginNs,
    endNs,
    descriptor: asString(f.d, 'd'),
    values: f.x,
    ...(f.l === true ? { last: true } : {}),
  };
}

/** A gauge: any finite number, or an integer of the 64-bit range (a bigint beyond 2^53). */
function scalar(v: unknown): number | bigint | undefined {
  if (typeof v === 'number') return Number.isFinite(v) ? v : undefined;
  if (typeof v === 'bigint') {
    if (v >= -MAX_SAFE && v <= MAX_SAFE) return Number(v);
    return v >= I64_MIN_BIG && v <= U64_MAX ? v : undefined;
  }
  return undefined;
}

/** A counter: a non-negative integer below 2^64 (NaN, infinities, fractions and negatives are not counts). */
function counter(v: unknown): number | bigint | undefined {
  if (typeof v === 'number') return Number.isSafeInteger(v) && v >= 0 ? v : undefined;
  if (typeof v === 'bigint') {
    if (v < 0n || v > U64_MAX) return undefined;
    return v <= MAX_SAFE ? Number(v) : v;
  }
  return undefined;
}

/**
 * A histogram: [index[], count[]] of equal length (at most 496), indexes
 * integers in 0..495 strictly increasing, counts safe integers above zero
 * (only non-empty buckets are sent).
 */
function histogram(v: unknown): SparseHistogram | undefined {
  if (!Array.isArray(v) || v.length !== 2 || !Array.isArray(v[0]) || !Array.isArray(v[1])) return undefined;
  const index = v[0] as unknown[];
  const rawCount = v[1] as unknown[];
  if (index.length !== rawCount.length || index.length > H2_BUCKETS) return undefined;
  const count: number[] = new Array<number>(rawCount.length);
  let last = -1;
  for (let i = 0; i < index.length; i++) {
    const ix = index[i];
    const c = counter(rawCount[i]);
    if (typeof ix !== 'number' || !Number.isInteger(ix) || ix <= last || ix >= H2_BUCKETS) return undefined;
    if (typeof c !== 'number' || c === 0) return undefined;
    last = ix;
    count[i] = c;
  }
  return { groupingPower: 3, maxValuePower: 64, index: index as number[], count };
}

const KINDS = new WeakMap<Descriptor, readonly (MetricKind | undefined)[]>();

/** The kind of each series of a descriptor, worked out once per descriptor object. */
function kindsOf(d: Descriptor): readonly (MetricKind | undefined)[] {
  let kinds = KINDS.get(d);
  if (kinds === undefined) {
    kinds = d.series.map(([name]) => (Object.hasOwn(d.metrics, name) ? d.metrics[name]?.kind : undefined));
    KINDS.set(d, kinds);
  }
  return kinds;
}

/**
 * Types a raw frame's values against its descriptor. Throws FrameDecodeError
 * when the value count differs or a value does not match its metric's kind:
 * a consumer skips the frame rather than show a wrong value.
 */
export function resolveFrame(raw: RawFrame, descriptor: Descriptor): Frame {
  const kinds = kindsOf(descriptor);
  if (descriptor.sampler !== raw.sampler) {
    throw new FrameDecodeError(`frame of sampler ${raw.sampler} names descriptor ${raw.descriptor} of sampler ${descriptor.sampler}`);
  }
  if (raw.values.length !== descriptor.series.length) {
    throw new FrameDecodeError(
      `frame has ${raw.values.length} values, descriptor ${raw.descriptor} has ${descriptor.series.length} series`,
    );
  }
  const values: FrameValue[] = new Array<FrameValue>(raw.values.length);
  for (let i = 0; i < raw.values.length; i++) {
    const kind = kinds[i];
    const v = raw.values[i];
    const value = kind === 'histogram' ? histogram(v) : kind === 'counter' ? counter(v) : kind === 'gauge' ? scalar(v) : undefined;
    if (value === undefined) {
      const name = (descriptor.series[i] as readonly [string, readonly string[]])[0];
      throw new FrameDecodeError(`value ${i} (${name}) is not a valid ${String(kind)}`);
    }
    values[i] = value;
  }
  return {
    host: raw.host,
    sampler: raw.sampler,
    instance: raw.instance,
    seq: raw.seq,
    beginNs: raw.beginNs,
    endNs: raw.endNs,
    descriptorHash: raw.descriptor,
    descriptor,
    ...(raw.last === true ? { last: true } : {}),
    values,
  };
}
