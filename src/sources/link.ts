/**
 * A source's connection to the bus: opened for it (and closed when it ends)
 * or lent by a service that holds one for other uses (hindsight's control
 * subject and status); with the descriptor bucket behind a cache.
 */
import type { KV } from '@nats-io/kv';
import type { NatsConnection } from '@nats-io/nats-core';
import { jetstreamManager } from '@nats-io/jetstream';
import type { Logger } from 'pino';
import { connectBus, connectionState, type ConnectionState } from '../bus/connect.js';
import { openDescriptorBucket } from '../bus/kv.js';
import { METRICS_PREFIX, subjectHostToken } from '../bus/subjects.js';
import type { NatsSecurity } from '../config/nats.js';
import { DescriptorCache } from './descriptors.js';

export interface BusOptions {
  /** one URL or a comma-separated list */
  readonly url: string;
  /** credentials, TLS and inbox prefix; absent = none */
  readonly security?: NatsSecurity | undefined;
  /** the connection name the server shows */
  readonly name: string;
  /** keep trying until a server answers (services); false fails at once (one-shot commands) */
  readonly waitOnFirstConnect: boolean;
}

/** How long a bucket that is not there yet is waited for between tries. */
const BUCKET_RETRY_MS = 1000;
/** How long a drain may take before the connection is closed (a server gone away). */
const DRAIN_PATIENCE_MS = 2000;

export class BusLink {
  readonly #state: ConnectionState;

  private constructor(
    readonly nc: NatsConnection,
    private readonly log: Logger,
  ) {
    this.#state = connectionState(nc);
  }

  /** Connects (waiting for a server when options say so). */
  static async open(options: BusOptions, log: Logger): Promise<BusLink> {
    const nc = await connectBus({ url: options.url, name: options.name, log: log.child({ component: 'nats' }), waitOnFirstConnect: options.waitOnFirstConnect, security: options.security });
    return new BusLink(nc, log);
  }

  connected(): boolean {
    return this.#state.connected;
  }

  /** A descriptor cache over the bucket (its get() wrapped by `kvFor`); throws when the bucket is missing. */
  async descriptors(kvFor: (kv: KV) => KV = (kv) => kv): Promise<DescriptorCache> {
    return new DescriptorCache(kvFor(await openDescriptorBucket(this.nc)), this.log.child({ component: 'descriptors' }));
  }

  /**
   * A descriptor cache over the bucket, waiting while the bucket is not there
   * yet (a consumer that starts before any agent), trying every second until
   * `stopped()`; then undefined.
   */
  async descriptorsWhenThere(stopped: () => boolean): Promise<DescriptorCache | undefined> {
    for (let warned = false; !stopped(); ) {
      try {
        return await this.descriptors();
      } catch (error) {
        if (!warned) this.log.info({ err: error }, 'descriptor bucket not there yet; waiting for an agent');
        warned = true;
        await new Promise((r) => setTimeout(r, BUCKET_RETRY_MS));
      }
    }
    return undefined;
  }

  /** Up to 20 host tokens the stream holds frames of (sorted), or undefined when that cannot be read. */
  async streamHosts(stream: string): Promise<string[] | undefined> {
    try {
      const info = await (await jetstreamManager(this.nc)).streams.info(stream, { subjects_filter: `${METRICS_PREFIX}.>` });
      return [...new Set(Object.keys(info.state.subjects ?? {}).map(subjectHostToken))].sort().slice(0, 20);
    } catch {
      return undefined;
    }
  }

  /** Drains the connection, or closes it when draining takes too long. */
  async close(): Promise<void> {
    const timeout = new Promise<'late'>((resolve) => setTimeout(() => resolve('late'), DRAIN_PATIENCE_MS).unref());
    const drained = this.nc.drain().then(() => 'drained' as const, () => 'failed' as const);
    if ((await Promise.race([drained, timeout])) !== 'drained') await this.nc.close().catch(() => undefined);
  }
}

/** A bus given as options (the source opens the link and closes it when it ends) or as a link someone else holds and closes. */
export type BusRef = BusOptions | BusLink;

/** The link of a source, and whether the source opened it (and so closes it). */
export async function linkFor(bus: BusRef, log: Logger): Promise<{ readonly link: BusLink; readonly owned: boolean }> {
  return bus instanceof BusLink ? { link: bus, owned: false } : { link: await BusLink.open(bus, log), owned: true };
}
