import { JetStreamApiError, type ApiError } from '@nats-io/jetstream';
import { createInbox, headers, type Msg, type NatsConnection, type Subscription } from '@nats-io/nats-core';
import { NoStreamError, PublishRefusedError } from '../errors.js';
import { AckTimeout } from './ack-timeout.js';
import { publishFailure } from './api-errors.js';
import { inboxPrefixOf, onPublishRefused } from './connect.js';

/** What JetStream answers to a publish: `{stream, seq, duplicate?}` or `{error: {code, err_code, description}}`. */
interface PubAckJson {
  readonly stream?: string;
  readonly seq?: number;
  readonly duplicate?: boolean;
  readonly error?: ApiError;
}

export interface PubAck {
  readonly seq: number;
  readonly duplicate: boolean;
}

/** A publish that timed out, kept a while for its late ack. */
interface Overdue {
  readonly subject: string;
  /** performance.now() */
  readonly sentAt: number;
  readonly onLate: ((ack: PubAck) => void) | undefined;
}

interface Pending {
  readonly onLate: ((ack: PubAck) => void) | undefined;
  readonly subject: string;
  readonly bytes: number;
  readonly resolve: (ack: PubAck) => void;
  readonly reject: (error: Error) => void;
  /** performance.now(), as the deadline: the monotonic clock */
  readonly sentAt: number;
  readonly deadline: number;
}

/** sweeps fall on whole seconds of the wall clock (plus SWEEP_LAG_MS), unless a deadline comes first */
const SWEEP_ALIGN_MS = 1000;
/** after the agent's tick (set 1 ms past the boundary), so that both run in one wake-up */
const SWEEP_LAG_MS = 2;

/**
 * JetStream publish without the client's request machinery (a timer, an
 * error object and a header parse per message): a core publish with
 * Nats-Msg-Id and a reply subject under one inbox, one subscription for all
 * acks, one sweep timer for timeouts. Same semantics as js.publish with
 * msgID: the ack says stored (or duplicate), anything else is an error the
 * caller retries with the same id, except a PublishRefusedError (the
 * server's permissions refused the subject, and no ack will ever come) and
 * a MessageTooLargeError (above the server's max_payload or the stream's
 * max_msg_size). A NoStreamError (503, no stream captures the subject) is
 * retried too, and tells the caller the stream is gone; another error the
 * stream answers with is a JetStreamApiError.
 * The reply inbox uses the connection's inbox prefix, so a per-host user
 * needs to subscribe only to `<prefix>.>`.
 * The timeout adapts to how long acks take (AckTimeout, never below the
 * configured one): an ack arriving after its publish timed out is not used
 * (the caller has retried with the same id) but still counts as a sample.
 */
export class AckedPublisher {
  private readonly inbox: string;
  private readonly pending = new Map<number, Pending>();
  /** publishes that timed out: a late ack still tells how slow the server is, and that the message was stored */
  private readonly overdue = new Map<number, Overdue>();
  private readonly timeout: AckTimeout;
  private readonly sub: Subscription;
  /** set while a publish waits for its ack or a timed-out one for a late ack: none between an agent's ticks */
  private sweeper: NodeJS.Timeout | undefined;
  private sweepAt = Number.POSITIVE_INFINITY;
  private closed = false;
  private readonly stopRefusals: () => void;
  private nextId = 1;

  constructor(
    private readonly nc: NatsConnection,
    timeoutMs: number,
  ) {
    this.timeout = new AckTimeout(timeoutMs);
    this.inbox = createInbox(inboxPrefixOf(nc));
    this.sub = nc.subscribe(`${this.inbox}.*`, { callback: (_error, msg) => this.onAck(msg) });
    this.stopRefusals = onPublishRefused(nc, (subject, error) => this.onRefused(subject, error));
    void this.watchDisconnects();
  }

  /**
   * A publish in flight when the connection drops gets no ack (replies to
   * the old connection are lost): it fails at once, so that the caller
   * retries after the reconnect instead of waiting out a timeout that a slow
   * server may have raised to tens of seconds.
   */
  private async watchDisconnects(): Promise<void> {
    for await (const s of this.nc.status()) {
      if (s.type !== 'disconnect') continue;
      const pending = [...this.pending.values()];
      this.pending.clear();
      this.disarmWhenIdle();
      for (const p of pending) p.reject(new Error('disconnected from NATS before the publish ack'));
    }
  }

  /**
   * Publishes with Nats-Msg-Id and resolves with the ack. When the ack comes
   * after the timeout rejected the promise, `onLate` gets it (within
   * 2 × the longest timeout): the message was stored after all, and a caller
   * that has not sent it again yet need not.
   */
  publish(subject: string, data: Uint8Array, msgId: string, onLate?: (ack: PubAck) => void): Promise<PubAck> {
    // after close() no sweep is set and no ack is listened for: it would wait forever
    if (this.closed) return Promise.reject(new Error('publisher closed'));
    const id = this.nextId++;
    return new Promise<PubAck>((resolve, reject) => {
      const h = headers();
      h.set('Nats-Msg-Id', msgId);
      try {
        this.nc.publish(subject, data, { reply: `${this.inbox}.${id}`, headers: h });
      } catch (error) {
        // the client's own checks (max_payload), or a closed connection
        reject(asError(publishFailure(error, subject, data.byteLength)));
        return;
      }
      const now = performance.now();
      const deadline = now + this.timeout.ms;
      this.pending.set(id, { subject, bytes: data.byteLength, resolve, reject, onLate, sentAt: now, deadline });
      this.arm(deadline);
    });
  }

