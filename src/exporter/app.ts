import Fastify, { type FastifyBaseLogger, type FastifyInstance } from 'fastify';
import type { Logger } from 'pino';
import type { SkipStats } from '../bus/subscribe.js';
import { VERSION } from '../version.js';
import { renderExposition, type ExtraSeries } from './render.js';
import type { ExporterState } from './state.js';
import type { MetricDecl } from '../metrics/metric.js';
import { framesSkipped, framesUsed, seriesDropped, sources } from './self-metrics.js';

export const CONTENT_TYPE = 'text/plain; version=0.0.4; charset=utf-8';

export interface ExporterAppOptions {
  readonly state: ExporterState;
  readonly skipped: SkipStats;
  readonly intervalMs: number;
  readonly forgetAfterMs: number;
  readonly percentiles: readonly number[];
  readonly log: Logger;
}

function own(m: MetricDecl, value: number, labels?: Record<string, string>): ExtraSeries {
  return { name: m.name, kind: m.kind as 'counter' | 'gauge', help: m.description, value, ...(labels ? { labels } : {}) };
}

/** The exporter's own figures, appended to every exposition. */
function selfSeries(o: ExporterAppOptions, dropped: { duplicates: number; conflicts: number; invalid: number }): ExtraSeries[] {
  const s = o.state.stats;
  const skipped = (reason: string, value: number): ExtraSeries => own(framesSkipped, value, { reason });
  return [
    own(framesUsed, s.ingested),
    skipped('garbage', o.skipped.garbage),
    skipped('unknown_descriptor', o.skipped.unknownDescriptor),
    skipped('invalid', o.skipped.invalid),
    skipped('out_of_order', s.outOfOrder),
    skipped('contested', s.contested),
    own(sources, o.state.size),
    own(seriesDropped, dropped.duplicates + dropped.conflicts + dropped.invalid),
  ];
}

/** Builds the HTTP app without listening (tests call inject()). */
export function buildExporterApp(o: ExporterAppOptions): FastifyInstance {
  const app: FastifyInstance = Fastify({ loggerInstance: o.log as FastifyBaseLogger });
  const intervalNs = BigInt(Math.round(o.intervalMs * 1e6));
  let lastDropped = { duplicates: 0, conflicts: 0, invalid: 0 };
  app.get('/', { logLevel: 'warn' }, async (_req, reply) =>
    reply.type('text/plain; charset=utf-8').send(`rezolus-nats ${VERSION} exporter\nmetrics: /metrics\n`),
  );
  app.get('/metrics', { logLevel: 'warn' }, async (_req, reply) => {
    o.state.forget(BigInt(Date.now() - o.forgetAfterMs) * 1_000_000n);
    const r = renderExposition(o.state.view(intervalNs), { percentiles: o.percentiles, extra: selfSeries(o, lastDropped) });
    lastDropped = { duplicates: r.duplicates, conflicts: r.conflicts, invalid: r.invalid };
    return reply.type(CONTENT_TYPE).send(r.text);
  });
  return app;
}
