/**
 * The checks every message of a frame subject goes through before a consumer
 * sees it, and the count of what they left out.
 */
import { decodeFrame, FrameDecodeError, resolveFrame } from '../frame/codec.js';
import type { Descriptor, Frame, RawFrame } from '../frame/types.js';
import type { SeqGuard } from './order.js';
import { subjectMatches } from '../bus/subjects.js';

/** Where the descriptors of frames are found: the bucket's cache (descriptors.ts) or an agent's snapshot (poll.ts). */
export interface DescriptorLookup {
  /** the descriptor of a hash already at hand, without I/O */
  peek(hash: string): Descriptor | undefined;
  /** the descriptor of a frame of `host`, or undefined when there is none or it is unusable */
  resolve(hash: string, host: string): Promise<Descriptor | undefined>;
}

/** Why frames were left out; a consumer never crashes on a bad frame. */
export interface SkipStats {
  /** not a frame: not msgpack, not a map, a header field missing or of the wrong type, an unknown version */
  garbage: number;
  /** the descriptor hash is malformed, not in the bucket, or its content is unusable */
  unknownDescriptor: number;
  /** the values do not fit the descriptor: count, kind, a bad histogram, a counter that is negative, fractional or not finite */
  invalid: number;
  /** the frame names another host or sampler than the subject it came on */
  wrongSubject: number;
  /** seq not above the last one used from the same agent run: a duplicate or a late frame (order.ts) */
  outOfOrder: number;
}

/** Each reason's name where people see it (the exporter's frames_skipped_total{reason}, record's summary), in the order the checks run. */
export const SKIP_REASONS: readonly (readonly [keyof SkipStats, string])[] = [
  ['garbage', 'garbage'],
  ['wrongSubject', 'wrong_subject'],
  ['unknownDescriptor', 'unknown_descriptor'],
  ['invalid', 'invalid'],
  ['outOfOrder', 'out_of_order'],
];

export function emptySkipStats(): SkipStats {
  return { garbage: 0, unknownDescriptor: 0, invalid: 0, wrongSubject: 0, outOfOrder: 0 };
}

/** Every skip counted, whatever the reason. */
export function totalSkipped(s: SkipStats): number {
  return s.garbage + s.unknownDescriptor + s.invalid + s.wrongSubject + s.outOfOrder;
}

/** A decoded frame with its descriptor found: typed and checked values, or undefined (counted invalid). */
export function resolveWith(raw: RawFrame, descriptor: Descriptor, skipped: SkipStats): Frame | undefined {
  try {
    return resolveFrame(raw, descriptor);
  } catch (error) {
    if (!(error instanceof FrameDecodeError)) throw error;
    skipped.invalid++;
    return undefined;
  }
}

/** A decoded frame with its descriptor looked up (counted unknown_descriptor when there is none) and resolved. */
export async function resolveRaw(raw: RawFrame, cache: DescriptorLookup, skipped: SkipStats): Promise<Frame | undefined> {
  const descriptor = await cache.resolve(raw.descriptor, raw.host);
  if (descriptor === undefined) {
    skipped.unknownDescriptor++;
    return undefined;
  }
  return resolveWith(raw, descriptor, skipped);
}

/** Decoded, and naming the host and sampler of `subjectOf(its sampler)`; undefined (and counted) otherwise. */
function decodeChecked(data: Uint8Array, skipped: SkipStats, subjectOf: (sampler: string) => string): RawFrame | undefined {
  let raw;
  try {
    raw = decodeFrame(data);
  } catch {
    skipped.garbage++;
    return undefined;
  }
  if (!subjectMatches(subjectOf(raw.sampler), raw.host, raw.sampler)) {
    skipped.wrongSubject++;
    return undefined;
  }
  return raw;
}

/**
 * The first checks of a message of a frame subject, without I/O: decoded,
 * and naming the host and sampler of its subject (before its descriptor is
 * looked up, so an impostor costs no bucket read); undefined (and counted)
 * when it fails one.
 */
export function decodeOnSubject(subject: string, data: Uint8Array, skipped: SkipStats): RawFrame | undefined {
  return decodeChecked(data, skipped, () => subject);
}

/**
 * A frame out of a bundle that came on `<prefix>_bundle` (prefix ending in
 * the host token and a dot): decodeOnSubject as if it had come alone on
 * `<prefix><its sampler>`, so a frame naming another host, or a sampler
 * that is not a subject token, is counted wrong_subject.
 */
export function decodeInBundle(prefix: string, data: Uint8Array, skipped: SkipStats): RawFrame | undefined {
  return decodeChecked(data, skipped, (sampler) => prefix + sampler);
}

/**
 * A message of a frame subject as a frame: decodeOnSubject, resolved, and
 * with a `guard`, checked to be newer than the frames of its run already
 * used; undefined (and counted) when it cannot be used. Checks happen in that
 * order and a frame is counted once, under the first reason that applies.
 */
export async function frameOnSubject(
  subject: string,
  data: Uint8Array,
  cache: DescriptorLookup,
  skipped: SkipStats,
  guard?: SeqGuard,
): Promise<Frame | undefined> {
  const raw = decodeOnSubject(subject, data, skipped);
  if (raw === undefined) return undefined;
  const frame = await resolveRaw(raw, cache, skipped);
  if (frame === undefined || guard === undefined || guard.accept(frame)) return frame;
  skipped.outOfOrder++;
  return undefined;
}
