import test from 'ava';
import { spawn } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { ROOT } from '../../scripts/gen-docs.js';
import { runAgent, type RunningAgent } from '../../src/agent/main.js';
import { loadAgentConfig } from '../../src/config/agent.js';
import { silentLogger } from '../../src/log/logger.js';
import { fromValues } from '../../src/metrics/histogram.js';
import { SAMPLER_NAMES } from '../../src/samplers/registry.js';
import { freePort } from '../../src/up/nats-server.js';
import type { HostSummary, MetricEntry, QueryResult, SectionInfo, ViewInfo } from '../../src/viewer/api.js';
import { runViewer, type RunningViewer, type ViewConfig } from '../../src/viewer/main.js';
import { NO_KERNEL, PROC, SYS } from '../helpers/fixtures.js';
import { startTestNats, type TestNats } from '../helpers/nats.js';
import { until } from '../helpers/until.js';
import { T0, meta, spec, writeRecording, type Row } from './file-recordings.js';
import { rezolusArgv } from '../helpers/rezolus-cli.js';

let dir: string;
const ROWS = 600;
const SPIKE_ROW = 417;

/** One host, 600 rows at 1 s: a gauge with one spike, a counter at `rate`/s, latencies of 1 ms with 1 % at `tail` ns. */
async function recording(path: string, rate: number, tail: number): Promise<void> {
  const rows: Row[] = Array.from({ length: ROWS }, (_, i) => ({ ns: T0 + BigInt(i) * 1_000_000_000n, host: 'web' }));
  const perRow = [...Array(99).fill(1_000_000), tail];
  await writeRecording(
    path,
    rows,
    [
      { spec: spec('memory_available', 'gauge', {}, 'bytes'), cell: (r) => (r === SPIKE_ROW ? 9e9 : 1e9) },
      { spec: spec('cpu_usage/user/0', 'counter', { state: 'user', id: '0' }, 'nanoseconds'), cell: (r) => BigInt(r * rate) },
      { spec: spec('scheduler_runqueue_latency', 'histogram', {}, 'nanoseconds'), cell: (r) => fromValues(Array.from({ length: r + 1 }, () => perRow).flat()) },
    ],
    meta(['web']),
  );
}

function config(source: ViewConfig['source']): ViewConfig {
  return { source, listen: { host: '127.0.0.1', port: 0 }, token: undefined, windowMs: undefined, saveDir: dir, saveIntervalMs: 1000 };
}

async function get<T>(v: RunningViewer, path: string): Promise<{ status: number; body: T }> {
  const r = await v.app.inject({ method: 'GET', url: path });
  return { status: r.statusCode, body: r.json() as T };
}

function view(args: string[]): Promise<{ code: number | null; stderr: string }> {
  const child = spawn(process.execPath, rezolusArgv('view', '--log-level', 'warn', ...args), { cwd: ROOT, stdio: ['ignore', 'ignore', 'pipe'] });
  let stderr = '';
  child.stderr.on('data', (d: Buffer) => (stderr += d.toString()));
  const timer = setTimeout(() => child.kill('SIGKILL'), 60_000);
  return new Promise((resolve) =>
    child.once('exit', (code) => {
      clearTimeout(timer);
      resolve({ code, stderr });
    }),
  );
}

test.before(async () => {
  dir = mkdtempSync(join(tmpdir(), 'rezolus-view-sources-'));
  await recording(join(dir, 'a.parquet'), 500_000_000, 50_000_000);
  await recording(join(dir, 'b.parquet'), 250_000_000, 5_000_000);
  writeFileSync(join(dir, 'notes.txt'), 'not parquet at all\n');
});

test.after.always(() => {
  rmSync(dir, { recursive: true, force: true });
});

