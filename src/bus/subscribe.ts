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
  const descriptor = await cache.resolve(raw.descriptor, raw.host);
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

const EMPTY = new Uint8Array(0);

/** A message of a live subscription, decoded and resolved or not yet. */
interface Slot {
  data: Uint8Array;
  frame: Frame | undefined;
  done: boolean;
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
  // Frames of one subject (one host and sampler) are used in arrival order: a frame waiting
  // for its descriptor from the bucket is not overtaken by a later one whose descriptor is
  // cached (the guard would drop it as out of order, and onFrame would see seqs go back).
  // Lookups still run concurrently: each subject holds its frames until those before it are done.
  const queues = new Map<string, Slot[]>();
  const drain = (key: string, queue: Slot[]): void => {
    while (queue.length > 0 && (queue[0] as Slot).done) {
      const slot = queue.shift() as Slot;
      if (slot.frame === undefined) continue;
      if (!guard.accept(slot.frame)) {
        skipped.outOfOrder++;
        continue;
      }
      try {
        onFrame(slot.frame, slot.data);
      } catch (e) {
        log.error({ error: String(e) }, 'frame handling failed');
      }
    }
    if (queue.length === 0) queues.delete(key);
  };
  const subs: Subscription[] = subjects.map((subject) =>
    nc.subscribe(subject, {
      callback: (error, msg) => {
        if (error !== null) {
          log.error({ subject, error: String(error) }, 'subscription error');
          return;
        }
        if (selected !== undefined && !selected(subjectHostToken(msg.subject))) return;
        const slot: Slot = { data: msg.data, frame: undefined, done: false };
        const queue = queues.get(msg.subject) ?? [];
        if (queue.length === 0) queues.set(msg.subject, queue);
        queue.push(slot);
        frameOnSubject(msg.subject, msg.data, cache, skipped)
          .then(
            (frame) => {
              slot.frame = frame;
              // a message that is not used must not keep its socket read buffer alive while it waits its turn
              if (frame === undefined) slot.data = EMPTY;
            },
            (e: unknown) => log.error({ error: String(e) }, 'frame handling failed'),
          )
          .finally(() => {
            slot.done = true;
            drain(msg.subject, queue);
          });
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
