import type { NatsConnection } from '@nats-io/nats-core';
import type { KV } from '@nats-io/kv';
import type { Logger } from 'pino';
import { AckedPublisher, type PubAck } from './acks.js';
import { publishFailure } from './api-errors.js';
import { DESCRIPTOR_BUCKET, descriptorKey, MsgIdTags, taggedMsgId } from './subjects.js';
import { JetStreamApiError } from '@nats-io/jetstream';
import { MessageTooLargeError, PublishRefusedError } from '../errors.js';
import { bundleFrames, encodeBundle } from '../frame/bundle.js';
import { bundleBytes } from '../frame/bundle-bytes.js';

/** A frame bound for the stream, or a descriptor bound for the KV bucket. */
type Payload =
  | {
      readonly kind: 'frame';
      readonly subject: string;
      readonly data: Uint8Array;
      readonly idPrefix: string;
      readonly seq: number;
      readonly tag: string;
      /** frames in the message: 1, or a bundle's (frame/bundle.ts) */
      readonly frames: number;
    }
  | { readonly kind: 'kv'; readonly key: string; readonly value: string };

type Item = Payload & { readonly bytes: number; sending: boolean; done: boolean; evicted?: boolean };

export interface PublisherStats {
  /** frames acked by JetStream (duplicates included; a bundle counts its frames) */
  published: number;
  /** frames JetStream reported as duplicates of an earlier publish (a retry that had landed) */
  duplicates: number;
  /** descriptors stored in KV */
  descriptorsPut: number;
  /** frames dropped because the buffer was full */
  dropped: number;
  /** failed attempts that were retried */
  retries: number;
  /** frames (a bundle counts its frames) and descriptors the server's permissions refused (another host's subject or key): dropped, not retried */
  refused: number;
  /** frames (a bundle counts its frames) and descriptors waiting for an ack */
  buffered: number;
  bufferedBytes: number;
}

export interface PublisherOptions {
  readonly nc: NatsConnection;
  readonly descriptors: KV;
  /** the agent's host: descriptors go under `<host>.<hash>` (descriptorKey) */
  readonly host: string;
  readonly maxBufferBytes: number;
  readonly log: Logger;
  /** per-attempt ack timeout */
  readonly timeoutMs?: number;
  /** publishes in flight at once while the bus is healthy */
  readonly window?: number;
  /**
   * Called on every failed attempt that is retried, with its error: a
   * NoStreamError (no stream or bucket took it: the server lost its store),
   * or no ack in time (the server is away, or a live subscriber took the
   * message where no stream did). The item stays queued and is retried; the
   * callback checks for and recreates what is missing (agent/store-keeper.ts).
   */
  readonly onRetry?: (error: unknown) => void;
}

const MAX_BACKOFF_MS = 1000;

/** What an item counts for in the stats: its frames (a bundle's), or 1 for a descriptor. */
function countOf(item: Item): number {
  return item.kind === 'frame' ? item.frames : 1;
}

/**
 * What a queued item costs beyond its payload (the item object, the view
 * on the frame's bytes, the queue slot and the allocator's slack), so that
 * [buffer] max_bytes bounds the agent's memory rather than only the frame
 * bytes. Measured with test/bench/failover.ts (agent RSS at a full buffer).
 */
export const ITEM_OVERHEAD_BYTES = 256;

/**
 * Publishes in order through a bounded buffer. The NATS client drops what is
 * published while disconnected without an error, so every frame goes through
 * JetStream with a stable Nats-Msg-Id and is retried until acked: a retry that
 * had in fact been stored is recognised by the stream's duplicate window.
 *
 * While the bus is healthy up to `window` publishes are in flight (one tick's
 * frames leave in one write and their acks come back together). On a failure
 * it waits for what is in flight, then retries the oldest unacked item alone
 * with backoff until it is acked, and only then pipelines again, so the
 * buffer drains in order after an outage. Descriptors travel in the same
 * queue, so a descriptor is stored before the first frame that needs it. When
 * the buffer is full the oldest unsent frames are dropped and counted;
 * descriptors are never dropped.
 */
