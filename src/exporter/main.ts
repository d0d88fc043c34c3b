import type { NatsConnection } from '@nats-io/nats-core';
import type { FastifyInstance } from 'fastify';
import type { Logger } from 'pino';
import { connectBus } from '../bus/connect.js';
import { DescriptorCache } from '../bus/descriptors.js';
import { openDescriptorBucket } from '../bus/kv.js';
import { subscribeFrames, type LiveSubscription } from '../bus/subscribe.js';
import type { ExporterConfig } from '../config/exporter.js';
import { buildExporterApp } from './app.js';
import { ExporterState } from './state.js';

export interface RunningExporter {
  readonly app: FastifyInstance;
  readonly url: string;
  readonly subscription: LiveSubscription;
  readonly state: ExporterState;
  stop(): Promise<void>;
}

const BUCKET_RETRY_MS = 1000;

/** Waits for the descriptor bucket: the exporter may start before any agent has created it. */
async function waitForBucket(nc: NatsConnection, log: Logger): ReturnType<typeof openDescriptorBucket> {
  for (let warned = false; ; ) {
    try {
      return await openDescriptorBucket(nc);
    } catch (error) {
      if (!warned) log.info({ error: String(error) }, 'descriptor bucket not there yet; waiting for an agent');
      warned = true;
      await new Promise((r) => setTimeout(r, BUCKET_RETRY_MS));
    }
  }
}

export async function runExporter(config: ExporterConfig, log: Logger): Promise<RunningExporter> {
  const nc = await connectBus({ url: config.natsUrl, name: 'rezolus-exporter', log: log.child({ component: 'nats' }) });
  const state = new ExporterState({ intervalNs: BigInt(config.intervalMs) * 1_000_000n });
  const kv = await waitForBucket(nc, log);
  const cache = new DescriptorCache(kv, log.child({ component: 'descriptors' }));
  const subscription = subscribeFrames(nc, config.hosts, cache, (f) => state.ingest(f), log.child({ component: 'subscribe' }));
  const app = buildExporterApp({
    state,
    skipped: subscription.skipped,
    intervalMs: config.intervalMs,
    forgetAfterMs: config.forgetAfterMs,
    percentiles: config.percentiles,
    log: log.child({ component: 'http' }),
  });
  const address = await app.listen({ host: config.listen.host, port: config.listen.port });
  log.info({ address, hosts: config.hosts, subjects: subscription.subjects }, 'exporter listening');
  const port = (app.server.address() as { port: number }).port;
  const shownHost = config.listen.host === '0.0.0.0' || config.listen.host === '::' ? 'localhost' : config.listen.host;
  return {
    app,
    url: `http://${shownHost.includes(':') ? `[${shownHost}]` : shownHost}:${port}/metrics`,
    subscription,
    state,
    async stop() {
      await app.close();
      await subscription.close();
      await nc.drain().catch(() => nc.close());
    },
  };
}
