/**
 * Following frames live: core subscriptions of a host selection, each
 * message through a FrameIntake to the consumer.
 */
import type { NatsConnection, Subscription } from '@nats-io/nats-core';
import type { Logger } from 'pino';
import type { Frame, RawFrame } from '../frame/types.js';
import type { DescriptorCache } from './descriptors.js';
import { SeqGuard } from './order.js';
import { hostFilterSubjects, hostSelector, subjectHostToken } from './subjects.js';
import { decodeOnSubject, emptySkipStats, resolveRaw, resolveWith, type SkipStats } from './subscribe.js';

const EMPTY = new Uint8Array(0);

/** A message taken in, decoded and resolved or not yet. */
interface Slot {
  data: Uint8Array;
  frame: Frame | undefined;
  done: boolean;
}

/**
 * Where a live consumer's messages go: each is decoded, checked and resolved
 * (frameOnSubject, lookups of different messages running concurrently), then
 * handed to `onFrame` in arrival order per subject (one host and sampler): a
 * frame waiting for its descriptor from the bucket is not overtaken by a
 * later one whose descriptor is cached, which the order guard would then
 * drop and onFrame see go back in seq. Memory: one slot per message whose
 * lookup (or an earlier one of its subject) is still running.
 */
export class FrameIntake {
  readonly #queues = new Map<string, Slot[]>();
  readonly #guard = new SeqGuard();

  constructor(
    private readonly cache: DescriptorCache,
    private readonly skipped: SkipStats,
    /** a usable frame, and the message bytes it was decoded from */
    private readonly onFrame: (frame: Frame, data: Uint8Array) => void,
    private readonly log: Logger,
  ) {}

  take(subject: string, data: Uint8Array): void {
    let queue = this.#queues.get(subject);
    let raw: RawFrame | undefined;
    if (queue === undefined) {
      // The common case, without a promise: nothing of this subject waits, its descriptor is known.
      raw = decodeOnSubject(subject, data, this.skipped);
      if (raw === undefined) return;
      const known = this.cache.peek(raw.descriptor);
      if (known !== undefined) {
        const frame = resolveWith(raw, known, this.skipped);
        if (frame !== undefined) this.#use(frame, data);
        return;
      }
      queue = [];
      this.#queues.set(subject, queue);
    }
    const slot: Slot = { data, frame: undefined, done: false };
    queue.push(slot);
    const q = queue;
    const decoded = raw ?? decodeOnSubject(subject, data, this.skipped);
    const resolved = decoded === undefined ? Promise.resolve(undefined) : resolveRaw(decoded, this.cache, this.skipped);
    resolved
      .then(
        (frame) => {
          slot.frame = frame;
          // a message that is not used must not keep its socket read buffer alive while it waits its turn
          if (frame === undefined) slot.data = EMPTY;
        },
        (e: unknown) => this.log.error({ error: String(e) }, 'frame handling failed'),
      )
      .finally(() => {
        slot.done = true;
        this.#drain(subject, q);
      });
  }

  #use(frame: Frame, data: Uint8Array): void {
    if (!this.#guard.accept(frame)) {
      this.skipped.outOfOrder++;
      return;
    }
    try {
      this.onFrame(frame, data);
    } catch (e) {
      this.log.error({ error: String(e) }, 'frame handling failed');
    }
  }

  #drain(subject: string, queue: Slot[]): void {
    while (queue.length > 0 && (queue[0] as Slot).done) {
      const slot = queue.shift() as Slot;
      if (slot.frame !== undefined) this.#use(slot.frame, slot.data);
    }
    if (queue.length === 0) this.#queues.delete(subject);
  }
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
  const intake = new FrameIntake(cache, skipped, onFrame, log);
  const subs: Subscription[] = subjects.map((subject) =>
    nc.subscribe(subject, {
      callback: (error, msg) => {
        if (error !== null) {
          log.error({ subject, error: String(error) }, 'subscription error');
          return;
        }
        if (selected !== undefined && !selected(subjectHostToken(msg.subject))) return;
        intake.take(msg.subject, msg.data);
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