/** Acked items at the head of the queue that are cut away (with their bytes) once they are more than the rest. */
const COMPACT_FROM = 16;

export class Publisher {
  readonly stats: PublisherStats = {
    published: 0, duplicates: 0, descriptorsPut: 0, dropped: 0, retries: 0, refused: 0, buffered: 0, bufferedBytes: 0,
  };
  /** subject -> when its refusal was last logged */
  private readonly refusalLogged = new Map<string, number>();
  /** descriptor hash -> puts of it queued and not yet acked or dropped */
  private readonly queuedDescriptors = new Map<string, number>();
  private queue: Item[] = [];
  /** items before head are acked and gone */
  private head = 0;
  /** items before next have been sent at least once */
  private next = 0;
  private inflight = 0;
  private recovering = false;
  private retrying = false;
  private pumpScheduled = false;
  private closed = false;
  private idleWaiters: (() => void)[] = [];
  private readonly window: number;
  private readonly acks: AckedPublisher;
  /** the random tag of every Nats-Msg-Id this run publishes (subjects.ts taggedMsgId): another host cannot predict them */
  private readonly tags = new MsgIdTags();

  constructor(private readonly o: PublisherOptions) {
    this.window = o.window ?? 64;
    this.acks = new AckedPublisher(o.nc, o.timeoutMs ?? 2000);
  }

  /**
   * Queues a frame whose Nats-Msg-Id is `idPrefix + seq` and a random tag drawn now (taggedMsgId). The prefix and
   * subject are one string per sampler run, shared by its frames: a
   * buffered frame costs its bytes plus ITEM_OVERHEAD_BYTES of bookkeeping,
   * and that is what max_bufferBytes counts.
   */
  publishFrame(subject: string, data: Uint8Array, idPrefix: string, seq: number): void {
    this.push({ kind: 'frame', subject, data, idPrefix, seq, tag: this.tags.next(), frames: 1, bytes: data.byteLength + ITEM_OVERHEAD_BYTES, sending: false, done: false });
  }

  /**
   * Queues a bundle of `frames` frames (frame/bundle.ts) as one message, as
   * publishFrame does a frame: acked, retried, dropped and counted whole.
   */
  publishBundle(subject: string, data: Uint8Array, idPrefix: string, seq: number, frames: number): void {
    this.push({ kind: 'frame', subject, data, idPrefix, seq, tag: this.tags.next(), frames, bytes: data.byteLength + ITEM_OVERHEAD_BYTES, sending: false, done: false });
  }

  /**
   * Queues a descriptor, put in the bucket under descriptorKey(host, hash).
   * `urgent` puts it ahead of every frame not yet acked (a descriptor put
   * again after the bucket was lost must land before the buffered frames
   * that name it).
   */
  putDescriptor(hash: string, value: string, urgent = false): void {
    this.push({ kind: 'kv', key: hash, value, bytes: value.length + hash.length + ITEM_OVERHEAD_BYTES, sending: false, done: false }, urgent);
  }

  /** Items the queue holds, acked ones not yet cut away included: what it keeps alive (tests). */
  get held(): number {
    return this.queue.length;
  }

  /** Whether a put of this descriptor is queued and not yet acked (putting it again would only repeat it). */
  isDescriptorQueued(hash: string): boolean {
    return this.queuedDescriptors.has(hash);
  }

  /** The server's max_payload, once connected. */
  maxPayload(): number | undefined {
    return this.o.nc.info?.max_payload;
  }

  /** Resolves true when everything queued so far is acked, false after timeoutMs. */
  async flush(timeoutMs: number): Promise<boolean> {
    if (this.stats.buffered === 0) return true;
    let timer: NodeJS.Timeout | undefined;
    const idle = new Promise<boolean>((resolve) => this.idleWaiters.push(() => resolve(true)));
    const timeout = new Promise<boolean>((resolve) => {
      timer = setTimeout(() => resolve(false), timeoutMs);
    });
    const done = await Promise.race([idle, timeout]);
    clearTimeout(timer);
    return done;
  }

