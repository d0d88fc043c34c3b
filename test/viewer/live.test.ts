import test from 'ava';
import { DuckDBInstance } from '@duckdb/node-api';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { runAgent, type RunningAgent } from '../../src/agent/main.js';
import { loadAgentConfig } from '../../src/config/agent.js';
import { silentLogger } from '../../src/log/logger.js';
import { SAMPLER_NAMES } from '../../src/samplers/registry.js';
import type { HostSummary, MetricEntry, QueryResult, SaveResult, SectionInfo, ViewInfo } from '../../src/viewer/api.js';
import { runViewer, type RunningViewer } from '../../src/viewer/main.js';
import { NO_KERNEL } from '../helpers/fixtures.js';
import { startTestNats, type TestNats } from '../helpers/nats.js';
import { until } from '../helpers/until.js';

let server: TestNats;
const agents: RunningAgent[] = [];
let viewer: RunningViewer;
let dir: string;
let viewerStarted = 0;
let betaStarted = 0;

async function startAgent(host: string): Promise<RunningAgent> {
  const base = loadAgentConfig(undefined, SAMPLER_NAMES, { host, natsUrl: server.url });
  const on = ['cpu_usage', 'cpu_cores', 'memory_meminfo', 'rezolus_self'];
  const samplers = Object.fromEntries(SAMPLER_NAMES.map((n) => [n, { enabled: on.includes(n), intervalMs: 200 }]));
  return runAgent({ ...base, procfs: '/proc', sysfs: '/sys', kernel: NO_KERNEL, samplers }, silentLogger());
}

async function get<T>(path: string): Promise<{ status: number; body: T }> {
  const r = await viewer.app.inject({ method: 'GET', url: path });
  return { status: r.statusCode, body: r.json() as T };
}

test.before(async () => {
  server = await startTestNats();
  dir = mkdtempSync(join(tmpdir(), 'rezolus-view-live-'));
  agents.push(await startAgent('alpha'));
  // beta starts later: its window on the page must still start at its first frame
  await new Promise((r) => setTimeout(r, 1500));
  betaStarted = Date.now();
  agents.push(await startAgent('beta'));
  viewerStarted = Date.now();
  viewer = await runViewer(
    {
      source: { kind: 'live', natsUrl: server.url, stream: 'REZOLUS', hosts: '*' },
      listen: { host: '127.0.0.1', port: 0 },
      token: undefined,
      windowMs: undefined,
      saveDir: dir,
      saveIntervalMs: 200,
    },
    silentLogger(),
  );
});

test.after.always(async () => {
  await viewer?.stop();
  for (const a of agents) await a.stop();
  await server?.dispose();
  rmSync(dir, { recursive: true, force: true });
});

test.serial('the fleet page lists both hosts with CPU, memory and sampler states', async (t) => {
  let hosts: HostSummary[] = [];
  await until(async () => {
    hosts = (await get<HostSummary[]>('/api/v1/hosts')).body;
    // the states come with rezolus_self, once a second at the fastest: up to a second after a host's other frames
    return hosts.length === 2 && hosts.every((h) => h.cpu !== null && h.memoryTotalBytes !== null && h.samplers.cpu_usage !== undefined);
  }, 30_000);
  t.deepEqual(hosts.map((h) => h.host), ['alpha', 'beta']);
  const memTotal = Number(/MemTotal:\s+(\d+) kB/.exec(readFileSync('/proc/meminfo', 'utf8'))?.[1]) * 1024;
  for (const h of hosts) {
    t.is(h.memoryTotalBytes, memTotal, 'MemTotal from /proc/meminfo');
    t.true((h.cpu as number) >= 0 && (h.cpu as number) <= 1, `cpu share ${String(h.cpu)}`);
    t.is(h.samplers.cpu_usage?.state, 'active');
    t.true(Date.now() - h.lastMs < 20_000, 'a recent frame');
  }
  const info = (await get<ViewInfo>('/api/v1/info')).body;
  t.is(info.mode, 'live');
  t.is(info.windowMs, 900_000, "the stream's max_age");
  t.true(info.canSave);
  t.is(info.problem, undefined);
});

