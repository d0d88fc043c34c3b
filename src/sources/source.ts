/**
 * The one way in for a consumer of frames (exporter, recorder, hindsight,
 * and the viewer and alert evaluator to come): pick a FrameSource, hand it a
 * FrameHandler, await `done`. Every source owns its connection handling, the
 * descriptor lookups, the checks of each message (checks.ts), the order and
 * seq guard (order.ts) and the count of what it left out (SkipStats); what
 * reaches the handler is a checked frame with the bytes it was decoded from.
 *
 * Four kinds, told apart only by where messages come from:
 * - live.ts: core subscriptions of a host selection (no history);
 * - replay.ts: an ordered consumer over a past window of the stream;
 * - durable.ts: a durable pull consumer whose batches are acked only after
 *   the consumer's ledger commits them (a recording that survives a kill);
 * - poll.ts: an agent's HTTP snapshot endpoint, no NATS at all.
 * The three NATS kinds feed messages through the same FrameIntake.
 */
import type { Frame } from '../frame/types.js';
import type { SkipStats } from './checks.js';

/**
 * Takes one checked frame. A returned promise holds back the sources that
 * can wait (replay, durable, poll: a consumer that is behind paces the read);
 * a live subscription cannot wait and does not.
 */
export type FrameHandler = (frame: Frame, data: Uint8Array) => Promise<void> | void;

export type SourceKind = 'live' | 'replay' | 'durable' | 'poll';

export interface FrameSource {
  readonly kind: SourceKind;
  /** messages left out so far, by reason; the same object for the source's life */
  readonly skipped: SkipStats;
  /**
   * Connects (or borrows a connection), finds the descriptors and begins to
   * hand frames to `onFrame`; resolves once frames flow, rejects when the
   * source cannot start (and then holds nothing open). Called once.
   */
  start(onFrame: FrameHandler): Promise<void>;
  /** Ends the source; no frame is handed to the handler once `done` has resolved. */
  stop(): void;
  /**
   * Resolves when the source has ended: stopped, or at the end of what it
   * reads (a replayed window, a durable recording's end); rejects when it
   * failed on the way (what was handed over stays handed over).
   */
  readonly done: Promise<void>;
}

/** Thrown inside a source's start() when stop() came meanwhile: start() then ends quietly. */
export class SourceStopped extends Error {
  override readonly name = 'SourceStopped';
}
