/**
 * The viewer's HTTP side, built without listening (tests call inject()):
 * the page (static.ts) and the query API under /api/v1 (api.ts has its
 * types). With a token, every request needs it: as `Authorization: Bearer`
 * or as the cookie that GET /login?token= sets for a browser.
 */
import Fastify, { type FastifyBaseLogger, type FastifyInstance, type FastifyReply } from 'fastify';
import type { Logger } from 'pino';
import { BadRequestError, RezolusError } from '../errors.js';
import { bearerMatches, isLoopback } from '../security/bearer.js';
import type { AlertsResult, MetricEntry, QueryFn, SaveRequest, SectionInfo } from './api.js';
import { NotFoundError, type ViewerData } from './data.js';
import { QueryError, runQuery } from './query/run.js';
import { OVERVIEW_METRICS, SECTIONS, defaultFn, sectionOf } from './query/sections.js';
import { registerWebRoutes } from './static.js';
import type { SeriesInfo } from './track.js';

export interface ViewerAppOptions {
  readonly data: ViewerData;
  /** the bearer token every request must carry; undefined = none (loopback) */
  readonly token: string | undefined;
  readonly log: Logger;
}

const COOKIE = 'rezolus_view_token';
const FNS: readonly QueryFn[] = ['value', 'rate', 'percentiles', 'heatmap'];
/** the range of a JavaScript Date */
const MAX_DATE_MS = 8.64e15;

function cookieToken(header: string | undefined): string | undefined {
  for (const part of (header ?? '').split(';')) {
    const [k, ...v] = part.trim().split('=');
    if (k !== COOKIE) continue;
    try {
      return decodeURIComponent(v.join('='));
    } catch {
      return undefined; // not percent-encoding (`%E0%A4%A`): no token, a 401, not a 500
    }
  }
  return undefined;
}

function str(q: Record<string, unknown>, key: string): string | undefined {
  const v = q[key];
  return typeof v === 'string' && v !== '' ? v : undefined;
}

function num(q: Record<string, unknown>, key: string, fallback: number): number {
  const v = str(q, key);
  if (v === undefined) return fallback;
  const n = Number(v);
  if (!Number.isFinite(n)) throw new BadRequestError(`${key} must be a number, got "${v}"`);
  return n;
}

/** `match=label=glob`, repeatable. */
function matchers(q: Record<string, unknown>): Record<string, string> {
  const raw = q.match;
  const list = raw === undefined ? [] : Array.isArray(raw) ? raw : [raw];
  // no prototype: `match=__proto__=x` is a label like any other, not a prototype to set
  const out: Record<string, string> = Object.create(null) as Record<string, string>;
  for (const m of list) {
    const text = String(m);
    const eq = text.indexOf('=');
    if (eq <= 0) throw new BadRequestError(`match must be label=glob, got "${text}"`);
    out[text.slice(0, eq)] = text.slice(eq + 1);
  }
  return out;
}

function send(reply: FastifyReply, error: unknown): FastifyReply {
  if (error instanceof NotFoundError) return reply.code(404).send({ error: error.message });
  if (error instanceof BadRequestError) return reply.code(400).send({ error: error.message });
  if (error instanceof QueryError) return reply.code(error.status).send({ error: error.message });
  if (error instanceof RezolusError && error.code === 'NOT_READY') return reply.code(503).send({ error: error.message });
  return reply.code(500).send({ error: error instanceof Error ? error.message : String(error) });
}

/** The metrics of a host's series, one entry per metric with its series. */
export function metricEntries(infos: readonly SeriesInfo[]): MetricEntry[] {
  const byName = new Map<string, { entry: Omit<MetricEntry, 'series'>; series: { id: string; labels: Readonly<Record<string, string>> }[] }>();
  for (const i of infos) {
    let m = byName.get(i.metric);
    if (m === undefined) {
      m = {
        entry: { name: i.metric, kind: i.kind, unit: i.unit, description: i.description ?? '', section: sectionOf(i.metric), labels: Object.keys(i.labels) },
        series: [],
      };
      byName.set(i.metric, m);
    }
    m.series.push({ id: i.id, labels: i.labels });
  }
  return [...byName.values()].map((m) => ({ ...m.entry, series: m.series })).sort((a, b) => (a.name < b.name ? -1 : 1));
}

/** Overview (the metrics of OVERVIEW_METRICS the host has), then every section that has a metric. */
export function sectionsOf(metrics: readonly MetricEntry[]): SectionInfo[] {
  const have = new Set(metrics.map((m) => m.name));
  const out: SectionInfo[] = [];
  const overview = OVERVIEW_METRICS.filter((m) => have.has(m));
  if (overview.length > 0) out.push({ name: 'Overview', metrics: overview });
  for (const name of SECTIONS) {
    if (name === 'Overview') continue;
    const ms = metrics.filter((m) => m.section === name).map((m) => m.name);
    if (ms.length > 0) out.push({ name, metrics: ms });
  }
  return out;
}

/** The host name of a Host header (`[::1]:80` → `::1`, `localhost:4000` → `localhost`). */
function hostName(header: string): string {
  if (header.startsWith('[')) return header.slice(1, header.indexOf(']') < 0 ? undefined : header.indexOf(']'));
  const colon = header.indexOf(':');
  return (colon < 0 ? header : header.slice(0, colon)).replace(/\.$/, '');
}

