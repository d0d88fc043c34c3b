/**
 * `rezolus view`: picks the data (the live bus, one or two recordings, an
 * agent's HTTP), builds the app and listens. The port is bound before any
 * source connects, so the page answers (and says what is missing) while
 * NATS or the agent is away.
 */
import type { FastifyInstance } from 'fastify';
import type { Logger } from 'pino';
import { ConfigError, RezolusError } from '../errors.js';
import { unwritableReason } from '../files/writable.js';
import { BusLink } from '../sources/link.js';
import type { NatsSecurity } from '../config/nats.js';
import { AgentData } from './agent-data.js';
import { buildViewerApp } from './app.js';
import type { ViewerData } from './data.js';
import { FileData } from './file-data.js';
import { LiveData } from './live/live-data.js';
import { VERSION } from '../version.js';
import { closeHttpApp } from '../http/close.js';

export type ViewSource =
  | { readonly kind: 'live'; readonly natsUrl: string; readonly nats?: NatsSecurity | undefined; readonly stream: string; readonly hosts: string }
  | { readonly kind: 'files'; readonly files: readonly { readonly name: string; readonly path: string }[] }
  | { readonly kind: 'agent'; readonly url: string; readonly intervalMs: number };

export interface ViewConfig {
  readonly source: ViewSource;
  readonly listen: { readonly host: string; readonly port: number };
  readonly token: string | undefined;
  /** live: how far back host pages reach (undefined = the stream's max_age); agent: what is kept */
  readonly windowMs: number | undefined;
  /** live: where "save this window" writes, and the row interval of those files */
  readonly saveDir: string;
  readonly saveIntervalMs: number;
}

export interface RunningViewer {
  readonly app: FastifyInstance;
  readonly url: string;
  readonly data: ViewerData;
  stop(): Promise<void>;
}

/** How long the live viewer waits between tries while NATS does not answer. */
const RETRY_MS = 2000;

/**
 * Connects to NATS, trying again every RETRY_MS until a server answers or
 * `stopped()`; each failure goes to `failed` (the page shows it).
 */
async function openLink(s: Extract<ViewSource, { kind: 'live' }>, log: Logger, stopped: () => boolean, failed: (why: string) => void): Promise<BusLink | undefined> {
  for (let warned = false; !stopped(); ) {
    try {
      return await BusLink.open({ url: s.natsUrl, security: s.nats, name: 'rezolus-view', waitOnFirstConnect: false }, log);
    } catch (error) {
      failed(error instanceof Error ? error.message : String(error));
      if (!warned) log.warn({ url: s.natsUrl, err: error }, 'NATS does not answer; trying again every 2 s');
      warned = true;
      await new Promise((r) => setTimeout(r, RETRY_MS));
    }
  }
  return undefined;
}

async function openData(config: ViewConfig, log: Logger, stopped: () => boolean, failed: (why: string) => void): Promise<{ data: ViewerData; start: () => Promise<void> } | undefined> {
  const s = config.source;
  if (s.kind === 'files') {
    const data = await FileData.open(s.files, log);
    return { data, start: () => Promise.resolve() };
  }
  if (s.kind === 'agent') {
    const data = new AgentData({ url: s.url, intervalMs: s.intervalMs, windowMs: config.windowMs ?? 15 * 60_000 }, log);
    return { data, start: () => data.start() };
  }
  const link = await openLink(s, log, stopped, failed);
  if (link === undefined) return undefined;
  const data = new LiveData(
    { link, natsUrl: s.natsUrl, stream: s.stream, hosts: s.hosts, windowMs: config.windowMs, saveDir: config.saveDir, saveIntervalMs: config.saveIntervalMs },
    log,
  );
  const close = data.close.bind(data);
  data.close = async () => {
    await close();
    await link.close();
  };
  return { data, start: () => data.start() };
}

/** A stand-in while the live link is still connecting: the page says so. */
function connecting(location: string, why: () => string | undefined): ViewerData {
  return {
    info: () => ({
      mode: 'live', sources: [{ name: 'live', location, start: Date.now() - 60_000, end: Date.now(), hosts: [] }], canSave: false, version: VERSION,
      problem: `connecting to NATS at ${location}${why() === undefined ? '' : `: ${why()}`}`,
    }),
    hosts: () => Promise.resolve([]),
    series: () => Promise.reject(new RezolusError('NOT_READY', `still connecting to NATS at ${location}`)),
    tracks: () => Promise.reject(new RezolusError('NOT_READY', `still connecting to NATS at ${location}`)),
    close: () => Promise.resolve(),
  };
}

export async function runViewer(config: ViewConfig, log: Logger): Promise<RunningViewer> {
  // "save as recording" writes there: refused now rather than when a user clicks it
  if (config.source.kind === 'live') {
    const unwritable = unwritableReason(config.saveDir, false);
    if (unwritable !== undefined) throw new ConfigError(`--save-dir ${config.saveDir}: ${unwritable}`);
  }
  // files are read before listening: a bad file is a bad argument, not a page
  let stopped = false;
  let lastFailure: string | undefined;
  const failed = (why: string): void => {
    lastFailure = why;
  };
  const opened = config.source.kind === 'files' ? await openData(config, log, () => stopped, failed) : undefined;
  let data: ViewerData = opened?.data ?? connecting(config.source.kind === 'live' ? config.source.natsUrl : (config.source as { url: string }).url, () => lastFailure);
  const proxy: ViewerData = {
    info: () => data.info(),
    hosts: (s) => data.hosts(s),
    series: (s, h) => data.series(s, h),
    tracks: (s, h, m) => data.tracks(s, h, m),
    alerts: (h, from, to) => data.alerts?.(h, from, to) ?? { from, to, events: [] },
    save: (r) => (data.save === undefined ? Promise.reject(new RezolusError('NOT_READY', 'not connected yet')) : data.save(r)),
    close: () => data.close(),
  };
  if (opened !== undefined && opened.data.save === undefined) delete (proxy as { save?: unknown }).save;
  const app = buildViewerApp({ data: proxy, token: config.token, log: log.child({ component: 'http' }) });
  const { host, port: wantedPort } = config.listen;
  try {
    await app.listen({ host, port: wantedPort });
  } catch (error) {
    await app.close();
    await opened?.data.close();
    const code = (error as { code?: string }).code ?? String(error);
    throw new RezolusError('LISTEN_FAILED', `cannot listen on ${host}:${wantedPort} (${code}); choose another with --listen`, { cause: error });
  }
  const port = (app.server.address() as { port: number }).port;
  const shownHost = host === '0.0.0.0' || host === '::' ? 'localhost' : host;
  const url = `http://${shownHost.includes(':') ? `[${shownHost}]` : shownHost}:${port}/`;
  const connected = (async () => {
    if (opened !== undefined) return;
    const o = await openData(config, log, () => stopped, failed);
    if (o === undefined) return;
    if (stopped) {
      await o.data.close();
      return;
    }
    data = o.data;
    await o.start();
  })().catch((error: unknown) => log.error({ err: error }, 'the viewer cannot read its source'));
  return {
    app,
    url,
    get data() {
      return data;
    },
    async stop() {
      stopped = true;
      await closeHttpApp(app);
      await connected;
      await data.close();
    },
  };
}
