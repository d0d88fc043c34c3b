import { mkdirSync } from 'node:fs';
import { connect } from 'node:net';
import type { Logger } from 'pino';
import { runAgent, type RunningAgent } from '../agent/main.js';
import type { AgentConfig } from '../config/agent.js';
import type { ExporterConfig } from '../config/exporter.js';
import type { HindsightConfig } from '../config/hindsight.js';
import { runHindsight, type RunningHindsight } from '../hindsight/main.js';
import { runExporter, type RunningExporter } from '../exporter/main.js';
import { join, resolve as resolvePath } from 'node:path';
import { takeLock } from '../files/lock.js';
import type { RezolusError } from '../errors.js';
import { startNatsServer, urlFileOf, type NatsServer } from './nats-server.js';
import { superviseNatsServer, type SupervisedNats } from './supervise.js';
import { runViewer, type RunningViewer } from '../viewer/main.js';
import { NO_NATS_SECURITY, type NatsSecurity } from '../config/nats.js';
import type { AlertsConfig } from '../config/alerts.js';
import { runAlert, type RunningAlert } from '../alert/main.js';

/**
 * The private server has no users and no TLS: credentials and CA files of
 * the configs are for a server given by URL. The inbox prefix stays.
 */
function forPrivateServer(s: NatsSecurity | undefined): NatsSecurity {
  return { ...NO_NATS_SECURITY, inboxPrefix: s?.inboxPrefix ?? '' };
}

export interface UpOptions {
  /** explicit URL (--nats, REZOLUS_NATS_URL or up.toml): use it, start nothing */
  readonly natsUrl: string | undefined;
  /** a port given with --nats-port: always start a private server there (0 = any free port) */
  readonly forcePrivatePort: number | undefined;
  readonly privatePort: number;
  readonly natsServer: string;
  readonly dataDir: string;
  readonly agent: Omit<AgentConfig, 'natsUrl'>;
  readonly exporter: Omit<ExporterConfig, 'natsUrl'>;
  readonly hindsight: Omit<HindsightConfig, 'natsUrl'>;
  /** the web viewer of the live bus; undefined = none */
  readonly viewer?: { readonly listen: { readonly host: string; readonly port: number }; readonly token: string | undefined } | undefined;
  /** the alert evaluator; undefined = none */
  readonly alert?: Omit<AlertsConfig, 'natsUrl'> | undefined;
}

export interface RunningUp {
  readonly natsUrl: string;
  /** the private server running now, when up started one (restarted when it dies) */
  readonly server: NatsServer | undefined;
  /** resolves when up cannot go on (its private server could not be kept up); then stop() and exit non-zero */
  readonly failed: Promise<RezolusError>;
  readonly agent: RunningAgent;
  readonly exporter: RunningExporter;
  readonly hindsight: RunningHindsight;
  readonly viewer: RunningViewer | undefined;
  readonly alert: RunningAlert | undefined;
  stop(): Promise<void>;
}

/** The lock file of a data directory: one `rezolus up` at a time runs its private server there. */
export const UP_LOCK = 'up.lock';

/**
 * Picks the NATS server: the explicit URL, else a private server of our own,
 * on the configured port, or on a free one when something else holds that
 * port. A server we did not start is never used without a URL: it may be a
 * shared one, and up would create its stream and buckets there. The data
 * directory is locked first: a second up there is refused with the owner's
 * pid, while a stale lock (its process gone) is taken over together with
 * the server that run may have left behind.
 */
