/**
 * A durable source: a durable pull consumer (bus/durable.ts) whose batches
 * are acked only after the consumer's ledger has committed them, so that a
 * consumer killed at any point loses nothing: `rezolus record --durable`
 * keeps its ledger in a spool (src/spool/, record/durable.ts).
 *
 * The ack is an ack-all, so it is sent only for a batch received whole: no
 * gap in the consumer's delivery sequence, no fetch error, no connection drop
 * meanwhile. The server counts a message as delivered once it is written to
 * the socket; one lost on the way would be acked by the ack-all of a later
 * one, and when it came back after ack_wait it would sit below what the
 * ledger holds and be skipped: lost. Otherwise nothing is acked: the ledger
 * commits and the consumer is recreated just after it, as a restart does.
 *
 * A restart feeds what the ledger holds through the same intake first (one
 * order guard over the held frames and the new ones: the same frames are
 * used as in one run), then recreates the consumer after the greater of its
 * ack floor and the ledger's last sequence, and skips redelivered sequences
 * the ledger holds.
 *
 * A missing stream (a server that lost its store) is waited for: one
 * warning, a try every second; the ledger tells a new stream of the same
 * name from the old one (afterSeq). A window without an end starts in
 * stream store time. One with an end is in frame time (window-end.ts): a
 * frame that ended within it is used however late it was stored, the read
 * starts a little before the start (durableReadFromNs), and it ends once
 * the end has passed and every host and sampler has a frame past it, or at
 * the first message stored after the deadline (or, caught up, once our
 * clock is past it).
 *
 * The NATS side is a DurablePort (durable-nats.ts); tests drive the source
 * with a port of their own.
 */
import type { Logger } from 'pino';
import { subjectHostToken } from '../bus/subjects.js';
import type { StreamIdentity } from '../bus/durable.js';
import { NatsUnavailableError, RezolusError, StreamMissingError } from '../errors.js';
import { emptySkipStats, type DescriptorLookup, type SkipStats } from './checks.js';
import { FrameIntake } from './intake.js';
import { RunState } from './run-state.js';
import type { FrameHandler, FrameSource } from './source.js';
import { endGraceNs } from './poll-window.js';
import { WindowEnd } from './window-end.js';

/** One delivered message, as the source needs it. */
export interface DurableMessage {
  readonly subject: string;
  readonly data: Uint8Array;
  /** the consumer's delivery sequence: 1, 2, 3 ... with no gap when nothing was lost on the way */
  readonly deliverySequence: number;
  readonly streamSequence: number;
  /** store time, unix ns */
  readonly timestampNanos: number;
  /** messages the consumer still holds after this one */
  readonly pending: number;
  /** acks this message and every one delivered before it (ack policy all) */
  ack(): void;
}

/** A fetch in progress: the messages of one batch. */
export interface DurableBatch extends AsyncIterable<DurableMessage> {
  /** ends the batch now (a stop, a dropped connection) */
  stop(): void;
}

export interface OpenedConsumer {
  /** the first stream sequence it delivers from, or undefined when it starts by time */
  readonly fromSeq: number | undefined;
  /** when messages the ledger needed had already left the stream (max_age): the stream's first sequence */
  readonly lostBefore: number | undefined;
  fetch(max: number, expiresMs: number): Promise<DurableBatch>;
  /** messages not delivered yet, or -1 when that cannot be read */
  pending(): Promise<number>;
}

/** What the source needs of NATS; durable-nats.ts is the real one. */
export interface DurablePort {
  /** how to find descriptors (the bucket, through a cache that outlasts a dropped connection) */
  descriptors(stopped: () => boolean): Promise<DescriptorLookup>;
  /**
   * Creates the consumer (resuming: recreates it after `afterSeq`, or the ack floor when further
   * on unless `ignoreAckFloor`). Throws StreamMissingError when the stream is missing,
   * NatsUnavailableError when NATS does not answer, DURABLE_IN_USE when the consumer belongs to
   * someone else.
   */
  open(o: { readonly resuming: boolean; readonly ignoreAckFloor: boolean; readonly afterSeq: (stream: StreamIdentity) => number }): Promise<OpenedConsumer>;
  /** connection drops seen so far (a drop during a batch breaks it) */
  drops(): number;
  /** calls back at each drop (to end the batch in progress at once) */
  onDrop(listener: () => void): void;
  /** resolves once connected, or after a while anyway */
  untilConnected(stopped: () => boolean): Promise<void>;
  /** deletes the consumer; gone already is fine */
  remove(): Promise<void>;
}

