import type { JetStreamClient } from '@nats-io/jetstream';
import type { KV } from '@nats-io/kv';
import type { Logger } from 'pino';

/** A frame bound for the stream, or a descriptor bound for the KV bucket. */
type Item =
  | { readonly kind: 'frame'; readonly subject: string; readonly data: Uint8Array; readonly msgId: string; readonly bytes: number }
  | { readonly kind: 'kv'; readonly key: string; readonly value: string; readonly bytes: number };

export interface PublisherStats {
  /** frames acked by JetStream (duplicates included) */
  published: number;
  /** frames JetStream reported as duplicates of an earlier publish (a retry that had landed) */
  duplicates: number;
  /** descriptors stored in KV */
  descriptorsPut: number;
  /** frames dropped because the buffer was full */
  dropped: number;
  /** failed attempts that were retried */
  retries: number;
  /** items waiting (frames and descriptors) */
  buffered: number;
  bufferedBytes: number;
}

export interface PublisherOptions {
  readonly js: JetStreamClient;
  readonly descriptors: KV;
  readonly maxBufferBytes: number;
  readonly log: Logger;
  /** per-attempt ack timeout */
  readonly timeoutMs?: number;
}

const MAX_BACKOFF_MS = 1000;

/**
 * Publishes in order through a bounded buffer. The NATS client drops what is
 * published while disconnected without an error, so every frame goes through
 * JetStream with a stable Nats-Msg-Id and is retried until acked: a retry
 * that had in fact been stored is recognised by the stream's duplicate
 * window. Descriptors travel in the same queue, so a descriptor is always
 * stored before the first frame that needs it. When the buffer is full the
 * oldest frames are dropped and counted; descriptors are never dropped.
 */
export class Publisher {
  readonly stats: PublisherStats = {
    published: 0, duplicates: 0, descriptorsPut: 0, dropped: 0, retries: 0, buffered: 0, bufferedBytes: 0,
  };
  private queue: Item[] = [];
  private head = 0;
  private running = false;
  private closed = false;
  private wake: (() => void) | undefined;
  private idleWaiters: (() => void)[] = [];
  private failing = false;
  private readonly timeoutMs: number;

  constructor(private readonly o: PublisherOptions) {
    this.timeoutMs = o.timeoutMs ?? 2000;
  }

  publishFrame(subject: string, data: Uint8Array, msgId: string): void {
    this.push({ kind: 'frame', subject, data, msgId, bytes: data.byteLength + subject.length + msgId.length });
  }

  putDescriptor(key: string, value: string): void {
    this.push({ kind: 'kv', key, value, bytes: value.length + key.length });
  }

  /** Resolves when everything queued so far is acked, or after timeoutMs (returns false then). */
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

  /** Stops the loop after trying to flush for up to drainMs; what is left is counted as dropped. */
  async close(drainMs = 2000): Promise<void> {
    const flushed = await this.flush(drainMs);
    this.closed = true;
    if (!flushed) {
      const left = this.queue.slice(this.head).filter((i) => i.kind === 'frame').length;
      this.stats.dropped += left;
      this.o.log.warn({ frames: left }, 'closing with unacked frames');
    }
    this.wake?.();
  }

  private push(item: Item): void {
    if (this.closed) return;
    this.queue.push(item);
    this.stats.buffered++;
    this.stats.bufferedBytes += item.bytes;
    this.evict();
    if (!this.running) void this.run();
    else this.wake?.();
  }

  /** Drops the oldest frames (never the one in flight at `head`, never descriptors) until the buffer fits. */
  private evict(): void {
    if (this.stats.bufferedBytes <= this.o.maxBufferBytes) return;
    const kept: Item[] = [];
    const inFlight = this.queue[this.head];
    for (let i = this.head + 1; i < this.queue.length; i++) {
      const item = this.queue[i] as Item;
      if (this.stats.bufferedBytes > this.o.maxBufferBytes && item.kind === 'frame') {
        this.stats.dropped++;
        this.stats.buffered--;
        this.stats.bufferedBytes -= item.bytes;
      } else kept.push(item);
    }
    this.queue = inFlight === undefined ? kept : [inFlight, ...kept];
    this.head = 0;
  }

  private async run(): Promise<void> {
    this.running = true;
    let attempt = 0;
    while (!this.closed) {
      const item = this.queue[this.head];
      if (item === undefined) {
        this.queue = [];
        this.head = 0;
        for (const w of this.idleWaiters.splice(0)) w();
        await new Promise<void>((resolve) => {
          this.wake = resolve;
        });
        this.wake = undefined;
        continue;
      }
      try {
        await this.send(item);
        attempt = 0;
        if (this.failing) {
          this.failing = false;
          this.o.log.info({ buffered: this.stats.buffered - 1 }, 'publishing again; flushing the buffer in order');
        }
        // evict() may have rebuilt the queue while we awaited; the head is still this item.
        if (this.queue[this.head] === item) {
          this.queue[this.head] = undefined as unknown as Item;
          this.head++;
          this.stats.buffered--;
          this.stats.bufferedBytes -= item.bytes;
        }
        if (this.head > 1024 && this.head * 2 > this.queue.length) {
          this.queue = this.queue.slice(this.head);
          this.head = 0;
        }
      } catch (error) {
        this.stats.retries++;
        if (!this.failing) {
          this.failing = true;
          this.o.log.warn({ error: String(error), buffered: this.stats.buffered }, 'publish failed; buffering and retrying');
        }
        const backoff = Math.min(MAX_BACKOFF_MS, 50 * 2 ** attempt++);
        await new Promise((resolve) => setTimeout(resolve, backoff));
      }
    }
    this.running = false;
  }

  private async send(item: Item): Promise<void> {
    if (item.kind === 'kv') {
      await this.o.descriptors.put(item.key, item.value);
      this.stats.descriptorsPut++;
      return;
    }
    const ack = await this.o.js.publish(item.subject, item.data, { msgID: item.msgId, timeout: this.timeoutMs });
    this.stats.published++;
    if (ack.duplicate) this.stats.duplicates++;
  }
}