async function chooseNats(o: UpOptions, log: Logger): Promise<{ url: string; nats: SupervisedNats | undefined; release: () => void }> {
  if (o.natsUrl !== undefined && o.natsUrl !== '') return { url: o.natsUrl, nats: undefined, release: () => undefined };
  const dataDir = resolvePath(o.dataDir);
  mkdirSync(dataDir, { recursive: true });
  const release = takeLock(join(dataDir, UP_LOCK), (pid) => {
    const url = urlFileOf(dataDir);
    return `${dataDir} is in use by another rezolus up (pid ${pid}${url === undefined ? '' : `, NATS ${url}`}): stop that one first, or give this one another --data-dir`;
  });
  try {
    let port = o.forcePrivatePort ?? o.privatePort;
    if (o.forcePrivatePort === undefined && port !== 0 && (await portTaken(port))) {
      log.warn({ port }, `port ${port} is taken (another NATS server?); the private nats-server takes a free port. To use that server instead, pass --nats nats://127.0.0.1:${port}`);
      port = 0;
    }
    const nats = await superviseNatsServer(startNatsServer, { binary: o.natsServer, port, dataDir }, log);
    log.info({ url: nats.url, server_pid: nats.server.pid, store: nats.server.storeDir }, 'started a private nats-server');
    return { url: nats.url, nats, release };
  } catch (error) {
    release();
    throw error;
  }
}

/** True when something accepts connections on 127.0.0.1:port. */
async function portTaken(port: number): Promise<boolean> {
  return new Promise((done) => {
    const socket = connect(port, '127.0.0.1');
    const finish = (taken: boolean): void => {
      socket.destroy();
      done(taken);
    };
    socket.setTimeout(1000, () => finish(false));
    socket.once('connect', () => finish(true));
    socket.once('error', () => finish(false));
  });
}

/** The embedded default: NATS (given or started), an agent, an exporter and a hindsight service in this process. */
export async function runUp(o: UpOptions, log: Logger): Promise<RunningUp> {
  const { url, nats, release } = await chooseNats(o, log);
  let agent: RunningAgent | undefined;
  let exporter: RunningExporter | undefined;
  let hindsight: RunningHindsight | undefined;
  let viewer: RunningViewer | undefined;
  let alert: RunningAlert | undefined;
  try {
    // The exporter binds its port first, so a busy port fails before anything else starts.
    const priv = nats !== undefined;
    exporter = await runExporter({ ...o.exporter, natsUrl: url, nats: priv ? forPrivateServer(o.exporter.nats) : o.exporter.nats }, log.child({ process: 'exporter' }));
    agent = await runAgent({ ...o.agent, natsUrl: url, nats: priv ? forPrivateServer(o.agent.nats) : o.agent.nats }, log.child({ process: 'agent' }));
    // after the agent: it creates the stream the hindsight service checks
    hindsight = await runHindsight({ ...o.hindsight, natsUrl: url, nats: priv ? forPrivateServer(o.hindsight.nats) : o.hindsight.nats }, log.child({ process: 'hindsight' }));
    if (o.viewer !== undefined) {
      const h = o.hindsight;
      viewer = await runViewer(
        {
          source: { kind: 'live', natsUrl: url, nats: priv ? forPrivateServer(h.nats) : h.nats, stream: h.stream, hosts: '*' },
          listen: o.viewer.listen,
          token: o.viewer.token,
          windowMs: undefined,
          saveDir: '.',
          saveIntervalMs: h.intervalMs,
        },
        log.child({ process: 'viewer' }),
      );
    }
    if (o.alert !== undefined) {
      alert = await runAlert({ ...o.alert, natsUrl: url, nats: priv ? forPrivateServer(o.alert.nats) : o.alert.nats }, log.child({ process: 'alert' }));
    }
    const [runningAgent, runningExporter, runningHindsight, runningViewer, runningAlert] = [agent, exporter, hindsight, viewer, alert];
    return {
      natsUrl: url,
      get server() {
        return nats?.server;
      },
      failed: nats?.failed ?? new Promise<RezolusError>(() => undefined),
      agent: runningAgent,
      exporter: runningExporter,
      hindsight: runningHindsight,
      viewer: runningViewer,
      alert: runningAlert,
      async stop() {
        await runningAlert?.stop();
        await runningViewer?.stop();
        await runningHindsight.stop();
        await runningExporter.stop();
        await runningAgent.stop();
        await nats?.stop();
        release();
      },
    };
  } catch (error) {
    await alert?.stop();
    await viewer?.stop();
    await hindsight?.stop();
    await exporter?.stop();
    await agent?.stop();
    await nats?.stop();
    release();
    throw error;
  }
}