  /** Stops after trying to flush for up to drainMs; unacked frames left are counted as dropped. */
  async close(drainMs = 2000): Promise<void> {
    const flushed = await this.flush(drainMs);
    this.closed = true;
    this.acks.close();
    if (!flushed) {
      let left = 0;
      for (const i of this.queue.slice(this.head)) if (i.kind === 'frame' && !i.done) left += i.frames;
      this.stats.dropped += left;
      this.o.log.warn({ frames: left }, 'closing with unacked frames');
    }
  }

  /** Queues an item made whole by the caller (an object spread here was a runtime call a frame in V8's interpreter). */
  private push(item: Item, urgent = false): void {
    if (this.closed) return;
    if (item.kind === 'kv') this.queuedDescriptors.set(item.key, (this.queuedDescriptors.get(item.key) ?? 0) + 1);
    if (!urgent) {
      this.queue.push(item);
    } else if (this.recovering) {
      // retryOldest sends the oldest unacked item first, then everything from head again
      this.queue.splice(this.head, 0, item);
      this.next++;
    } else {
      // ahead of everything not yet sent
      this.queue.splice(this.next, 0, item);
    }
    this.stats.buffered += countOf(item);
    this.stats.bufferedBytes += item.bytes;
    this.evict();
    this.schedulePump();
  }

  /**
   * Sends what is queued once the current turn of the event loop is done
   * (setImmediate), so the frames of one tick leave in one socket write:
   * nats-core flushes in a microtask after the first publish, and a sampler
   * whose frame came a few microtasks later went out in a write of its own.
   */
  private schedulePump(): void {
    if (this.pumpScheduled) return;
    this.pumpScheduled = true;
    setImmediate(() => {
      this.pumpScheduled = false;
      this.pump();
    });
  }

  /**
   * Drops the oldest frames that are not awaiting an ack until the buffer
   * fits (a frame whose send failed may be dropped too: it is retried no
   * more). Descriptors and frames in flight stay.
   */
  private evict(): void {
    if (this.stats.bufferedBytes <= this.o.maxBufferBytes) return;
    const kept: Item[] = [];
    let next = 0;
    for (let i = this.head; i < this.queue.length; i++) {
      const item = this.queue[i] as Item;
      const droppable = item.kind === 'frame' && !item.sending && !item.done;
      if (droppable && this.stats.bufferedBytes > this.o.maxBufferBytes) {
        item.evicted = true; // gone from the buffer: a late ack of an earlier attempt changes nothing
        this.stats.dropped += item.frames;
        this.stats.buffered -= countOf(item);
        this.stats.bufferedBytes -= item.bytes;
        continue;
      }
      kept.push(item);
      if (i < this.next) next = kept.length;
    }
    this.queue = kept;
    this.head = 0;
    this.next = next;
  }

  /** Sends queued items while the window has room and the bus is healthy. */
  private pump(): void {
    while (!this.closed && !this.recovering && this.inflight < this.window && this.next < this.queue.length) {
      const item = this.queue[this.next++] as Item;
      if (item.done || item.sending) continue;
      this.start(item);
    }
  }

  private start(item: Item): void {
    item.sending = true;
    this.inflight++;
    this.send(item).then(
      () => {
        this.inflight--;
        this.acked(item);
        this.settled();
      },
      (error: unknown) => {
        this.inflight--;
        item.sending = false;
        if (this.refused(item, error)) {
          this.settled();
          return;
        }
        this.stats.retries++;
        if (!this.recovering) {
          this.recovering = true;
          this.o.log.warn({ err: error, buffered: this.stats.buffered }, 'publish failed; buffering and retrying in order');
        }
        // recovering first: a descriptor put again from here goes ahead of the oldest unacked frame
        this.o.onRetry?.(error);
        this.settled();
      },
    );
  }

  /** After any completion: keep pipelining, or once nothing is in flight after a failure, retry the oldest. */
  private settled(): void {
    if (!this.recovering) this.pump();
    else if (this.inflight === 0) void this.retryOldest();
  }

