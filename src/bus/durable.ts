/**
 * The durable pull consumer of a resumable recording (`rezolus record
 * --durable NAME`): ack policy `all` (one ack per fsynced batch), one
 * filter subject (nats-server 2.9 takes no more), starting at the
 * recording's start time, or, on a restart, just after what the recorder
 * already holds: the greater of the consumer's ack floor and the last
 * sequence the caller kept.
 *
 * A restart recreates the consumer from that point instead of reusing its
 * delivery state: messages delivered to the killed process and never acked
 * would only come back after ack_wait, behind newer ones, and a recorder
 * that skips sequences it holds would then lose them. The recorder takes
 * the same path without a restart whenever messages may have been delivered
 * to it and not received (a dropped connection, a failed fetch, a gap in the
 * delivery sequence): the server counts whatever it wrote to the socket as
 * delivered, and an ack-all of a later message would ack those too. The ack
 * floor is therefore only ever at a message the recorder received with all
 * the deliveries before it.
 *
 * A stream of the same name may be a new one (the server lost its store and
 * the agent created it again; its sequences start over): the caller is given
 * the stream's creation time and last sequence and says, in that stream's
 * sequences, what it holds. A missing stream is a StreamMissingError; the
 * caller may wait for it.
 */
import { AckPolicy, DeliverPolicy, JetStreamApiCodes, JetStreamApiError, jetstream, jetstreamManager, ReplayPolicy, type Consumer, type ConsumerInfo, type JetStreamManager } from '@nats-io/jetstream';
import type { NatsConnection } from '@nats-io/nats-core';
import { nanos } from '@nats-io/nats-core';
import { NatsUnavailableError, RezolusError, StreamMissingError } from '../errors.js';

/** What tells one stream from another of the same name: its creation time (stream info `created`) and its last sequence. */
export interface StreamIdentity {
  readonly created: string;
  readonly lastSeq: number;
}

export interface DurableOptions {
  readonly stream: string;
  readonly name: string;
  readonly filter: string;
  /** store time the consumer starts at when nothing was taken yet, unix ns */
  readonly startNs: bigint;
  /** the highest sequence of this stream the caller already holds (0: none), given the stream it found */
  readonly afterSeq: (stream: StreamIdentity) => number;
  /** false when the caller holds nothing of this consumer: an existing one then belongs to someone else */
  readonly resuming: boolean;
  /**
   * start just after `afterSeq` even when the consumer's ack floor is further on: the caller lost
   * spooled frames that may have been acked (a damaged spool tail was cut) and wants them again
   */
  readonly ignoreAckFloor?: boolean;
}

export interface OpenedDurable {
  readonly consumer: Consumer;
  /** the first stream sequence it delivers from, or undefined when it starts by time */
  readonly fromSeq: number | undefined;
  /** when messages the recording needed had already left the stream (max_age): the stream's first sequence */
  readonly lostBefore: number | undefined;
  /** the stream it reads */
  readonly stream: StreamIdentity;
}

/** Unacked messages the server lets out at once; acks come once per batch of up to FETCH_MAX. */
const MAX_ACK_PENDING = 20_000;
const ACK_WAIT_MS = 60_000;

function isCode(error: unknown, code: number): boolean {
  return error instanceof JetStreamApiError && error.code === code;
}

/** The consumer's info, or undefined when it does not exist. */
async function consumerInfo(jsm: JetStreamManager, stream: string, name: string): Promise<ConsumerInfo | undefined> {
  try {
    return await jsm.consumers.info(stream, name);
  } catch (error) {
    if (isCode(error, JetStreamApiCodes.ConsumerNotFound)) return undefined;
    if (isCode(error, JetStreamApiCodes.StreamNotFound)) {
      throw new StreamMissingError(stream, { cause: error });
    }
    throw error;
  }
}

/** Creates (or, on a resume, recreates) the durable consumer and binds to it. */
export async function openDurable(nc: NatsConnection, o: DurableOptions): Promise<OpenedDurable> {
  const jsm = await jetstreamManager(nc);
  const stream = await jsm.streams.info(o.stream).catch((error: unknown) => {
    if (isCode(error, JetStreamApiCodes.StreamNotFound)) {
      throw new StreamMissingError(o.stream, { cause: error });
    }
    // a timeout or a dropped connection: the caller may try again
    throw new NatsUnavailableError(`cannot read stream ${o.stream}: ${String(error)}`, { cause: error });
  });
  const existing = await consumerInfo(jsm, o.stream, o.name);
  if (existing !== undefined) {
    if (!o.resuming) {
      throw new RezolusError(
        'DURABLE_IN_USE',
        `consumer ${o.name} already exists on stream ${o.stream} and this recording has no spool: choose another --durable name, or delete it (nats consumer rm ${o.stream} ${o.name})`,
      );
    }
    if (existing.config.filter_subject !== o.filter) {
      throw new RezolusError('DURABLE_IN_USE', `consumer ${o.name} on stream ${o.stream} filters ${existing.config.filter_subject ?? '(nothing)'}, not ${o.filter}: it belongs to another recording`);
    }
  }
  const identity: StreamIdentity = { created: stream.created, lastSeq: stream.state.last_seq };
  const afterSeq = o.afterSeq(identity);
  const floor = o.ignoreAckFloor === true ? afterSeq : Math.max(existing?.ack_floor.stream_seq ?? 0, afterSeq);
  if (existing !== undefined) await jsm.consumers.delete(o.stream, o.name);
  const start = floor > 0
    ? { deliver_policy: DeliverPolicy.StartSequence, opt_start_seq: floor + 1 }
    : { deliver_policy: DeliverPolicy.StartTime, opt_start_time: new Date(Number(o.startNs / 1_000_000n)).toISOString() };
  await jsm.consumers.add(o.stream, {
    durable_name: o.name,
    ack_policy: AckPolicy.All,
    ack_wait: nanos(ACK_WAIT_MS),
    max_ack_pending: MAX_ACK_PENDING,
    filter_subject: o.filter,
    replay_policy: ReplayPolicy.Instant,
    ...start,
  });
  const consumer = await jetstream(nc).consumers.get(o.stream, o.name);
  const first = stream.state.first_seq;
  return { consumer, fromSeq: floor > 0 ? floor + 1 : undefined, lostBefore: floor > 0 && first > floor + 1 ? first : undefined, stream: identity };
}

/** Tries of a consumer delete the server refused for another reason than not-found. */
const DELETE_TRIES = 3;
const DELETE_RETRY_MS = 250;

/**
 * Deletes the consumer; gone already is fine. nats-server 2.9 may refuse a
 * delete while it still writes the consumer's state ("unlinkat …: directory
 * not empty", seen once in a test on a loaded machine): it is asked again.
 */
export async function deleteDurable(nc: NatsConnection, stream: string, name: string): Promise<void> {
  const jsm = await jetstreamManager(nc);
  for (let attempt = 1; ; attempt++) {
    try {
      await jsm.consumers.delete(stream, name);
      return;
    } catch (error) {
      if (isCode(error, JetStreamApiCodes.ConsumerNotFound) || isCode(error, JetStreamApiCodes.StreamNotFound)) return;
      if (attempt >= DELETE_TRIES) throw error;
      await new Promise((resolve) => setTimeout(resolve, DELETE_RETRY_MS));
    }
  }
}

/** A consumer name NATS takes: no `.`, `*`, `>`, whitespace or path separators. */
export function validDurableName(name: string): boolean {
  return /^[A-Za-z0-9_-]{1,64}$/.test(name);
}
