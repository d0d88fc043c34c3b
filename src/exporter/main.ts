import type { FastifyInstance } from 'fastify';
import type { Logger } from 'pino';
import { emptySkipStats, type SkipStats } from '../sources/checks.js';
import { BusLink } from '../sources/link.js';
import { LiveSource } from '../sources/live.js';
import type { ExporterConfig } from '../config/exporter.js';
import { RezolusError } from '../errors.js';
import { ExporterAlerts } from './alerts.js';
import { buildExporterApp } from './app.js';
import { ExporterState } from './state.js';
import { closeHttpApp } from '../http/close.js';

export interface RunningExporter {
  readonly app: FastifyInstance;
  readonly url: string;
  readonly skipped: SkipStats;
  readonly state: ExporterState;
  /** resolves once frames are followed (the descriptor bucket exists); undefined when stopped before */
  readonly following: Promise<LiveSource | undefined>;
  /** the rezolus_alerts gauge: follows the alert state bucket once it exists */
  readonly alerts: ExporterAlerts;
  stop(): Promise<void>;
}

/**
 * Binds the HTTP port first (a busy port fails at once, and /metrics answers
 * even while NATS is away), then connects and follows frames as soon as an
 * agent has created the descriptor bucket.
 */
export async function runExporter(config: ExporterConfig, log: Logger): Promise<RunningExporter> {
  const state = new ExporterState({ intervalNs: BigInt(config.intervalMs) * 1_000_000n, oversample: config.oversampleMetrics });
  let link: BusLink | undefined;
  let alerts: ExporterAlerts | undefined;
  const skipped = emptySkipStats();
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
    natsConnected: () => link?.connected() ?? false,
    families: () => {
      const f = alerts?.family();
      return f === undefined ? [] : [f];
    },
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
  try {
    link = await BusLink.open({ url: config.natsUrl, name: 'rezolus-exporter', security: config.nats, waitOnFirstConnect: true }, log);
  } catch (error) {
    await app.close();
    throw error;
  }
  const bus = link;
  const alertGauge = new ExporterAlerts({ nc: bus.nc, hosts: config.hosts }, log.child({ component: 'alerts' }));
  alertGauge.start();
  alerts = alertGauge;
  const source = new LiveSource({ bus, hosts: config.hosts, waitForBucket: true, skipped }, log.child({ component: 'subscribe' }));
  const following = (async (): Promise<LiveSource | undefined> => {
    await source.start((f) => state.ingest(f, BigInt(Date.now()) * 1_000_000n));
    if (!source.following) return undefined;
    log.info({ hosts: config.hosts, subjects: source.subjects }, 'following frames');
    return source;
  })();
  return {
    app,
    url: `http://${shownHost.includes(':') ? `[${shownHost}]` : shownHost}:${port}/metrics`,
    skipped,
    state,
    following,
    alerts: alertGauge,
    async stop() {
      source.stop();
      // stops the watch at once; a try to open the bucket under way ends with the connection at the latest
      const alertsStopped = alertGauge.stop();
      await closeHttpApp(app);
      await following.catch(() => undefined);
      await source.done;
      await bus.close();
      await alertsStopped;
    },
  };
}
