import type { NatsConnection, Subscription } from '@nats-io/nats-core';
import type { Logger } from 'pino';
import { decodeFrame, FrameDecodeError, resolveFrame } from '../frame/codec.js';
import type { Frame } from '../frame/types.js';
import type { DescriptorCache } from './descriptors.js';
import { hostFilterSubjects, hostSelector, subjectHostToken, subjectMatches } from './subjects.js';

/** Why frames were left out; a consumer never crashes on a bad frame. */
export interface SkipStats {
  garbage: number;
  unknownDescriptor: number;
  invalid: number;
  /** the frame names another host or sampler than the subject it came on */
  wrongSubject: number;
}

export function emptySkipStats(): SkipStats {
  return { garbage: 0, unknownDescriptor: 0, invalid: 0, wrongSubject: 0 };
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
 * A message of a frame subject as a frame: decoded, resolved and checked
 * against its subject; undefined (and counted) when it cannot be used.
 */
export async function frameOnSubject(subject: string, data: Uint8Array, cache: DescriptorCache, skipped: SkipStats): Promise<Frame | undefined> {
  const frame = await frameFromMessage(data, cache, skipped);
  if (frame === undefined || subjectMatches(subject, frame.host, frame.sampler)) return frame;
  skipped.wrongSubject++;
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
  const subs: Subscription[] = subjects.map((subject) =>
    nc.subscribe(subject, {
      callback: (error, msg) => {
        if (error !== null) {
          log.error({ subject, error: String(error) }, 'subscription error');
          return;
        }
        if (selected !== undefined && !selected(subjectHostToken(msg.subject))) return;
        frameOnSubject(msg.subject, msg.data, cache, skipped).then(
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