test('a recording: one host, its metrics, a one-sample spike in an envelope 12 samples wide, rates and percentiles', async (t) => {
  const v = await runViewer(config({ kind: 'files', files: [{ name: 'a.parquet', path: join(dir, 'a.parquet') }] }), silentLogger());
  try {
    const info = (await get<ViewInfo>(v, '/api/v1/info')).body;
    t.is(info.mode, 'file');
    t.is(info.sources[0]?.start, Number(T0 / 1_000_000n));
    t.is(info.sources[0]?.end, Number(T0 / 1_000_000n) + (ROWS - 1) * 1000);
    t.deepEqual((await get<HostSummary[]>(v, '/api/v1/hosts')).body.map((h) => h.host), ['web']);
    const { start, end } = info.sources[0] as { start: number; end: number };
    const gauge = (await get<QueryResult>(v, `/api/v1/query?host=web&metric=memory_available&start=${start}&end=${end}&budget=50`)).body;
    t.true(gauge.step >= 12_000, `step ${gauge.step}`);
    const max = gauge.series[0]?.max ?? [];
    const spikes = max.filter((x) => x === 9e9);
    t.is(spikes.length, 1, 'the single-sample spike is in exactly one step');
    t.is(Math.max(...(gauge.series[0]?.avg.filter((x): x is number => x !== null) ?? [])) < 9e9, true, 'and averaged away in avg');
    const rate = (await get<QueryResult>(v, `/api/v1/query?host=web&metric=cpu_usage&start=${start}&end=${end}&budget=60`)).body;
    t.is(rate.fn, 'rate');
    for (const x of rate.series[0]?.avg ?? []) if (x !== null) t.is(Math.round(x), 500_000_000);
    const p = (await get<QueryResult>(v, `/api/v1/query?host=web&metric=scheduler_runqueue_latency&fn=percentiles&start=${start}&end=${end}&budget=60`)).body;
    const line = (name: string): number[] => (p.series.find((s) => s.name === name)?.avg ?? []).filter((x): x is number => x !== null);
    // 1 ms lands in the h2 bucket [0.983, 1.049) ms; 50 ms in [46.1, 50.3) ms: percentiles report the upper bound
    t.true(line('p50').length > 0);
    for (const x of line('p50')) t.true(x >= 1_000_000 && x < 1_100_000, `p50 ${x}`);
    for (const x of line('p99.9')) t.true(x >= 50_000_000 && x < 55_000_000, `p99.9 ${x}`);
    const heat = (await get<QueryResult>(v, `/api/v1/query?host=web&metric=scheduler_runqueue_latency&fn=heatmap&start=${start}&end=${end}&budget=60`)).body;
    t.is(heat.heatmap?.lower.length, 2, 'two buckets hold events');
  } finally {
    await v.stop();
  }
});

test('a recording of two hosts: each host lists only the metrics it has', async (t) => {
  const path = join(dir, 'two-hosts.parquet');
  const rows: Row[] = Array.from({ length: 120 }, (_, i) => ({ ns: T0 + BigInt(Math.floor(i / 2)) * 1_000_000_000n, host: i % 2 === 0 ? 'db' : 'web' }));
  await writeRecording(
    path,
    rows,
    [
      { spec: spec('memory_available', 'gauge', {}, 'bytes'), cell: () => 1e9 },
      // only web has the histogram (db's kernel samplers were off)
      { spec: spec('scheduler_runqueue_latency', 'histogram', {}, 'nanoseconds'), cell: (r) => (r % 2 === 1 ? fromValues([1000, 2000]) : null) },
    ],
    meta(['db', 'web']),
  );
  const v = await runViewer(config({ kind: 'files', files: [{ name: 'two', path }] }), silentLogger());
  try {
    const names = async (host: string): Promise<string[]> => (await get<MetricEntry[]>(v, `/api/v1/metrics?host=${host}`)).body.map((m) => m.name);
    t.deepEqual(await names('web'), ['memory_available', 'scheduler_runqueue_latency']);
    t.deepEqual(await names('db'), ['memory_available']);
    const sections = (await get<SectionInfo[]>(v, '/api/v1/sections?host=db')).body;
    t.false(sections.some((s) => s.metrics.includes('scheduler_runqueue_latency')));
  } finally {
    await v.stop();
  }
});

test('two recordings compared: two sources, each queried on its own time axis', async (t) => {
  const v = await runViewer(config({ kind: 'files', files: [{ name: 'A', path: join(dir, 'a.parquet') }, { name: 'B', path: join(dir, 'b.parquet') }] }), silentLogger());
  try {
    const info = (await get<ViewInfo>(v, '/api/v1/info')).body;
    t.is(info.mode, 'compare');
    t.deepEqual(info.sources.map((s) => s.name), ['A', 'B']);
    const a = (await get<QueryResult>(v, '/api/v1/query?source=A&host=web&metric=cpu_usage&budget=30')).body;
    const b = (await get<QueryResult>(v, '/api/v1/query?source=B&host=web&metric=cpu_usage&budget=30')).body;
    t.is(Math.round(a.series[0]?.avg.find((x) => x !== null) ?? 0), 500_000_000);
    t.is(Math.round(b.series[0]?.avg.find((x) => x !== null) ?? 0), 250_000_000);
    t.is((await get(v, '/api/v1/query?source=C&host=web&metric=cpu_usage')).status, 404);
    t.is((await v.app.inject({ method: 'POST', url: '/api/v1/save', payload: { hosts: ['web'], start: 0, end: 1 } })).statusCode, 400);
  } finally {
    await v.stop();
  }
});