  /** `reuse`: the bytes may be lent again (an ack); not for an item refused or dropped (refused()). */
  private acked(item: Item, reuse = true): void {
    item.done = true;
    item.sending = false;
    // nothing reads an acked bundle's bytes again: lent ones go back for the next (frame/bundle-bytes.ts). No attempt
    // of it waits in the client's outbound buffer either: an ack comes in on the socket, after the microtask
    // that flushed (copied) what was published. A bundle dropped from the buffer, or refused, is never given back:
    // a refusal is matched to the oldest pending publish of its subject, which may be a later attempt not yet flushed.
    if (reuse && item.kind === 'frame') bundleBytes.give(item.data);
    this.stats.buffered -= countOf(item);
    this.stats.bufferedBytes -= item.bytes;
    if (item.kind === 'kv') {
      const n = (this.queuedDescriptors.get(item.key) ?? 1) - 1;
      if (n > 0) this.queuedDescriptors.set(item.key, n);
      else this.queuedDescriptors.delete(item.key);
    }
    while (this.head < this.queue.length && (this.queue[this.head] as Item).done) this.head++;
    // acked items keep their bytes until the queue is cut: cut it soon (a 45 kB bundle twice a second, held for 1024
    // items, grew the agent's RSS by 40 MiB over 9 minutes); at most half of it is copied, so each item once on average
    if (this.head >= COMPACT_FROM && this.head * 2 > this.queue.length) {
      this.queue = this.queue.slice(this.head);
      this.next -= this.head;
      this.head = 0;
    }
    if (this.stats.buffered === 0) for (const w of this.idleWaiters.splice(0)) w();
  }

  /** During an outage: the oldest unacked item alone, with backoff, until acked; then pipeline again. */
  private async retryOldest(): Promise<void> {
    if (this.retrying) return;
    this.retrying = true;
    for (let attempt = 0; !this.closed; attempt++) {
      await new Promise((r) => setTimeout(r, Math.min(MAX_BACKOFF_MS, 50 * 2 ** attempt)));
      // closed during the back-off: the acks are gone, a send now would never be answered
      if (this.closed) break;
      const item = this.queue.slice(this.head).find((i) => !i.done);
      if (item === undefined) break;
      try {
        item.sending = true;
        await this.send(item);
        this.acked(item);
        this.o.log.info({ buffered: this.stats.buffered }, 'publishing again; flushing the buffer in order');
        break;
      } catch (error) {
        item.sending = false;
        if (this.refused(item, error)) break;
        this.o.onRetry?.(error);
        this.stats.retries++;
      }
    }
    this.retrying = false;
    this.recovering = false;
    this.next = this.head;
    this.pump();
  }

