import type { NatsConnection } from '@nats-io/nats-core';
import type { KV } from '@nats-io/kv';
import type { FastifyInstance } from 'fastify';
import type { Logger } from 'pino';
import { connectBus, connectionState, type ConnectionState } from '../bus/connect.js';
import { DescriptorCache } from '../bus/descriptors.js';
import { openDescriptorBucket } from '../bus/kv.js';
import { emptySkipStats, type SkipStats } from '../bus/subscribe.js';
import { subscribeFrames, type LiveSubscription } from '../bus/live.js';
import type { ExporterConfig } from '../config/exporter.js';
import { RezolusError } from '../errors.js';
import { buildExporterApp } from './app.js';
import { ExporterState } from './state.js';

export interface RunningExporter {
  readonly app: FastifyInstance;
  readonly url: string;
  readonly skipped: SkipStats;
  readonly state: ExporterState;
  /** resolves once frames are followed (the descriptor bucket exists) */
  readonly following: Promise<LiveSubscription | undefined>;
  stop(): Promise<void>;
}

const BUCKET_RETRY_MS = 1000;

/** Waits for the descriptor bucket: the exporter may start before any agent has created it. */
async function waitForBucket(nc: NatsConnection, log: Logger, stopped: () => boolean): Promise<KV | undefined> {
  for (let warned = false; !stopped(); ) {
    try {
      return await openDescriptorBucket(nc);
    } catch (error) {
      if (!warned) log.info({ error: String(error) }, 'descriptor bucket not there yet; waiting for an agent');
      warned = true;
      await new Promise((r) => setTimeout(r, BUCKET_RETRY_MS));
    }
  }
  return undefined;
}

/**
 * Binds the HTTP port first (a busy port fails at once, and /metrics answers
 * even while NATS is away), then connects and follows frames as soon as an
 * agent has created the descriptor bucket.
 */
export async function runExporter(config: ExporterConfig, log: Logger): Promise<RunningExporter> {
  const state = new ExporterState({ intervalNs: BigInt(config.intervalMs) * 1_000_000n, oversample: config.oversampleMetrics });
  const skipped = emptySkipStats();
  let conn: ConnectionState | undefined;
  const app = buildExporterApp({
    state,
    skipped,
    intervalMs: config.intervalMs,
    forgetAfterMs: config.forgetAfterMs,
    render: {
      summaries: config.summaries,
      percentiles: config.percentiles,
      histograms: config.histograms,
      histogramGroupingPower: config.histogramGroupingPower,
      ratePercentiles: config.oversamplePercentiles,
    },
    natsConnected: () => conn?.connected ?? false,
    log: log.child({ component: 'http' }),
  });
  const { host, port: wantedPort } = config.listen;
  try {
    await app.listen({ host, port: wantedPort });
  } catch (error) {
    await app.close();
    const code = (error as { code?: string }).code ?? String(error);
    throw new RezolusError('LISTEN_FAILED', `cannot listen on ${host}:${wantedPort} (${code}); choose another with --listen`, { cause: error });
  }
  const port = (app.server.address() as { port: number }).port;
  const shownHost = host === '0.0.0.0' || host === '::' ? 'localhost' : host;
  log.info({ url: config.natsUrl }, 'connecting to NATS (waits until a server answers)');
  let nc: NatsConnection;
  try {
    nc = await connectBus({ url: config.natsUrl, name: 'rezolus-exporter', log: log.child({ component: 'nats' }), security: config.nats });
  } catch (error) {
    await app.close();
    throw error;
  }
  conn = connectionState(nc);
  let stopped = false;
  const following = (async (): Promise<LiveSubscription | undefined> => {
    const kv = await waitForBucket(nc, log, () => stopped);
    if (kv === undefined) return undefined;
    const cache = new DescriptorCache(kv, log.child({ component: 'descriptors' }));
    const sub = subscribeFrames(nc, config.hosts, cache, (f) => state.ingest(f, BigInt(Date.now()) * 1_000_000n), log.child({ component: 'subscribe' }), skipped);
    log.info({ hosts: config.hosts, subjects: sub.subjects }, 'following frames');
    return sub;
  })();
  return {
    app,
    url: `http://${shownHost.includes(':') ? `[${shownHost}]` : shownHost}:${port}/metrics`,
    skipped,
    state,
    following,
    async stop() {
      stopped = true;
      await app.close();
      await (await following)?.close();
      await nc.drain().catch(() => nc.close());
    },
  };
}
