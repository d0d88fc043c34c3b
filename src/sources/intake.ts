/**
 * Where every NATS source puts its messages: each is decoded, checked and
 * resolved (checks.ts), passed through the order guard (order.ts) and handed
 * to the consumer's handler. Live, replay and durable sources differ only in
 * what feeds take().
 */
import type { Logger } from 'pino';
import type { Frame, RawFrame } from '../frame/types.js';
import { bundleHostPrefix, isBundleSubject } from '../bus/subjects.js';
import { bundleFrames } from '../frame/bundle.js';
import { decodeInBundle, decodeOnSubject, resolveRaw, resolveWith, type DescriptorLookup, type SkipStats } from './checks.js';
import { SeqGuard } from './order.js';
import type { FrameHandler } from './source.js';

const EMPTY = new Uint8Array(0);

/** A message taken in, decoded and resolved or not yet. */
interface Slot {
  data: Uint8Array;
  frame: Frame | undefined;
  done: boolean;
  /** settles when the slot's frame was handed over (and the handler's promise settled) */
  handed: Deferred;
}

interface Deferred {
  readonly promise: Promise<void>;
  resolve(): void;
  reject(error: unknown): void;
}

function deferred(): Deferred {
  let resolve!: () => void;
  let reject!: (error: unknown) => void;
  const promise = new Promise<void>((res, rej) => {
    resolve = res;
    reject = rej;
  });
  return { promise, resolve, reject };
}

/**
 * Messages in, checked frames out, in arrival order per subject (one host
 * and sampler; a bundle's frames each count under their sampler's
 * subject): lookups of different messages run concurrently, but a frame
 * waiting for its descriptor from the bucket is not overtaken by a later one
 * of its subject whose descriptor is cached (the order guard would drop it
 * and the handler would see seqs go back). Memory: one slot per message
 * whose lookup (or an earlier one of its subject) is still running.
 *
 * take() returns undefined when the message was dealt with at once (used, or
 * counted as skipped) and the handler asked for no wait; otherwise a promise
 * that settles once the message was handed over and the handler's promise
 * settled. A caller that feeds one message at a time and awaits that promise
 * (replay, durable) gets stream order across subjects and the handler's pace;
 * a live subscription feeds without waiting.
 */
export class FrameIntake {
  readonly #queues = new Map<string, Slot[]>();
  readonly #guard = new SeqGuard();
  #closed = false;

  constructor(
    private readonly descriptors: DescriptorLookup,
    readonly skipped: SkipStats,
    private readonly onFrame: FrameHandler,
    private readonly log: Logger,
  ) {}

  take(subject: string, data: Uint8Array): Promise<void> | undefined {
    if (this.#closed) return undefined;
    if (isBundleSubject(subject)) return this.#takeBundle(subject, data);
    const raw = decodeOnSubject(subject, data, this.skipped);
    return raw === undefined ? undefined : this.#takeRaw(subject, data, raw);
  }

  /**
   * A bundle's frames, each taken as if it had come alone on its sampler's
   * subject of the bundle's host (a frame naming another host is counted
   * wrong_subject, one that is not a frame garbage, and the rest are used).
   * A bundle that is not an array of bin is counted garbage once.
   */
  #takeBundle(subject: string, data: Uint8Array): Promise<void> | undefined {
    let frames: Uint8Array[];
    try {
      frames = bundleFrames(data);
    } catch {
      this.skipped.garbage++;
      return undefined;
    }
    const prefix = bundleHostPrefix(subject);
    let waits: Promise<void>[] | undefined;
    for (const bytes of frames) {
      const raw = decodeInBundle(prefix, bytes, this.skipped);
      if (raw === undefined) continue;
      const wait = this.#takeRaw(prefix + raw.sampler, bytes, raw);
      if (wait !== undefined) (waits ??= []).push(wait);
    }
    if (waits === undefined) return undefined;
    return waits.length === 1 ? waits[0] : Promise.all(waits).then(() => undefined);
  }

  #takeRaw(subject: string, data: Uint8Array, raw: RawFrame): Promise<void> | undefined {
    let queue = this.#queues.get(subject);
    if (queue === undefined) {
      // The common case, without a promise: nothing of this subject waits, its descriptor is known.
      const known = this.descriptors.peek(raw.descriptor);
      if (known !== undefined) {
        const frame = resolveWith(raw, known, this.skipped);
        return frame === undefined ? undefined : this.#use(frame, data);
      }
      queue = [];
      this.#queues.set(subject, queue);
    }
    const slot: Slot = { data, frame: undefined, done: false, handed: deferred() };
    queue.push(slot);
    const q = queue;
    resolveRaw(raw, this.descriptors, this.skipped)
      .then(
        (frame) => {
          slot.frame = frame;
          // a message that is not used must not keep its socket read buffer alive while it waits its turn
          if (frame === undefined) slot.data = EMPTY;
        },
        (error: unknown) => this.log.error({ err: error }, 'frame handling failed'),
      )
      .finally(() => {
        slot.done = true;
        this.#drain(subject, q);
      });
    return slot.handed.promise;
  }

  /** Takes nothing more: messages still waiting for a descriptor are dropped, not handed over. */
  close(): void {
    this.#closed = true;
  }

  #use(frame: Frame, data: Uint8Array): Promise<void> | undefined {
    if (this.#closed) return undefined;
    if (!this.#guard.accept(frame)) {
      this.skipped.outOfOrder++;
      return undefined;
    }
    const wait = this.onFrame(frame, data);
    return wait instanceof Promise ? wait : undefined;
  }

  #drain(subject: string, queue: Slot[]): void {
    while (queue.length > 0 && (queue[0] as Slot).done) {
      const slot = queue.shift() as Slot;
      let wait: Promise<void> | undefined;
      try {
        wait = slot.frame === undefined ? undefined : this.#use(slot.frame, slot.data);
      } catch (error) {
        slot.handed.reject(error);
        continue;
      }
      if (wait === undefined) slot.handed.resolve();
      else wait.then(() => slot.handed.resolve(), (error: unknown) => slot.handed.reject(error));
    }
    if (queue.length === 0) this.#queues.delete(subject);
  }
}
