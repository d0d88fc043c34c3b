import type { NatsConnection, Subscription } from '@nats-io/nats-core';
import type { Logger } from 'pino';
import { decodeFrame, FrameDecodeError, resolveFrame } from '../frame/codec.js';
import type { Frame, RawFrame } from '../frame/types.js';
import type { DescriptorCache } from './descriptors.js';
import { SeqGuard } from './order.js';
import { hostFilterSubjects, hostSelector, subjectHostToken, subjectMatches } from './subjects.js';

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

export function emptySkipStats(): SkipStats {
  return { garbage: 0, unknownDescriptor: 0, invalid: 0, wrongSubject: 0, outOfOrder: 0 };
}

/** Every skip counted, whatever the reason. */
export function totalSkipped(s: SkipStats): number {
  return s.garbage + s.unknownDescriptor + s.invalid + s.wrongSubject + s.outOfOrder;
}

/** Decodes and resolves one message; undefined (and counted) when it cannot be used. */
export async function frameFromMessage(data: Uint8Array, cache: DescriptorCache, skipped: SkipStats): Promise<Frame | undefined> {
  let raw;
  try {
    raw = decodeFrame(data);
  } catch {
    skipped.garbage++;
    return undefined;
  }
  return resolveRaw(raw, cache, skipped);
}

async function resolveRaw(raw: RawFrame, cache: DescriptorCache, skipped: SkipStats): Promise<Frame | undefined> {
  const descriptor = await cache.resolve(raw.descriptor);
  if (descriptor === undefined) {
    skipped.unknownDescriptor++;
    return undefined;
  }
  try {
    return resolveFrame(raw, descriptor);
  } catch (error) {
    if (!(error instanceof FrameDecodeError)) throw error;
    skipped.invalid++;
    return undefined;
  }
}

/**
 * A message of a frame subject as a frame: decoded, checked against its
 * subject (before its descriptor is looked up, so an impostor costs no
 * bucket read), resolved, and with a `guard`, checked to be newer than the
 * frames of its run already used; undefined (and counted) when it cannot be
 * used. Checks happen in that order and a frame is counted once, under the
 * first reason that applies.
 */
export async function frameOnSubject(
  subject: string,
  data: Uint8Array,
  cache: DescriptorCache,
  skipped: SkipStats,
  guard?: SeqGuard,
): Promise<Frame | undefined> {
  let raw;
  try {
    raw = decodeFrame(data);
  } catch {
    skipped.garbage++;
    return undefined;
  }
  if (!subjectMatches(subject, raw.host, raw.sampler)) {
    skipped.wrongSubject++;
    return undefined;
  }
  const frame = await resolveRaw(raw, cache, skipped);
  if (frame === undefined || guard === undefined || guard.accept(frame)) return frame;
  skipped.outOfOrder++;
  return undefined;
}

export interface LiveSubscription {
  readonly subjects: readonly string[];
  readonly skipped: SkipStats;
  close(): Promise<void>;
}

/**
 * Follows frames live (core subscriptions, no replay) for a host selection:
 * `*` for the fleet or a comma-separated list of hosts and globs (`web-*`).
 */
export function subscribeFrames(
  nc: NatsConnection,
  hosts: string,
  cache: DescriptorCache,
  /** a usable frame, and the message bytes it was decoded from */
  onFrame: (frame: Frame, data: Uint8Array) => void,
  log: Logger,
  skipped: SkipStats = emptySkipStats(),
): LiveSubscription {
  const subjects = hostFilterSubjects(hosts);
  const selected = hostSelector(hosts);
  const guard = new SeqGuard();
  let tail: Promise<unknown> = Promise.resolve();
  const subs: Subscription[] = subjects.map((subject) =>
    nc.subscribe(subject, {
      callback: (error, msg) => {
        if (error !== null) {
          log.error({ subject, error: String(error) }, 'subscription error');
          return;
        }
        if (selected !== undefined && !selected(subjectHostToken(msg.subject))) return;
        // In arrival order, one after the other: a frame waiting for its descriptor from the
        // bucket must not be overtaken by a later frame of its sampler whose descriptor is
        // cached (the guard would then drop it as out of order, and onFrame see seqs go back).
        tail = tail
          .then(() => frameOnSubject(msg.subject, msg.data, cache, skipped, guard))
          .then(
            (frame) => frame !== undefined && onFrame(frame, msg.data),
            (e: unknown) => log.error({ error: String(e) }, 'frame handling failed'),
          );
      },
    }),
  );
  return {
    subjects,
    skipped,
    async close() {
      for (const s of subs) s.unsubscribe();
      await Promise.resolve();
    },
  };
}
