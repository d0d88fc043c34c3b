/**
 * A private Alertmanager (Debian's prometheus-alertmanager, 0.25 in
 * bookworm) on a loopback port with a temp config and store, clustering off.
 * It never outlives the test process where util-linux setpriv exists.
 */
import { spawn } from 'node:child_process';
import { existsSync, mkdtempSync, readdirSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { freePort } from '../../src/up/nats-server.js';

export const ALERTMANAGER_BIN = '/usr/bin/prometheus-alertmanager';
/** util-linux; arms the parent-death signal so a killed test run takes Alertmanager with it */
const SETPRIV_BIN = '/usr/bin/setpriv';
const DIR_BASE = 'rezolus-am-test-';
const DIR_PREFIX = join(tmpdir(), DIR_BASE);
const STORAGE_FLAG = '--storage.path=';
/** a temp dir this old with no Alertmanager on it is debris of a killed run */
const STALE_DIR_MS = 10 * 60_000;
const LOG_TAIL_CHARS = 8192;

/**
 * Cleans up after runs killed before their dispose ran: our Alertmanagers
 * orphaned to PID 1 (only possible where setpriv is missing), and old temp
 * dirs no running Alertmanager uses.
 */
function reapOrphans(): void {
  const inUse = new Set<string>();
  for (const pid of readdirSync('/proc').filter((d) => /^\d+$/.test(d))) {
    try {
      const cmd = readFileSync(`/proc/${pid}/cmdline`, 'utf8').split('\0');
      if (cmd[0] !== ALERTMANAGER_BIN) continue;
      const storage = cmd.find((a) => a.startsWith(STORAGE_FLAG))?.slice(STORAGE_FLAG.length) ?? '';
      const rest = storage.startsWith(DIR_PREFIX) ? storage.slice(DIR_PREFIX.length) : '';
      if (!/^[^/]+\/data$/.test(rest)) continue;
      const dir = storage.slice(0, -'/data'.length);
      const ppid = readFileSync(`/proc/${pid}/stat`, 'utf8').split(') ')[1]?.split(' ')[1];
      if (ppid === '1') {
        process.kill(Number(pid), 'SIGKILL');
        rmSync(dir, { recursive: true, force: true });
      } else {
        inUse.add(dir);
      }
    } catch {
      // the process ended meanwhile, or is not ours to read
    }
  }
  for (const name of readdirSync(tmpdir()).filter((n) => n.startsWith(DIR_BASE))) {
    const dir = join(tmpdir(), name);
    try {
      if (!inUse.has(dir) && Date.now() - statSync(dir).mtimeMs > STALE_DIR_MS) rmSync(dir, { recursive: true, force: true });
    } catch {
      // removed by someone else meanwhile
    }
  }
}
reapOrphans();

/** Our running Alertmanagers: killed if the test process exits before their dispose (one exit listener for all). */
const running = new Set<number>();
process.on('exit', () => {
  for (const pid of running) {
    try {
      process.kill(pid, 'SIGKILL');
    } catch {
      // gone already
    }
  }
});

/** One alert as `GET /api/v2/alerts` returns it (0.25). */
export interface GettableAlert {
  readonly labels: Record<string, string>;
  readonly annotations: Record<string, string>;
  readonly startsAt: string;
  readonly endsAt: string;
  readonly updatedAt: string;
  readonly generatorURL?: string;
  readonly fingerprint: string;
  readonly status: { readonly state: string; readonly silencedBy: string[]; readonly inhibitedBy: string[] };
  readonly receivers: { readonly name: string }[];
}

export interface AlertmanagerTestOptions {
  /** listen here (an Alertmanager that comes up where a forwarder already points); default a free port */
  readonly port?: number;
  /** a webhook receiver (send_resolved) for every alert; else a receiver that notifies nobody */
  readonly webhookUrl?: string;
  /** until /-/ready answers, default 30 s */
  readonly startTimeoutMs?: number;
}

export interface TestAlertmanager {
  /** http://127.0.0.1:<port> */
  readonly url: string;
  readonly port: number;
  readonly pid: number;
  readonly dir: string;
  /** GET /api/v2/alerts (active, silenced, inhibited and unprocessed ones; resolved ones are not listed) */
  alerts(): Promise<GettableAlert[]>;
  /** a sample of /metrics, e.g. metric('alertmanager_alerts_received_total', { status: 'resolved', version: 'v2' }); undefined when absent */
  metric(name: string, labels?: Readonly<Record<string, string>>): Promise<number | undefined>;
  /** the last lines it logged */
  log(): string;
  /** SIGTERM by pid, SIGKILL after a grace; resolves once the process is gone and its temp dir removed */
  dispose(): Promise<void>;
}

class PortTaken extends Error {}

export async function startAlertmanager(o: AlertmanagerTestOptions = {}): Promise<TestAlertmanager> {
  if (!existsSync(ALERTMANAGER_BIN)) {
    throw new Error(
      `Alertmanager not found at ${ALERTMANAGER_BIN}: apt-get install prometheus-alertmanager` +
        ` (npm test installs it when run as root${process.getuid?.() === 0 ? '' : '; this run is not root'})`,
    );
  }
  const dir = mkdtempSync(DIR_PREFIX);
  const configFile = join(dir, 'alertmanager.yml');
  // JSON is YAML. group_by ['...']: one group per alert; short waits so a notification follows a change at once
  const receiver = o.webhookUrl === undefined ? { name: 'nobody' } : { name: 'hook', webhook_configs: [{ url: o.webhookUrl, send_resolved: true }] };
  const config = {
    route: { receiver: receiver.name, group_by: ['...'], group_wait: '100ms', group_interval: '100ms', repeat_interval: '1h' },
    receivers: [receiver],
  };
  writeFileSync(configFile, `${JSON.stringify(config, null, 2)}\n`);
  try {
    // freePort() can race another process for the port: then Alertmanager exits at once and we try another
    for (let attempt = 1; ; attempt++) {
      try {
        return await launch(dir, configFile, o.port ?? (await freePort()), o.startTimeoutMs ?? 30_000);
      } catch (error) {
        if (!(error instanceof PortTaken) || o.port !== undefined || attempt === 3) throw error;
      }
    }
  } catch (error) {
    rmSync(dir, { recursive: true, force: true });
    throw error;
  }
}

async function launch(dir: string, configFile: string, port: number, startTimeoutMs: number): Promise<TestAlertmanager> {
  const url = `http://127.0.0.1:${port}`;
  const args = [
    `--config.file=${configFile}`,
    `${STORAGE_FLAG}${join(dir, 'data')}`,
    `--web.listen-address=127.0.0.1:${port}`,
    // empty: no cluster listener (no gossip port to collide on, no peers to wait for)
    '--cluster.listen-address=',
    '--log.level=warn',
  ];
  const withSetpriv = existsSync(SETPRIV_BIN);
  // setpriv execs Alertmanager (same pid) with PR_SET_PDEATHSIG armed: SIGKILL when this process dies, even by kill -9
  const child = withSetpriv
    ? spawn(SETPRIV_BIN, ['--pdeathsig', 'KILL', '--', ALERTMANAGER_BIN, ...args], { stdio: ['ignore', 'pipe', 'pipe'] })
    : spawn(ALERTMANAGER_BIN, args, { stdio: ['ignore', 'pipe', 'pipe'] });
  let log = '';
  const keep = (d: Buffer): void => {
    log = (log + d.toString()).slice(-LOG_TAIL_CHARS);
  };
  child.stdout?.on('data', keep);
  child.stderr?.on('data', keep);
  let gone = false;
  child.once('exit', () => {
    gone = true;
  });
  // 'close' comes after 'exit' once the pipes are drained; a failed spawn emits 'error' and no 'exit'
  const exited = new Promise<void>((resolve) => {
    child.once('close', () => resolve());
    child.once('error', (e) => {
      if (child.pid !== undefined) return; // a failed kill(), the process lives on
      keep(Buffer.from(`spawn: ${e.message}\n`));
      gone = true;
      resolve();
    });
  });
  const pid = child.pid;
  if (pid !== undefined) running.add(pid);
  child.once('exit', () => {
    if (pid !== undefined) running.delete(pid);
  });

  const dispose = async (): Promise<void> => {
    if (!gone && pid !== undefined) {
      process.kill(pid, 'SIGTERM');
      const timer = setTimeout(() => {
        if (!gone) process.kill(pid, 'SIGKILL');
      }, 5000);
      await exited;
      clearTimeout(timer);
    }
    rmSync(dir, { recursive: true, force: true });
  };

  const deadline = Date.now() + startTimeoutMs;
  for (;;) {
    if (gone) {
      await exited;
      const why = `alertmanager exited (${child.exitCode ?? child.signalCode}) at start: ${log.trim()}`;
      throw /address already in use/.test(log) ? new PortTaken(why) : new Error(why);
    }
    try {
      const r = await fetch(`${url}/-/ready`, { signal: AbortSignal.timeout(1000) });
      await r.text();
      if (r.status === 200) break;
    } catch {
      // not listening yet
    }
    if (Date.now() > deadline) {
      await dispose();
      throw new Error(`alertmanager not ready on ${url} after ${startTimeoutMs} ms: ${log.trim()}`);
    }
    await new Promise((r) => setTimeout(r, 50));
  }

  return {
    url,
    port,
    pid: pid as number,
    dir,
    async alerts() {
      const r = await fetch(`${url}/api/v2/alerts?active=true&silenced=true&inhibited=true&unprocessed=true`, { signal: AbortSignal.timeout(10_000) });
      if (r.status !== 200) throw new Error(`GET ${url}/api/v2/alerts: HTTP ${r.status}: ${await r.text()}`);
      return (await r.json()) as GettableAlert[];
    },
    async metric(name, labels = {}) {
      const r = await fetch(`${url}/metrics`, { signal: AbortSignal.timeout(10_000) });
      const text = await r.text();
      const want = Object.entries(labels);
      for (const line of text.split('\n')) {
        const m = /^([a-zA-Z_:][a-zA-Z0-9_:]*)(?:\{(.*)\})? (\S+)$/.exec(line);
        if (m === null || m[1] !== name) continue;
        const have = new Map([...(m[2] ?? '').matchAll(/([a-zA-Z_][a-zA-Z0-9_]*)="((?:[^"\\]|\\.)*)"/g)].map((x) => [x[1], x[2]]));
        if (want.every(([k, v]) => have.get(k) === v)) return Number(m[3]);
      }
      return undefined;
    },
    log: () => log,
    dispose,
  };
}

/** A POST an AlertProxy passed on: the alerts in it and what Alertmanager answered. */
export interface ProxiedPost {
  readonly alerts: { labels: Record<string, string>; annotations: Record<string, string>; startsAt: string; endsAt?: string }[];
  /** 0 until Alertmanager answered (a POST is kept before it is passed on, so whatever Alertmanager lists was kept) */
  status: number;
}

export interface AlertProxy {
  /** http://127.0.0.1:<port>, to give a forwarder instead of the Alertmanager's URL */
  readonly url: string;
  /** every POST so far, in order */
  readonly posts: ProxiedPost[];
  close(): Promise<void>;
}

/**
 * A loopback HTTP server that passes each request on to a real Alertmanager
 * and keeps the alerts of each POST: what a forwarder sent, batch by batch,
 * including resolved alerts that `GET /api/v2/alerts` no longer lists.
 */
export async function startAlertProxy(am: Pick<TestAlertmanager, 'url'>): Promise<AlertProxy> {
  const posts: ProxiedPost[] = [];
  const server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      const body = Buffer.concat(chunks);
      void (async () => {
        const post: ProxiedPost | undefined = req.method === 'POST' ? { alerts: JSON.parse(body.toString()) as ProxiedPost['alerts'], status: 0 } : undefined;
        if (post !== undefined) posts.push(post);
        try {
          const r = await fetch(`${am.url}${req.url ?? '/'}`, {
            method: req.method ?? 'GET',
            headers: { 'content-type': req.headers['content-type'] ?? 'application/json' },
            ...(req.method === 'POST' ? { body } : {}),
            signal: AbortSignal.timeout(10_000),
          });
          const text = await r.text();
          if (post !== undefined) post.status = r.status;
          res.writeHead(r.status, { 'content-type': r.headers.get('content-type') ?? 'text/plain' }).end(text);
        } catch (error) {
          res.writeHead(502).end(String(error));
        }
      })();
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}`,
    posts,
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}