test.serial("a host's page: its window from the stream, sections from the metrics, queries that follow live", async (t) => {
  const sections = (await get<SectionInfo[]>('/api/v1/sections?host=alpha')).body;
  const names = sections.map((s) => s.name);
  t.true(names.includes('CPU') && names.includes('Memory') && names.includes('Rezolus'), names.join(', '));
  const metrics = (await get<MetricEntry[]>('/api/v1/metrics?host=alpha')).body;
  const cpu = metrics.find((m) => m.name === 'cpu_usage');
  t.is(cpu?.kind, 'counter');
  t.is(cpu?.section, 'CPU');
  t.true((cpu?.description ?? '').length > 10);
  // the window reaches back to the host's first frame, before the viewer started
  const first = await get<QueryResult>(`/api/v1/query?host=alpha&metric=memory_total&start=${Date.now() - 60_000}&end=${Date.now()}&budget=600`);
  t.is(first.status, 200);
  const filled = first.body.t.filter((_, i) => first.body.series[0]?.avg[i] !== null);
  t.true(filled.length > 0);
  t.true((filled[0] as number) < viewerStarted, 'the first sample is older than the viewer: it came from the stream');
  const rate = await get<QueryResult>(`/api/v1/query?host=alpha&metric=cpu_usage&fn=rate&match=state=user&start=${Date.now() - 60_000}&end=${Date.now()}&budget=100`);
  t.is(rate.status, 200);
  t.is(rate.body.unit, 'nanoseconds/s');
  t.true(rate.body.series.length >= 1, 'one line per CPU');
  // frames keep arriving: a later query ends later
  const lastOf = (r: QueryResult): number => Math.max(...r.t.filter((_, i) => r.series.some((s) => s.avg[i] !== null)));
  const before = lastOf(rate.body);
  await until(async () => {
    const again = await get<QueryResult>(`/api/v1/query?host=alpha&metric=cpu_usage&fn=rate&match=state=user&start=${Date.now() - 60_000}&end=${Date.now()}&budget=600`);
    return lastOf(again.body) > before;
  }, 20_000);
  t.pass();
});

test.serial('bad queries: unknown host 404, unknown metric 404, wrong fn 400, bad numbers 400', async (t) => {
  t.is((await get('/api/v1/query?host=nobody&metric=cpu_usage')).status, 404);
  t.is((await get('/api/v1/query?host=alpha&metric=no_such_metric')).status, 404);
  t.is((await get('/api/v1/query?host=alpha&metric=cpu_usage&fn=percentiles')).status, 400);
  t.is((await get('/api/v1/query?host=alpha&metric=cpu_usage&fn=median')).status, 400);
  t.is((await get('/api/v1/query?host=alpha&metric=cpu_usage&start=yesterday')).status, 400);
  t.is((await get('/api/v1/query?host=alpha&metric=cpu_usage&match=nolabel')).status, 400);
  const r = await get<{ error: string }>('/api/v1/metrics?host=nobody');
  t.is(r.status, 404);
  t.regex(r.body.error, /no frames of host "nobody".*alpha, beta/);
});

test.serial('save this window: the hosts and range on screen become a Parquet file DuckDB reads', async (t) => {
  // beta's frames must cover the range: wait until it has published for 3.5 s, and the viewer is connected
  await new Promise((r) => setTimeout(r, Math.max(0, betaStarted + 3500 - Date.now())));
  await until(() => viewer.data.info().problem === undefined, 30_000);
  const end = Date.now();
  const start = end - 3000;
  const r = await viewer.app.inject({ method: 'POST', url: '/api/v1/save', payload: { hosts: ['beta'], start, end } });
  t.is(r.statusCode, 200, r.body);
  const saved = r.json() as SaveResult;
  t.true(saved.path.startsWith(dir));
  const con = await (await DuckDBInstance.create(':memory:')).connect();
  const ts = (await con.runAndReadAll(`SELECT timestamp FROM read_parquet('${saved.path}')`)).getRowObjects().map((r) => String(r.timestamp));
  t.true(saved.rows >= 10, `${saved.rows} rows over 3 s at 200 ms: ${ts.join(' ')} start ${start} end ${end}`);
  const [row] = (await con.runAndReadAll(`SELECT count(*) AS n, min(host) AS lo, max(host) AS hi FROM read_parquet('${saved.path}')`)).getRowObjects();
  t.is(Number(row?.n), saved.rows);
  t.is(row?.lo, 'beta');
  t.is(row?.hi, 'beta');
  const bad = await viewer.app.inject({ method: 'POST', url: '/api/v1/save', payload: { hosts: ['beta'], start: end, end: start } });
  t.is(bad.statusCode, 400);
  const old = await viewer.app.inject({ method: 'POST', url: '/api/v1/save', payload: { hosts: ['beta'], start: end - 3_600_000, end } });
  t.is(old.statusCode, 400);
  t.regex((old.json() as { error: string }).error, /keeps only the last 900 s/);
});
