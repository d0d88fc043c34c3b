import { spawn } from 'node:child_process';
import { existsSync, mkdtempSync, readdirSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { freePort } from '../../src/up/nats-server.js';

export const PROMETHEUS_BIN = '/usr/bin/prometheus';
/** util-linux; arms the parent-death signal so a killed test run takes Prometheus with it */
const SETPRIV_BIN = '/usr/bin/setpriv';
const DIR_BASE = 'rezolus-prom-test-';
const DIR_PREFIX = join(tmpdir(), DIR_BASE);
const STORAGE_FLAG = '--storage.tsdb.path=';
/** a temp dir this old with no Prometheus on it is debris of a killed run */
const STALE_DIR_MS = 10 * 60_000;
const LOG_TAIL_CHARS = 8192;

/** Our Prometheus processes (by their storage path) and the temp dir each one uses. */
function ownProcesses(): { pid: number; ppid: string; dir: string }[] {
  const found: { pid: number; ppid: string; dir: string }[] = [];
  for (const pid of readdirSync('/proc').filter((d) => /^\d+$/.test(d))) {
    try {
      const cmd = readFileSync(`/proc/${pid}/cmdline`, 'utf8').split('\0');
      if (cmd[0] !== PROMETHEUS_BIN) continue;
      const storage = cmd.find((a) => a.startsWith(STORAGE_FLAG))?.slice(STORAGE_FLAG.length) ?? '';
      const rest = storage.startsWith(DIR_PREFIX) ? storage.slice(DIR_PREFIX.length) : '';
      if (!/^[^/]+\/data$/.test(rest)) continue;
      const ppid = readFileSync(`/proc/${pid}/stat`, 'utf8').split(') ')[1]?.split(' ')[1] ?? '';
      found.push({ pid: Number(pid), ppid, dir: storage.slice(0, -'/data'.length) });
    } catch {
      // the process ended meanwhile, or is not ours to read
    }
  }
  return found;
}

/**
 * Cleans up after runs killed before their dispose ran: Prometheus servers
 * orphaned to PID 1 that use one of our temp dirs (only possible where setpriv
 * is missing), and old temp dirs no running Prometheus uses.
 */
function reapOrphans(): void {
  const live = ownProcesses();
  for (const p of live.filter((q) => q.ppid === '1')) {
    try {
      process.kill(p.pid, 'SIGKILL');
      rmSync(p.dir, { recursive: true, force: true });
    } catch {
      // gone already
    }
  }
  const inUse = new Set(live.filter((q) => q.ppid !== '1').map((q) => q.dir));
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

export interface PromSample {
  /** all labels, __name__ included when the result is a series */
  readonly metric: Readonly<Record<string, string>>;
  /** the value exactly as Prometheus wrote it */
  readonly raw: string;
  readonly value: number;
  /** evaluation time, seconds since the epoch */
  readonly timestamp: number;
}

export interface PrometheusOptions {
  /** host:port of each exporter to scrape */
  readonly targets: readonly string[];
  /** scrape interval (and timeout), default 1000 */
  readonly scrapeIntervalMs?: number;
  /** default "rezolus" */
  readonly jobName?: string;
  /** until /-/ready answers, default 30 s */
  readonly startTimeoutMs?: number;
}

export interface TestPrometheus {
  /** http://127.0.0.1:<port> */
  readonly url: string;
  readonly port: number;
  readonly pid: number;
  readonly jobName: string;
  /** temp dir holding prometheus.yml and the TSDB */
  readonly dir: string;
  /** seconds from spawn to /-/ready */
  readonly readySeconds: number;
  /** An instant query through /api/v1/query; a scalar or string comes back as one sample without labels. */
  query(promql: string): Promise<PromSample[]>;
  /** Repeats the query until predicate accepts its result; throws with the last result and the targets' health after timeoutMs. */
  waitFor(promql: string, predicate: (r: PromSample[]) => boolean, timeoutMs: number): Promise<PromSample[]>;
  /** SIGTERM, SIGKILL after a grace; resolves once the process is gone and its temp dir removed */
  dispose(): Promise<void>;
}

interface ApiReply {
  status: 'success' | 'error';
  errorType?: string;
  error?: string;
  data?: unknown;
}

async function api(url: string): Promise<ApiReply> {
  const r = await fetch(url, { signal: AbortSignal.timeout(10_000) });
  const body = (await r.json()) as ApiReply;
  if (body.status !== 'success') throw new Error(`${url}: ${body.errorType ?? r.status}: ${body.error ?? 'no error text'}`);
  return body;
}

function toSamples(promql: string, data: unknown): PromSample[] {
  const d = data as { resultType: string; result: unknown };
  const sample = (metric: Record<string, string>, v: [number, string]): PromSample => ({ metric, raw: v[1], value: Number(v[1]), timestamp: v[0] });
  switch (d.resultType) {
    case 'vector':
      return (d.result as { metric: Record<string, string>; value: [number, string] }[]).map((s) => sample(s.metric, s.value));
    case 'scalar':
    case 'string':
      return [sample({}, d.result as [number, string])];
    default:
      throw new Error(`${promql}: result type ${d.resultType}, expected an instant vector or scalar`);
  }
}

const validTarget = (t: string): boolean => /^(\[[0-9a-fA-F:.]+\]|[A-Za-z0-9.-]+):\d{1,5}$/.test(t);

/**
 * A private Prometheus on a free loopback port with a temp TSDB, scraping
 * `targets`. It never outlives the test process where util-linux setpriv exists.
 */
export async function startPrometheus(o: PrometheusOptions): Promise<TestPrometheus> {
  if (!existsSync(PROMETHEUS_BIN)) {
    throw new Error(`prometheus not found at ${PROMETHEUS_BIN}: apt-get install prometheus (npm test installs it)`);
  }
  if (o.targets.length === 0 || !o.targets.every(validTarget)) throw new Error(`targets must be host:port, got ${JSON.stringify(o.targets)}`);
  const intervalMs = o.scrapeIntervalMs ?? 1000;
  if (!Number.isInteger(intervalMs) || intervalMs < 1) throw new Error(`scrapeIntervalMs must be a positive integer, got ${intervalMs}`);
  const jobName = o.jobName ?? 'rezolus';
  const dir = mkdtempSync(DIR_PREFIX);
  const configFile = join(dir, 'prometheus.yml');
  // JSON is YAML; no quoting to get wrong
  const config = {
    global: { scrape_interval: `${intervalMs}ms`, scrape_timeout: `${intervalMs}ms`, evaluation_interval: '1m' },
    scrape_configs: [{ job_name: jobName, metrics_path: '/metrics', scheme: 'http', static_configs: [{ targets: o.targets }] }],
  };
  writeFileSync(configFile, `${JSON.stringify(config, null, 2)}\n`);
  try {
    // freePort() can race another process for the port: then Prometheus exits at once and we try another
    for (let attempt = 1; ; attempt++) {
      try {
        return await launch(dir, configFile, jobName, o.startTimeoutMs ?? 30_000);
      } catch (error) {
        if (!(error instanceof PortTaken) || attempt === 3) throw error;
      }
    }
  } catch (error) {
    rmSync(dir, { recursive: true, force: true });
    throw error;
  }
}

class PortTaken extends Error {}

async function launch(dir: string, configFile: string, jobName: string, startTimeoutMs: number): Promise<TestPrometheus> {
  const port = await freePort();
  const url = `http://127.0.0.1:${port}`;
  const args = [
    `--config.file=${configFile}`,
    `${STORAGE_FLAG}${join(dir, 'data')}`,
    `--web.listen-address=127.0.0.1:${port}`,
    // info logs a dozen lines per start and stop
    '--log.level=warn',
  ];
  const withSetpriv = existsSync(SETPRIV_BIN);
  // setpriv execs Prometheus (same pid) with PR_SET_PDEATHSIG armed: SIGKILL when this process dies, even by kill -9
  const started = Date.now();
  const child = withSetpriv
    ? spawn(SETPRIV_BIN, ['--pdeathsig', 'KILL', '--', PROMETHEUS_BIN, ...args], { stdio: ['ignore', 'pipe', 'pipe'] })
    : spawn(PROMETHEUS_BIN, args, { stdio: ['ignore', 'pipe', 'pipe'] });
  let log = '';
  const keep = (d: Buffer): void => {
    log = (log + d.toString()).slice(-LOG_TAIL_CHARS);
  };
  child.stdout?.on('data', keep);
  child.stderr?.on('data', keep);
  // 'close' comes after 'exit' once the pipes are drained, so the log is complete;
  // a failed spawn emits 'error' and no 'exit'
  let gone = false;
  child.once('exit', () => {
    gone = true;
  });
  const exited = new Promise<void>((resolve) => {
    child.once('close', () => resolve());
    child.once('error', (e) => {
      if (child.pid !== undefined) return; // a failed kill(), the process lives on
      keep(Buffer.from(`spawn: ${e.message}\n`));
      gone = true;
      resolve();
    });
  });
  const running = (): boolean => !gone;
  const killOnExit = (): void => {
    if (running()) child.kill('SIGKILL');
  };
  process.on('exit', killOnExit);

  const dispose = async (): Promise<void> => {
    process.off('exit', killOnExit);
    if (running() && child.pid !== undefined) {
      child.kill('SIGTERM');
      const timer = setTimeout(() => child.kill('SIGKILL'), 5000);
      await exited;
      clearTimeout(timer);
    }
    rmSync(dir, { recursive: true, force: true });
  };

  const deadline = Date.now() + startTimeoutMs;
  for (;;) {
    if (!running()) {
      await exited;
      process.off('exit', killOnExit);
      const why = `prometheus exited (${child.exitCode ?? child.signalCode}) at start: ${log.trim()}`;
      throw /address already in use/.test(log) ? new PortTaken(why) : new Error(why);
    }
    try {
      const r = await fetch(`${url}/-/ready`, { signal: AbortSignal.timeout(1000) });
      if (r.status === 200) break;
    } catch {
      // not listening yet
    }
    if (Date.now() > deadline) {
      await dispose();
      throw new Error(`prometheus not ready on ${url} after ${startTimeoutMs} ms: ${log.trim()}`);
    }
    await new Promise((r) => setTimeout(r, 50));
  }
  const readySeconds = (Date.now() - started) / 1000;

  const query = async (promql: string): Promise<PromSample[]> =>
    toSamples(promql, (await api(`${url}/api/v1/query?query=${encodeURIComponent(promql)}`)).data);

  /** One line per target: health and last error, for failure messages. */
  const targetHealth = async (): Promise<string> => {
    try {
      const d = (await api(`${url}/api/v1/targets?state=active`)).data as {
        activeTargets: { scrapeUrl: string; health: string; lastError: string; lastScrape: string }[];
      };
      if (d.activeTargets.length === 0) return 'no active targets yet (Prometheus applies its targets ~5 s after start)';
      return d.activeTargets.map((t) => `${t.scrapeUrl} ${t.health} last=${t.lastScrape} ${t.lastError}`.trim()).join('; ');
    } catch (error) {
      return `targets unknown: ${String(error)}`;
    }
  };

  return {
    url,
    port,
    pid: child.pid as number,
    jobName,
    dir,
    readySeconds,
    query,
    async waitFor(promql, predicate, timeoutMs) {
      const until = Date.now() + timeoutMs;
      for (;;) {
        const r = await query(promql);
        if (predicate(r)) return r;
        if (Date.now() > until) {
          throw new Error(
            `${promql}: no acceptable result within ${timeoutMs} ms; last ${JSON.stringify(r)}; targets: ${await targetHealth()}` +
              (log.trim() === '' ? '' : `; log: ${log.trim()}`),
          );
        }
        await new Promise((res) => setTimeout(res, 100));
      }
    },
    dispose,
  };
}
