import Fastify, { type FastifyBaseLogger, type FastifyInstance } from 'fastify';
import type { Logger } from 'pino';
import type { SkipStats } from '../bus/subscribe.js';
import type { MetricDecl } from '../metrics/metric.js';
import { VERSION } from '../version.js';
import { processMetrics } from './process-metrics.js';
import { renderExposition, type ExtraSeries, type RenderOptions } from './render.js';
import * as self from './self-metrics.js';
import type { ExporterState } from './state.js';

export const CONTENT_TYPE = 'text/plain; version=0.0.4; charset=utf-8';

export interface ExporterAppOptions {
  readonly state: ExporterState;
  readonly skipped: SkipStats;
  readonly intervalMs: number;
  readonly forgetAfterMs: number;
  /** how histograms and oversampled counters are rendered */
  readonly render: Omit<RenderOptions, 'extra'>;
  /** whether NATS is connected now; absent = not known, no series */
  readonly natsConnected?: () => boolean;
  /** serve the process_* and nodejs_* families; default true */
  readonly processMetrics?: boolean;
  readonly log: Logger;
}

function own(m: MetricDecl, value: number, labels?: Record<string, string>): ExtraSeries {
  return { name: m.name, kind: m.kind as 'counter' | 'gauge', unit: m.unit, help: m.description, value, ...(labels ? { labels } : {}) };
}

/** The exporter's own figures, appended to every exposition. */
function selfSeries(o: ExporterAppOptions, dropped: number, nowMs: number): ExtraSeries[] {
  const s = o.state.stats;
  const k = o.skipped;
  const skipped = (reason: string, value: number): ExtraSeries => own(self.framesSkipped, value, { reason });
  const received = s.ingested + s.outOfOrder + s.contested + k.garbage + k.unknownDescriptor + k.invalid + k.wrongSubject;
  const last = o.state.lastFrameByHost();
  const out = [
    own(self.framesReceived, received),
    own(self.framesUsed, s.ingested),
    skipped('garbage', k.garbage),
    skipped('unknown_descriptor', k.unknownDescriptor),
    skipped('invalid', k.invalid),
    skipped('wrong_subject', k.wrongSubject),
    skipped('out_of_order', s.outOfOrder),
    skipped('contested', s.contested),
    own(self.hosts, last.size),
    own(self.sources, o.state.size),
    own(self.seriesDropped, dropped),
  ];
  for (const host of [...last.keys()].sort()) {
    out.push(own(self.lastFrameAge, Math.max(0, nowMs - Number((last.get(host) as bigint) / 1_000_000n)), { host }));
  }
  if (o.natsConnected !== undefined) out.push(own(self.natsConnected, o.natsConnected() ? 1 : 0));
  return out;
}

/** Builds the HTTP app without listening (tests call inject()). */
export function buildExporterApp(o: ExporterAppOptions): FastifyInstance {
  const app: FastifyInstance = Fastify({ loggerInstance: o.log as FastifyBaseLogger });
  const intervalNs = BigInt(Math.round(o.intervalMs * 1e6));
  const processFamilies = o.processMetrics === false ? undefined : processMetrics();
  let lastDropped = 0;
  app.get('/', { logLevel: 'warn' }, async (_req, reply) =>
    reply.type('text/plain; charset=utf-8').send(`rezolus-nats ${VERSION} exporter\nmetrics: /metrics\n`),
  );
  app.get('/metrics', { logLevel: 'warn' }, async (_req, reply) => {
    const nowMs = Date.now();
    o.state.forget(BigInt(nowMs - o.forgetAfterMs) * 1_000_000n);
    const r = renderExposition(o.state.view(intervalNs), { ...o.render, extra: selfSeries(o, lastDropped, nowMs) });
    lastDropped = r.duplicates + r.conflicts + r.invalid;
    const tail = processFamilies === undefined ? '' : await processFamilies.text().catch(() => '');
    return reply.type(CONTENT_TYPE).send(r.text + tail);
  });
  return app;
}