export function buildViewerApp(o: ViewerAppOptions): FastifyInstance {
  // the page polls several queries a second: requests are not worth a log line each, only failures
  const app: FastifyInstance = Fastify({ loggerInstance: o.log.child({}, { level: 'warn' }) as FastifyBaseLogger });
  const { data } = o;
  if (o.token !== undefined) {
    const token = o.token;
    app.get('/login', async (req, reply) => {
      const given = str(req.query as Record<string, unknown>, 'token');
      if (given === undefined || !bearerMatches(`Bearer ${given}`, token)) return reply.code(401).send({ error: 'wrong or missing token' });
      return reply.header('set-cookie', `${COOKIE}=${encodeURIComponent(given)}; HttpOnly; SameSite=Strict; Path=/`).redirect('/');
    });
    app.addHook('onRequest', async (req, reply) => {
      if (req.url.startsWith('/login')) return undefined;
      const fromCookie = cookieToken(req.headers.cookie);
      const header = req.headers.authorization ?? (fromCookie === undefined ? undefined : `Bearer ${fromCookie}`);
      if (!bearerMatches(header, token)) {
        return reply.code(401).header('www-authenticate', 'Bearer').send({ error: 'this viewer needs its token: open /login?token=<token>, or send Authorization: Bearer <token>' });
      }
      return undefined;
    });
  } else {
    // No token means loopback only, and only by a loopback name: a page of another site whose name is
    // rebound to 127.0.0.1 (DNS rebinding) would otherwise read the API and POST /api/v1/save as the same origin.
    app.addHook('onRequest', async (req, reply) => {
      const host = req.headers.host;
      if (host === undefined || isLoopback(hostName(host))) return undefined;
      return reply.code(403).send({ error: `this viewer answers on a loopback name (127.0.0.1, localhost, [::1]), not "${host}"; set REZOLUS_HTTP_TOKEN to reach it by another name` });
    });
  }
  registerWebRoutes(app);

  app.get('/api/v1/info', async () => data.info());

  app.get('/api/v1/hosts', async (req, reply) => {
    try {
      return await data.hosts(str(req.query as Record<string, unknown>, 'source'));
    } catch (error) {
      return send(reply, error);
    }
  });

  app.get('/api/v1/metrics', async (req, reply) => {
    const q = req.query as Record<string, unknown>;
    try {
      const host = str(q, 'host');
      if (host === undefined) throw new BadRequestError('host is required');
      return metricEntries(await data.series(str(q, 'source'), host));
    } catch (error) {
      return send(reply, error);
    }
  });

  app.get('/api/v1/sections', async (req, reply) => {
    const q = req.query as Record<string, unknown>;
    try {
      const host = str(q, 'host');
      if (host === undefined) throw new BadRequestError('host is required');
      return sectionsOf(metricEntries(await data.series(str(q, 'source'), host)));
    } catch (error) {
      return send(reply, error);
    }
  });

  app.get('/api/v1/query', async (req, reply) => {
    const q = req.query as Record<string, unknown>;
    try {
      const host = str(q, 'host');
      const metric = str(q, 'metric');
      const fn = str(q, 'fn');
      if (host === undefined || metric === undefined) throw new BadRequestError('host and metric are required');
      if (fn !== undefined && !FNS.includes(fn as QueryFn)) throw new BadRequestError(`fn must be one of ${FNS.join(', ')}, got "${fn}"`);
      const info = data.info();
      const source = info.sources.find((s) => s.name === (str(q, 'source') ?? info.sources[0]?.name));
      const start = num(q, 'start', source?.start ?? 0);
      const end = num(q, 'end', source?.end ?? Date.now());
      if (!(end > start)) throw new BadRequestError('end must be after start');
      const kind = (await data.series(str(q, 'source'), host)).find((i) => i.metric === metric)?.kind;
      if (kind === undefined) throw new NotFoundError(`host "${host}" has no metric "${metric}"`);
      const tracks = await data.tracks(str(q, 'source'), host, [metric]);
      return runQuery(tracks, { metric, fn: (fn as QueryFn | undefined) ?? defaultFn(kind), match: matchers(q), start, end, budget: num(q, 'budget', 600) });
    } catch (error) {
      return send(reply, error);
    }
  });

  app.get('/api/v1/alerts', async (req, reply) => {
    const q = req.query as Record<string, unknown>;
    try {
      const info = data.info();
      const source = info.sources[0];
      // live: the window, not the first frame's time (an alert may have fired before the agent's first frame in the stream)
      const from = num(q, 'from', info.windowMs !== undefined ? Date.now() - info.windowMs : (source?.start ?? 0));
      const to = num(q, 'to', Math.max(source?.end ?? 0, Date.now()));
      if (Math.abs(from) > MAX_DATE_MS || Math.abs(to) > MAX_DATE_MS) throw new BadRequestError(`from and to must be unix ms within ±${MAX_DATE_MS}`);
      if (to < from) throw new BadRequestError('to must not be before from');
      const result: AlertsResult = data.alerts?.(str(q, 'host'), from, to) ?? { from, to, events: [] };
      return result;
    } catch (error) {
      return send(reply, error);
    }
  });

  app.post('/api/v1/save', async (req, reply) => {
    if (data.save === undefined) return reply.code(400).send({ error: 'saving a window works on the live bus only (this viewer shows a file or an agent)' });
    const body = (req.body ?? {}) as Partial<SaveRequest>;
    try {
      if (!Array.isArray(body.hosts) || typeof body.start !== 'number' || typeof body.end !== 'number') {
        throw new BadRequestError('the body must be {"hosts": [...], "start": <unix ms>, "end": <unix ms>}');
      }
      return await data.save({ hosts: body.hosts.map(String), start: body.start, end: body.end });
    } catch (error) {
      return send(reply, error);
    }
  });

  return app;
}