/** What the consumer keeps of the stream, and commits before each ack. */
export interface DurableLedger {
  /** the highest ledger sequence held (base + stream sequence; 0: none): deliveries at or below it are redeliveries */
  readonly maxSeq: number;
  /** the ledger sequence of the stream being read starts after this (a new stream gets a new base) */
  readonly base: number;
  /** given the stream found, the highest of its sequences held; a new stream starts a new base */
  afterSeq(found: StreamIdentity): number;
  /**
   * Every message held from an earlier run, in order, through `each`, before the stream is read.
   * Says whether held messages were lost (a torn tail cut off: they may have been acked, so the
   * consumer starts after the ledger, not after its ack floor) and whether the ledger is finished
   * (its consumer read to the end before: nothing more is read).
   */
  replayHeld(each: (subject: string, data: Uint8Array, timeNs: bigint) => Promise<void>): Promise<{ readonly lostHeld: boolean; readonly finished: boolean }>;
  /** keeps a message of the window, before it is checked */
  keep(m: { readonly seq: number; readonly timeNs: bigint; readonly subject: string; readonly data: Uint8Array }): void;
  /** makes what was kept durable; the batch is acked only after it returns */
  commit(): void;
}

export interface DurableOptions {
  readonly port: DurablePort;
  readonly ledger: DurableLedger;
  /** host tokens to keep of what the filter delivers; undefined: all */
  readonly pick: ((token: string) => boolean) | undefined;
  /** the window's start, unix ns: store time the read begins at; with an end, frames must also have ended after it */
  readonly startNs: bigint;
  /** the window's end, unix ns of frame time (a frame's end); undefined = until stopped */
  readonly endNs: bigint | undefined;
  /** the rows' interval: the end's grace is two of them (window-end.ts) */
  readonly intervalNs: bigint;
  /** the ledger held frames before this start (a restart) */
  readonly resuming: boolean;
  /** for logs */
  readonly stream: string;
}

const FETCH_MAX = 1000;
const FETCH_EXPIRES_MS = 1000;
/** how often a missing stream or an unreachable server is tried again */
const RETRY_MS = 1000;

/**
 * Where a durable recording reads the stream from (store time): its start, or, when the window has an end
 * (in frame time, window-end.ts), leadNs before it, for the frames of the window that an agent whose clock
 * is ahead stored before the start.
 */
export function durableReadFromNs(o: { readonly startNs: bigint; readonly endNs: bigint | undefined; readonly intervalNs: bigint }): bigint {
  return o.endNs === undefined ? o.startNs : o.startNs - endGraceNs(o.intervalNs);
}

/** Why a batch is not acked, or undefined when it was received whole. */
type Verdict = string | undefined;

export class DurableSource implements FrameSource {
  readonly kind = 'durable';
  readonly skipped: SkipStats = emptySkipStats();
  readonly done: Promise<void>;
  /** times the consumer was recreated because a batch was not received whole */
  recreated = 0;
  /** where the first consumer starts (for the caller's log) */
  fromSeq: number | undefined;
  readonly #state = new RunState();
  #batch: DurableBatch | undefined;
  #consumer: OpenedConsumer | undefined;
  /** the delivery sequence the next message of this consumer must have */
  #nextDelivery = 1;
  #streamGone = false;
  /** the window's end; undefined: until stopped */
  readonly #end: WindowEnd | undefined;
  /** store time of the message being handed over (undefined: one read back from the ledger) */
  #arrivedNs: bigint | undefined;
  /** store time the read begins at (durableReadFromNs) */
  readonly #readFromNs: bigint;

