import type { Socket } from 'node:net';
import Fastify, { type FastifyBaseLogger, type FastifyInstance, type FastifyReply } from 'fastify';
import type { Logger } from 'pino';
import type { SkipStats } from '../sources/checks.js';
import { VERSION } from '../version.js';
import { BodyBuffers } from './body-buffers.js';
import { threadCpuMs } from './thread-cpu.js';
import { RenderPacer, type RenderPacerOptions } from './pacer.js';
import { processMetrics } from './process-metrics.js';
import { renderExposition, type RawFamily, type RenderOptions } from './render.js';
import { ownSeries } from './self-metrics.js';
import type { ExporterState } from './state.js';

export const CONTENT_TYPE = 'text/plain; version=0.0.4; charset=utf-8';

export interface ExporterAppOptions {
  readonly state: ExporterState;
  readonly skipped: SkipStats;
  readonly intervalMs: number;
  readonly forgetAfterMs: number;
  /** how histograms and oversampled counters are rendered */
  readonly render: Omit<RenderOptions, 'extra' | 'families'>;
  /** families rendered whole elsewhere (the alerts gauge), asked for on each scrape */
  readonly families?: () => readonly RawFamily[];
  /** whether NATS is connected now; absent = not known, no series */
  readonly natsConnected?: () => boolean;
  /** serve the process_* and nodejs_* families; default true */
  readonly processMetrics?: boolean;
  /** when a scrape gets the last render's body again instead of a new one (pacer.ts) */
  readonly pacing?: RenderPacerOptions;
  /** where bodies are written: into the memory of earlier ones no reply sends any more (body-buffers.ts, the default), or false: new memory each render */
  readonly bodies?: BodyBuffers | false;
  readonly log: Logger;
}

/** At most one warning a minute that scrapes get an earlier body. */
const REUSE_WARN_MS = 60_000;

/**
 * Holds `body` for `reply` until Node no longer needs its bytes: the reply's
 * 'close' (after its last write completed, or its connection closed), or
 * the socket's 'close' for a reply queued behind another on a pipelining
 * connection that went away (such a reply never gets one of its own).
 */
function holdUntilSent(buffers: BodyBuffers, reply: FastifyReply, body: Buffer): void {
  buffers.hold(body);
  const res = reply.raw;
  // the request's: a reply queued behind another has no socket of its own yet
  const socket = reply.request.raw.socket as Socket | undefined;
  let forget: (() => void) | undefined;
  const release = (): void => {
    res.off('close', release);
    forget?.();
    buffers.done(body);
  };
  res.once('close', release);
  if (socket !== undefined) forget = onSocketClose(socket, release);
}

/** per socket, what to call when it closes: one listener a socket, however many replies it pipelines */
const socketCloses = new WeakMap<Socket, Set<() => void>>();

/** Calls `fn` when `socket` closes; the function returned takes it back. */
function onSocketClose(socket: Socket, fn: () => void): () => void {
  let pending = socketCloses.get(socket);
  if (pending === undefined) {
    const set = new Set<() => void>();
    pending = set;
    socketCloses.set(socket, set);
    socket.once('close', () => {
      socketCloses.delete(socket);
      for (const f of set) f();
    });
  }
  const set = pending;
  set.add(fn);
  return () => void set.delete(fn);
}

/** Builds the HTTP app without listening (tests call inject()). */
export function buildExporterApp(o: ExporterAppOptions): FastifyInstance {
  const app: FastifyInstance = Fastify({ loggerInstance: o.log as FastifyBaseLogger });
  const intervalNs = BigInt(Math.round(o.intervalMs * 1e6));
  const processFamilies = o.processMetrics === false ? undefined : processMetrics();
  let lastDropped = 0;
  const pacer = new RenderPacer<Buffer>(o.pacing);
  let warnedAt = Number.NEGATIVE_INFINITY;
  // bodies are written into the memory of earlier ones once no reply sends them any more
  const buffers = o.bodies === false ? undefined : (o.bodies ?? new BodyBuffers());
  /** the body the pacer keeps, held for it */
  let paced: Buffer | undefined;
  const send = (reply: FastifyReply, body: Buffer): FastifyReply => {
    // a reply whose client went away while it waited has had its 'close' already (or, queued on a
    // pipelining connection, its socket's), and sends nothing
    if (buffers !== undefined && !reply.raw.destroyed && reply.request.raw.socket?.destroyed !== true) holdUntilSent(buffers, reply, body);
    return reply.type(CONTENT_TYPE).send(body);
  };
  app.get('/', { logLevel: 'warn' }, async (_req, reply) =>
    reply.type('text/plain; charset=utf-8').send(`rezolus-nats ${VERSION} exporter\nmetrics: /metrics\n`),
  );
  app.get('/metrics', { logLevel: 'warn' }, async (_req, reply) => {
    const again = pacer.reuse(pacer.now());
    if (again !== undefined) {
      const now = performance.now();
      if (now - warnedAt >= REUSE_WARN_MS) {
        warnedAt = now;
        o.log.warn(
          { reused: pacer.reused },
          'renders of /metrics take over a third of the time: a scrape soon after one gets its body again, so that frames are still read (shard the exporter: README, Sizing)',
        );
      }
      return send(reply, again);
    }
    // the process metrics first (prom-client is async), then the state's figures and the render, sent as one buffer
    const trailer = processFamilies === undefined ? '' : await processFamilies.text().catch(() => '');
    const started = pacer.now();
    const cpu = threadCpuMs();
    const nowMs = Date.now();
    o.state.forget(BigInt(nowMs - o.forgetAfterMs) * 1_000_000n);
    const extra = ownSeries({
      state: o.state, skipped: o.skipped, dropped: lastDropped, reused: pacer.reused, nowMs, natsConnected: o.natsConnected?.(),
    });
    const r = renderExposition(o.state.view(intervalNs), {
      ...o.render, extra, families: o.families?.() ?? [], trailer, ...(buffers === undefined ? {} : { bodyBuffer: (size: number) => buffers.take(size) }),
    });
    lastDropped = r.duplicates + r.conflicts + r.invalid;
    const kept = pacer.rendered(r.body, started, pacer.now(), threadCpuMs() - cpu);
    // a body is held for the pacer while it may serve it again
    if (kept) buffers?.hold(r.body);
    if (paced !== undefined) buffers?.done(paced);
    paced = kept ? r.body : undefined;
    return send(reply, r.body);
  });
  return app;
}
