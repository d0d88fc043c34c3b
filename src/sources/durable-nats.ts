/**
 * The NATS side of a durable source: the durable consumer (bus/durable.ts)
 * over a link, the connection drops that break a batch, and descriptor
 * lookups that outlast a dropped connection.
 */
import type { JsMsg } from '@nats-io/jetstream';
import type { KV } from '@nats-io/kv';
import type { Logger } from 'pino';
import { deleteDurable, openDurable } from '../bus/durable.js';
import type { DescriptorLookup } from './checks.js';
import type { DurableBatch, DurableMessage, DurablePort, OpenedConsumer } from './durable.js';
import type { BusLink } from './link.js';

/** how long a request waits for a dropped connection to come back before it is tried anyway */
const RECONNECT_PATIENCE_MS = 10_000;

export interface NatsDurableOptions {
  readonly stream: string;
  /** the durable consumer's name */
  readonly name: string;
  /** its one filter subject (bus/replay.ts consumerFilter) */
  readonly filter: string;
  /** store time it starts at when the ledger holds nothing, unix ns */
  readonly startNs: bigint;
}

function asMessage(m: JsMsg): DurableMessage {
  return {
    subject: m.subject,
    data: m.data,
    deliverySequence: m.info.deliverySequence,
    streamSequence: m.info.streamSequence,
    timestampNanos: m.info.timestampNanos,
    pending: m.info.pending,
    ack: () => m.ack(),
  };
}

export class NatsDurablePort implements DurablePort {
  #drops = 0;
  /** the client drops requests made while it is disconnected (they time out): wait for the reconnect */
  #connected = true;
  readonly #listeners: (() => void)[] = [];

  constructor(
    private readonly link: BusLink,
    private readonly o: NatsDurableOptions,
    private readonly log: Logger,
  ) {
    // ends when the connection is closed
    void (async () => {
      for await (const s of link.nc.status()) {
        if (s.type !== 'disconnect' && s.type !== 'reconnect' && s.type !== 'staleConnection') continue;
        this.#drops++;
        this.#connected = s.type === 'reconnect';
        // what is on the way is lost: end the fetch now, not when its heartbeats are missed
        for (const l of this.#listeners) l();
      }
    })().catch(() => undefined);
  }

  drops(): number {
    return this.#drops;
  }

  onDrop(listener: () => void): void {
    this.#listeners.push(listener);
  }

  async untilConnected(stopped: () => boolean): Promise<void> {
    for (let waited = 0; !this.#connected && !stopped() && waited < RECONNECT_PATIENCE_MS; waited += 50) await new Promise((r) => setTimeout(r, 50));
  }

  descriptors(stopped: () => boolean): Promise<DescriptorLookup> {
    return this.link.descriptors((kv) => this.#patient(kv, stopped));
  }

  async open(o: Parameters<DurablePort['open']>[0]): Promise<OpenedConsumer> {
    const opened = await openDurable(this.link.nc, { ...this.o, ...o });
    const consumer = opened.consumer;
    return {
      fromSeq: opened.fromSeq,
      lostBefore: opened.lostBefore,
      async fetch(max: number, expiresMs: number): Promise<DurableBatch> {
        const batch = await consumer.fetch({ max_messages: max, expires: expiresMs });
        return {
          stop: () => batch.stop(),
          async *[Symbol.asyncIterator]() {
            for await (const m of batch) yield asMessage(m);
          },
        };
      },
      pending: () => consumer.info(false).then((i) => i.num_pending, () => -1),
    };
  }

  remove(): Promise<void> {
    return deleteDurable(this.link.nc, this.o.stream, this.o.name);
  }

  /**
   * The descriptor bucket with a get() that outlasts a dropped connection. The
   * cache takes a failed lookup for an unusable descriptor and skips the frame;
   * here the frame is already kept by the ledger and will be acked, so a
   * timeout while NATS is away would lose it. A lookup that fails is tried
   * again once connected, for as long as the source runs; a missing key (null)
   * is an answer, not a failure.
   */
  #patient(kv: KV, stopped: () => boolean): KV {
    const get: KV['get'] = async (key, opts) => {
      for (let attempt = 0; ; attempt++) {
        try {
          return await kv.get(key, opts);
        } catch (error) {
          if (stopped()) throw error;
          if (attempt === 0) this.log.warn({ key, err: error }, 'descriptor lookup failed; retrying once NATS answers');
          await this.untilConnected(stopped);
          await new Promise((r) => setTimeout(r, 200));
        }
      }
    };
    return new Proxy(kv, {
      get(target, prop) {
        if (prop === 'get') return get;
        const v: unknown = Reflect.get(target, prop, target);
        return typeof v === 'function' ? (v as (...a: unknown[]) => unknown).bind(target) : v;
      },
    });
  }
}