  constructor(
    private readonly options: DurableOptions,
    private readonly log: Logger,
  ) {
    this.done = this.#state.done;
    this.#end = options.endNs === undefined ? undefined : new WindowEnd(options.endNs, options.intervalNs, options.startNs);
    this.#readFromNs = durableReadFromNs(options);
    options.port.onDrop(() => this.#batch?.stop());
  }

  /**
   * Feeds what the ledger holds, then opens the consumer (on a restart waiting while the stream is
   * missing); rejects when it cannot be had. Frames of the stream follow in the background.
   */
  async start(onFrame: FrameHandler): Promise<void> {
    if (!this.#state.beginStart()) return;
    const o = this.options;
    let intake: FrameIntake;
    try {
      const end = this.#end;
      // a frame past the window's end is read (it tells that its host and sampler are done) but not used
      const handler: FrameHandler = end === undefined ? onFrame : (f, data) => (end.admit(f.host, f.sampler, f.endNs, this.#arrivedNs) ? onFrame(f, data) : undefined);
      intake = new FrameIntake(await o.port.descriptors(() => this.#state.stopped), this.skipped, handler, this.log);
      const held = await o.ledger.replayHeld(async (subject, data, timeNs) => {
        // held frames carry their store time: the lateness seen before a kill still counts after it
        this.#arrivedNs = timeNs;
        const wait = intake.take(subject, data);
        if (wait !== undefined) await wait;
      });
      if (held.finished) {
        this.#state.started();
        return;
      }
      // a restart lives with what the server has; a first start fails when it cannot begin
      const first = o.resuming ? await this.#openWaiting(held.lostHeld, false) : await o.port.open({ resuming: false, ignoreAckFloor: false, afterSeq: (s) => o.ledger.afterSeq(s) });
      this.#consumer = first;
      this.fromSeq = first?.fromSeq;
      if (first?.lostBefore !== undefined) this.#warnLost(first.lostBefore, 'while the consumer was down');
    } catch (error) {
      this.#state.started();
      throw error;
    }
    // stopped meanwhile: the pull returns at once
    this.#state.started(this.#pull(intake));
  }

  stop(): void {
    this.#state.stop();
    this.#batch?.stop();
  }

  /** What the window left out and waited for (undefined: no end), for the recording's log. */
  windowSummary(): ReturnType<WindowEnd['summary']> | undefined {
    return this.#end?.summary();
  }

  #warnLost(firstSeq: number, when: string): void {
    this.log.warn({ stream: this.options.stream, firstSeq, held: this.options.ledger.maxSeq }, `frames the consumer needed left the stream (max_age) ${when}: there is a gap there`);
  }

  /** Opens the consumer, waiting while the stream is missing (and, with `retryUnavailable`, while NATS does not answer); undefined when stopped meanwhile. */
  async #openWaiting(ignoreAckFloor: boolean, retryUnavailable: boolean): Promise<(OpenedConsumer & { attempts: number }) | undefined> {
    const { port, ledger, stream } = this.options;
    let warned = false;
    for (let attempt = 0; !this.#state.stopped; attempt++) {
      await port.untilConnected(() => this.#state.stopped);
      try {
        const opened = await port.open({ resuming: true, ignoreAckFloor, afterSeq: (s) => ledger.afterSeq(s) });
        if (this.#streamGone) this.log.warn({ stream, waitedS: attempt }, 'the stream is there again: reading goes on');
        this.#streamGone = false;
        return Object.assign(opened, { attempts: attempt + 1 });
      } catch (error) {
        const missing = error instanceof StreamMissingError;
        // a RezolusError other than NatsUnavailableError (a consumer of someone else) ends the source
        const unavailable = !(error instanceof RezolusError) || error instanceof NatsUnavailableError;
        if (!missing && !(retryUnavailable && unavailable)) throw error;
        if (missing && !this.#streamGone) this.log.warn({ stream }, `stream ${stream} is gone (the server lost its store?): waiting for it to be created again, trying every second`);
        else if (!missing && !warned) this.log.warn({ err: error }, 'cannot recreate the consumer yet; retrying every second');
        this.#streamGone ||= missing;
        warned = true;
        await new Promise((r) => setTimeout(r, RETRY_MS));
      }
    }
    return undefined;
  }

  /** Recreates the consumer after the ledger (retrying while NATS is away); false when stopped meanwhile. */
  async #recreate(why: string): Promise<boolean> {
    const again = await this.#openWaiting(false, true);
    if (again === undefined) return false;
    this.#consumer = again;
    this.#nextDelivery = 1;
    this.recreated++;
    this.log.warn({ why, held: this.options.ledger.maxSeq, fromSeq: again.fromSeq, attempts: again.attempts }, 'frames may have been delivered and not received: recreated the consumer just after the ledger');
    if (again.lostBefore !== undefined) this.#warnLost(again.lostBefore, 'meanwhile');
    return true;
  }

  /** One fetched batch, each new message kept and handed on; says whether to ack it and whether the window ended. */
  async #batchOnce(from: OpenedConsumer, intake: FrameIntake): Promise<{ verdict: Verdict; last: DurableMessage | undefined; ended: boolean }> {
    const { port, ledger, pick } = this.options;
    const end = this.#end;
    const dropsBefore = port.drops();
    // ledger sequence = the base + stream sequence (the consumer reads the base's stream)
    const base = ledger.base;
    let last: DurableMessage | undefined;
    let verdict: Verdict;
    let ended = false;
    try {
      this.#batch = await from.fetch(FETCH_MAX, FETCH_EXPIRES_MS);
      if (port.drops() !== dropsBefore) this.#batch.stop();
      for await (const m of this.#batch) {
        if (m.deliverySequence !== this.#nextDelivery) {
          verdict = `delivery ${m.deliverySequence} came after ${this.#nextDelivery - 1}`;
          break;
        }
        this.#nextDelivery++;
        const timeNs = BigInt(m.timestampNanos);
        last = m;
        const seq = base + m.streamSequence;
        // not a redelivery of what the ledger holds; a start time still to come makes the server start at its
        // last message, and a window's read starts before its start (durableReadFromNs); the fleet filter
        // delivers every host: the selected ones
        if (seq > ledger.maxSeq && timeNs >= this.#readFromNs && (pick === undefined || pick(subjectHostToken(m.subject)))) {
          ledger.keep({ seq, timeNs, subject: m.subject, data: m.data });
          this.#arrivedNs = timeNs;
          const wait = intake.take(m.subject, m.data);
          if (wait !== undefined) await wait;
          if (this.#state.stopped) break;
        }
        // after the message, so that its own lateness moves the deadline (a late frame of the window is used)
        if (end?.overAt(timeNs)) {
          ended = true;
          break;
        }
      }
    } catch (error) {
      if (error instanceof RezolusError) throw error;
      verdict = `the fetch failed: ${String(error)}`;
    } finally {
      this.#batch = undefined;
    }
    if (verdict === undefined && port.drops() !== dropsBefore) verdict = 'the connection dropped';
    return { verdict, last, ended };
  }

  async #pull(intake: FrameIntake): Promise<void> {
    const { ledger } = this.options;
    const end = this.#end;
    // what the ledger held may already close the window (a restart after the end)
    const heldUntil = this.#arrivedNs;
    if (end !== undefined && heldUntil !== undefined && end.overAt(heldUntil)) return;
    while (!this.#state.stopped) {
      const from = this.#consumer;
      // undefined: stopped while waiting for the stream
      if (from === undefined) return;
      const { verdict, last, ended } = await this.#batchOnce(from, intake);
      // durable first, then acked (ack policy all: the last acks the batch, and every delivery before it)
      ledger.commit();
      if (verdict === undefined) last?.ack();
      if (ended || this.#state.stopped) return;
      if (verdict !== undefined) {
        if (!(await this.#recreate(verdict))) return;
        continue;
      }
      const now = BigInt(Date.now()) * 1_000_000n;
      if (end?.overAt(now) && (last === undefined || last.pending === 0)) {
        // past the end and caught up, unless the server holds more (it may have been away)
        if ((await from.pending()) === 0) return;
      }
    }
  }
}