  /**
   * A publish that can never succeed is dropped and counted, not retried:
   * one the server's permissions refused (PublishRefusedError, counted as
   * refused), or one larger than the server takes (MessageTooLargeError:
   * max_payload or the stream's max_msg_size; counted as dropped), or a
   * descriptor the bucket answered with an error. Retrying it in order
   * would hold every later frame behind it. Frames are cumulative, so once
   * the cause is fixed the next frame carries what this one had.
   */
  private refused(item: Item, error: unknown): boolean {
    if (error instanceof MessageTooLargeError && item.kind === 'frame' && item.frames > 1) {
      // A bundle above the stream's max_msg_size (the agent keeps bundles under max_payload, not under a
      // limit of the stream's): its frames go again one to a bundle, in order, ahead of what was not sent
      // yet; a frame that does not fit alone is then dropped as any other.
      const frames = bundleFrames(item.data);
      // not evictable while its frames are queued again (push may evict): acked below, once
      item.sending = true;
      for (let i = frames.length - 1; i >= 0; i--) {
        const data = encodeBundle([frames[i] as Uint8Array], (n) => bundleBytes.take(n));
        // a tag of its own: a new Nats-Msg-Id
        this.push({ ...item, data, tag: this.tags.next(), frames: 1, bytes: data.byteLength + ITEM_OVERHEAD_BYTES, sending: false, done: false, evicted: false }, true);
      }
      this.acked(item, false);
      const last = this.refusalLogged.get('max_msg_size');
      if (last === undefined || Date.now() - last > 60_000) {
        this.refusalLogged.set('max_msg_size', Date.now());
        this.o.log.warn(
          { subject: item.subject, bytes: item.data.byteLength, frames: item.frames },
          'a bundle was larger than the stream takes (its max_msg_size): its frames went one to a message (raise max_msg_size, or [stream] bundle = false)',
        );
      }
      return true;
    }
    if (error instanceof MessageTooLargeError) {
      // it would never fit: a frame is dropped and counted; a descriptor too (the agent checks
      // descriptors against max_payload before it queues them, so this is a server limit below it)
      const what =
        item.kind === 'kv'
          ? `descriptor ${item.key} (${item.value.length} bytes)`
          : item.frames > 1
            ? `a bundle of ${item.frames} frames (${item.data.byteLength} bytes) for ${item.subject}`
            : `a frame of ${item.data.byteLength} bytes for ${item.subject}`;
      if (item.kind === 'frame') this.stats.dropped += item.frames;
      this.acked(item, false);
      this.o.log.error({ err: error, dropped: this.stats.dropped }, `${what} is larger than the server takes: dropped (raise max_payload or max_msg_size, or fewer series per sampler${item.kind === 'frame' && item.frames > 1 ? ', or [stream] bundle = false for a message per frame' : ''})`);
      return true;
    }
    if (item.kind === 'kv' && error instanceof JetStreamApiError) {
      // The bucket answered with an error (full: "maximum bytes exceeded", out of storage, ...): held
      // at the head of the queue it would stall every frame until the buffer drops them. Frames go on
      // without it; the store keeper's probe finds it missing and queues it again (agent/store-keeper.ts).
      this.stats.refused++;
      this.acked(item, false);
      const key = `bucket: ${error.message}`;
      const last = this.refusalLogged.get(key);
      if (last === undefined || Date.now() - last > 60_000) {
        this.refusalLogged.set(key, Date.now());
        this.o.log.error(
          { descriptor: item.key, err: error, refused: this.stats.refused },
          `the descriptor bucket ${DESCRIPTOR_BUCKET} refused a descriptor (${error.message}): dropped and put again later; frames go on meanwhile (check the bucket's limits)`,
        );
      }
      return true;
    }
    if (!(error instanceof PublishRefusedError)) return false;
    // a descriptor put refused (another host's key) is dropped too: queued ahead of frames, it would stall them all
    const subject = error.subject;
    this.stats.refused += countOf(item);
    this.acked(item, false);
    const last = this.refusalLogged.get(subject);
    if (last === undefined || Date.now() - last > 60_000) {
      this.refusalLogged.set(subject, Date.now());
      this.o.log.error({ subject, refused: this.stats.refused }, `NATS refused publishing to ${subject}: this user may not publish there (check [general] host and the user's permissions); what goes there is dropped and counted as refused`);
    }
    return true;
  }

  private async send(item: Item): Promise<void> {
    if (item.kind === 'kv') {
      const key = descriptorKey(this.o.host, item.key);
      try {
        await this.o.descriptors.put(key, item.value);
      } catch (error) {
        // the same typed errors as a frame's (acks.ts): too large, refused, no stream
        throw publishFailure(error, `$KV.${DESCRIPTOR_BUCKET}.${key}`, item.value.length);
      }
      this.stats.descriptorsPut++;
      return;
    }
    const ack = await this.acks.publish(item.subject, item.data, taggedMsgId(item.idPrefix, item.seq, item.tag), (late) => this.lateAck(item, late));
    this.stats.published += item.frames;
    if (ack.duplicate) this.stats.duplicates += item.frames;
  }

  /**
   * The ack of an attempt that had timed out: the frame is stored, so it is
   * not sent again (under an overloaded server every agent would otherwise
   * send its whole window twice, and live subscribers get it twice). A frame
   * sent again meanwhile waits for that attempt's ack instead (a duplicate,
   * counted as such); a frame dropped from the buffer is left as it is.
   */
  private lateAck(item: Item, ack: PubAck): void {
    if (item.evicted === true || this.closed || item.kind !== 'frame') return;
    // counted whatever the order with a later attempt's ack (a duplicate), so published - duplicates stays one per frame
    this.stats.published += item.frames;
    if (ack.duplicate) this.stats.duplicates += item.frames;
    if (!item.done && !item.sending) this.acked(item);
  }
}