test("an agent's HTTP: its host and values, polled; an agent that refuses is named on the page", async (t) => {
  const server: TestNats = await startTestNats();
  let agent: RunningAgent | undefined;
  const viewers: RunningViewer[] = [];
  try {
    const base = loadAgentConfig(undefined, SAMPLER_NAMES, { host: 'polled', natsUrl: server.url });
    const samplers = Object.fromEntries(SAMPLER_NAMES.map((n) => [n, { enabled: ['cpu_usage', 'memory_meminfo', 'cpu_cores'].includes(n), intervalMs: 200 }]));
    agent = await runAgent({ ...base, procfs: PROC, sysfs: SYS, kernel: NO_KERNEL, samplers, http: { host: '127.0.0.1', port: 0 } }, silentLogger());
    const v = await runViewer(config({ kind: 'agent', url: `http://127.0.0.1:${agent.httpPort}`, intervalMs: 200 }), silentLogger());
    viewers.push(v);
    let hosts: HostSummary[] = [];
    t.true(await until(async () => (hosts = (await get<HostSummary[]>(v, '/api/v1/hosts')).body).length === 1 && hosts[0]?.memoryTotalBytes !== null, 30_000));
    t.is(hosts[0]?.host, 'polled');
    t.is(hosts[0]?.memoryTotalBytes, 25_276_502_016, 'MemTotal of the fixture');
    const port = await freePort();
    const refused = await runViewer(config({ kind: 'agent', url: `http://127.0.0.1:${port}`, intervalMs: 200 }), silentLogger());
    viewers.push(refused);
    let info: ViewInfo | undefined;
    t.true(await until(async () => (info = (await get<ViewInfo>(refused, '/api/v1/info')).body).problem !== undefined, 20_000));
    t.regex(info?.problem ?? '', new RegExp(`agent at http://127.0.0.1:${port} does not answer: .*(refused|ECONNREFUSED)`, 'i'));
  } finally {
    for (const v of viewers) await v.stop();
    await agent?.stop();
    await server.dispose();
  }
});

test('a NATS URL where nothing answers: the viewer runs and says so', async (t) => {
  const port = await freePort();
  const v = await runViewer(config({ kind: 'live', natsUrl: `nats://127.0.0.1:${port}`, stream: 'REZOLUS', hosts: '*' }), silentLogger());
  try {
    const info = (await get<ViewInfo>(v, '/api/v1/info')).body;
    t.regex(info.problem ?? '', new RegExp(`NATS at nats://127.0.0.1:${port}`));
    t.is((await get(v, '/api/v1/metrics?host=x')).status, 503);
  } finally {
    await v.stop();
  }
});

test('bad arguments exit 2 with one line that names the culprit', async (t) => {
  const notParquet = await view([join(dir, 'notes.txt')]);
  t.is(notParquet.code, 2, notParquet.stderr);
  t.regex(notParquet.stderr, /notes\.txt.*not a Parquet file/);
  const missing = await view([join(dir, 'gone.parquet')]);
  t.is(missing.code, 2);
  t.regex(missing.stderr, /no such file: .*gone\.parquet/);
  const three = await view([join(dir, 'a.parquet'), join(dir, 'b.parquet'), join(dir, 'a.parquet')]);
  t.is(three.code, 2);
  t.regex(three.stderr, /at most two files/);
  const mixed = await view(['--hosts', 'web', join(dir, 'a.parquet')]);
  t.is(mixed.code, 2);
  t.regex(mixed.stderr, /--hosts.*live bus/);
  const listen = await view(['--listen', '0.0.0.0:0', join(dir, 'a.parquet')]);
  t.is(listen.code, 2);
  t.regex(listen.stderr, /REZOLUS_HTTP_TOKEN/);
});