  /** How long a publish sent now waits for its ack. */
  get timeoutMs(): number {
    return this.timeout.ms;
  }

  close(): void {
    this.closed = true;
    this.stopSweep();
    this.stopRefusals();
    this.sub.unsubscribe();
    for (const p of this.pending.values()) p.reject(new Error('publisher closed'));
    this.pending.clear();
    this.overdue.clear();
  }

  private onAck(msg: Msg): void {
    const id = Number(msg.subject.slice(this.inbox.length + 1));
    const p = this.pending.get(id);
    if (p === undefined) {
      // timed out: the caller retries with the same msg id, unless this late ack says it was stored
      const late = this.overdue.get(id);
      if (late !== undefined) {
        this.overdue.delete(id);
        this.disarmWhenIdle();
        this.timeout.sample(performance.now() - late.sentAt);
        const ack = readAck(msg, late.subject, 0);
        if (!(ack instanceof Error)) late.onLate?.(ack);
      }
      return;
    }
    this.pending.delete(id);
    this.disarmWhenIdle();
    this.timeout.sample(performance.now() - p.sentAt);
    const ack = readAck(msg, p.subject, p.bytes);
    if (ack instanceof Error) p.reject(ack);
    else p.resolve(ack);
  }


  /** The server refuses in publish order, one error per publish: the oldest pending one to that subject is it. */
  private onRefused(subject: string, error: Error): void {
    for (const [id, p] of this.pending) {
      if (p.subject !== subject) continue;
      this.pending.delete(id);
      this.disarmWhenIdle();
      p.reject(new PublishRefusedError(subject, { cause: error }));
      return;
    }
  }

  /**
   * Sets the sweep for `deadline` (a new publish's) or the next whole second
   * of the wall clock, whichever comes first, unless one is set sooner. A
   * sweep finds what has waited past its deadline, and sets the next while
   * anything waits. On the whole second an agent's tick wakes the process
   * anyway: a sweep of its own between ticks woke it 3 times a second at
   * 1 Hz, each wake-up ~0.2 ms of CPU on a VM, and a timer cleared when the
   * acks come back still wakes it (node keeps the loop's timer for the
   * earliest time ever set; test/bench/README.md, "wake-ups").
   */
  private arm(deadline: number): void {
    if (this.closed) return;
    // deadlines on the monotonic clock (a wall clock stepped back must not hold timeouts off);
    // the whole second on the wall clock, where the agent's ticks are
    const now = performance.now();
    const wall = Date.now();
    const at = Math.min(deadline, now + SWEEP_ALIGN_MS - (wall % SWEEP_ALIGN_MS) + SWEEP_LAG_MS);
    if (this.sweeper !== undefined && this.sweepAt <= at) return;
    clearTimeout(this.sweeper);
    this.sweepAt = at;
    // +1: the sweep must not come before the deadline (node counts timers in whole milliseconds)
    this.sweeper = setTimeout(() => this.onSweep(), Math.max(1, Math.ceil(at - now) + 1));
    this.sweeper.unref();
  }

  private onSweep(): void {
    this.sweeper = undefined;
    this.sweepAt = Number.POSITIVE_INFINITY;
    const next = this.sweep();
    if (this.waiting) this.arm(next);
  }

  /** a publish waits for its ack, or a timed-out one for a late ack */
  private get waiting(): boolean {
    return this.pending.size > 0 || this.overdue.size > 0;
  }

  private disarmWhenIdle(): void {
    if (!this.waiting) this.stopSweep();
  }

  private stopSweep(): void {
    clearTimeout(this.sweeper);
    this.sweeper = undefined;
    this.sweepAt = Number.POSITIVE_INFINITY;
  }

  /** Rejects what waited past its deadline; returns the earliest deadline left (Infinity: none). */
  private sweep(): number {
    const now = performance.now();
    let next = Number.POSITIVE_INFINITY;
    for (const [id, p] of this.pending) {
      if (p.deadline > now) {
        if (p.deadline < next) next = p.deadline;
        continue;
      }
      this.pending.delete(id);
      this.overdue.set(id, { subject: p.subject, sentAt: p.sentAt, onLate: p.onLate });
      p.reject(new Error(`no publish ack within ${Math.round(p.deadline - p.sentAt)} ms`));
    }
    // a late ack older than the longest timeout says nothing more; ids grow, so the oldest come first
    for (const [id, late] of this.overdue) {
      if (now - late.sentAt <= 2 * this.timeout.ceilingMs) break;
      this.overdue.delete(id);
    }
    return next;
  }
}

/** A publish ack, or the error it stands for. */
function readAck(msg: Msg, subject: string, bytes: number): PubAck | Error {
  // A status message without payload (503 no responders: no stream captures the subject).
  if (msg.data.length === 0) {
    if (msg.headers?.code === 503) return new NoStreamError(subject);
    return new Error(`no ack: status ${msg.headers?.code ?? 'unknown'} ${msg.headers?.description ?? ''}`.trim());
  }
  let ack: PubAckJson;
  try {
    ack = msg.json<PubAckJson>();
  } catch {
    return new Error('unreadable publish ack');
  }
  // as js.publish reports it; a message above the stream's max_msg_size becomes MessageTooLargeError
  if (ack.error !== undefined) return asError(publishFailure(new JetStreamApiError(ack.error), subject, bytes));
  if (typeof ack.seq !== 'number') return new Error('publish ack without a sequence');
  return { seq: ack.seq, duplicate: ack.duplicate === true };
}

function asError(error: unknown): Error {
  return error instanceof Error ? error : new Error(String(error));
}
