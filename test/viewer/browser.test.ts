// The viewer in Chromium against the real server (`rezolus view FILE`, and
// two files compared), on recordings written by the recorder's ParquetStream
// with known values: the fleet page lists the hosts, the charts hold what
// GET /api/v1/query returns (and the known rates and percentiles), sections
// switch, brushing zooms and refetches, the cgroup picker filters, compare
// draws A, B and A − B on seconds from each start, an API error is one line
// on the page, and no page logs a console error. Screenshots of the main
// pages go to test-artifacts/browser/.
import { type ChildProcess, spawn } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import test, { type ExecutionContext } from 'ava';
import type { Page } from 'playwright-core';
import { fromValues, type SparseHistogram } from '../../src/metrics/histogram.js';
import type { HostSummary, QueryResult, QuerySeries, ViewInfo } from '../../src/viewer/api.js';
import { useBrowser } from '../helpers/browser.js';
import { meta, type Row, type Series, spec, T0, writeRecording } from './file-recordings.js';
import { rezolusArgv } from '../helpers/rezolus-cli.js';

const ROOT = fileURLToPath(new URL('../..', import.meta.url));

/** What the page keeps for tests (src/viewer/web/chart-registry.ts); the callbacks that read it run in the page. */
interface PageChart {
  readonly id: string;
  readonly metric: string;
  readonly kind: string;
  readonly host: string;
  readonly url: string;
  readonly data: unknown;
  readonly draws: number;
  readonly width: number | undefined;
  readonly result: QueryResult | undefined;
}
declare const window: { readonly __charts: PageChart[] };
declare const location: { readonly hash: string };
/** The few DOM names the callbacks that run in the page use (this file is typechecked without the DOM lib). */
interface PageElement {
  readonly textContent: string | null;
  getBoundingClientRect(): { readonly left: number; readonly top: number; readonly width: number; readonly height: number };
  querySelector(selector: string): PageElement | null;
  querySelectorAll(selector: string): { readonly length: number };
}
interface PageCanvas {
  readonly width: number;
  readonly height: number;
  getContext(kind: '2d'): { getImageData(x: number, y: number, w: number, h: number): { readonly data: ArrayLike<number> } } | null;
}
declare const document: PageElement;
const browser = useBrowser(test, import.meta.url);

const ROWS = 600;
const CPUS = 4;
const GiB = 1024 ** 3;
const MiB = 1024 ** 2;
/** the row (second) where web01's network receive bursts: 50 MiB in one second */
const BURST_ROW = 300;
const BURST_BYTES = 50 * MiB;
/** web01's memory_available spikes for one sample */
const SPIKE_ROW = 417;
const DAY_NS = 86_400_000_000_000n;

/** user CPU time per second of a CPU: web01 0.2 + 0.1·id s/s; web02 0.5; B half of A's */
const userRate = (host: string, cpu: number, scale: number) => (host === 'web02' ? 0.5 : 0.2 + 0.1 * cpu) * scale;
const SYSTEM_RATE = 0.05;

/** 99 events of 1 ms and one of 50 ms every second, cumulative */
const LATENCIES = fromValues([...Array(99).fill(1_000_000), 50_000_000]);
const SYSCALL_OPS = 8;
/** tcp_connect_latency: one event of 5 ms at each of these seconds, none else */
const LONE = fromValues([5_000_000]);
const LONE_ROWS = [150, 420];
const cumulative = (h: SparseHistogram, n: number): SparseHistogram => ({ ...h, count: h.count.map((c) => c * n) });

/**
 * A recording of `hosts` at 1 s for `rows` seconds from `t0`: per-CPU time by
 * state, memory, network with one burst, block IO, run-queue latency, two
 * cgroups and sampler states.
 */
async function record(path: string, hosts: readonly string[], rows: number, t0: bigint, scale: number): Promise<void> {
  const all: Row[] = [];
  for (let i = 0; i < rows; i++) for (const host of hosts) all.push({ ns: t0 + BigInt(i) * 1_000_000_000n, host });
  const at = (r: number) => ({ host: (all[r] as Row).host, i: Math.floor(r / hosts.length) });
  const series: Series[] = [];
  for (let cpu = 0; cpu < CPUS; cpu++) {
    const id = String(cpu);
    series.push(
      { spec: spec(`cpu_usage/user/${id}`, 'counter', { state: 'user', id }, 'nanoseconds'), cell: (r) => BigInt(Math.round(at(r).i * userRate(at(r).host, cpu, scale) * 1e9)) },
      { spec: spec(`cpu_usage/system/${id}`, 'counter', { state: 'system', id }, 'nanoseconds'), cell: (r) => BigInt(Math.round(at(r).i * SYSTEM_RATE * 1e9)) },
      {
        spec: spec(`cpu_usage/idle/${id}`, 'counter', { state: 'idle', id }, 'nanoseconds'),
        cell: (r) => BigInt(Math.round(at(r).i * (1 - userRate(at(r).host, cpu, scale) - SYSTEM_RATE) * 1e9)),
      },
    );
  }
  series.push(
    { spec: spec('cpu_cores', 'gauge', {}, 'cores'), cell: () => CPUS },
    { spec: spec('memory_total', 'gauge', {}, 'bytes'), cell: () => 8 * GiB },
    {
      spec: spec('memory_available', 'gauge', {}, 'bytes'),
      cell: (r) => (at(r).host === 'web01' && at(r).i === SPIKE_ROW ? 7 * GiB : at(r).host === 'web01' ? 3 * GiB : 5 * GiB),
    },
    {
      spec: spec('network_bytes/receive', 'counter', { direction: 'receive' }, 'bytes'),
      cell: (r) => BigInt(at(r).i * MiB + (at(r).host === 'web01' && at(r).i >= BURST_ROW ? BURST_BYTES : 0)),
    },
    { spec: spec('network_bytes/transmit', 'counter', { direction: 'transmit' }, 'bytes'), cell: (r) => BigInt(at(r).i * 256 * 1024) },
    { spec: spec('blockio_bytes/read', 'counter', { op: 'read' }, 'bytes'), cell: (r) => BigInt(at(r).i * 4 * MiB) },
    { spec: spec('blockio_bytes/write', 'counter', { op: 'write' }, 'bytes'), cell: (r) => BigInt(at(r).i * MiB) },
    { spec: spec('scheduler_runqueue_latency', 'histogram', {}, 'nanoseconds'), cell: (r) => cumulative(LATENCIES, at(r).i + 1) },
    // web01 only (web02 lacks it); sparse: one connect at LONE_ROWS[0], one at LONE_ROWS[1], none between: steps with data between gaps
    { spec: spec('tcp_connect_latency', 'histogram', {}, 'nanoseconds'), cell: (r) => (at(r).host === 'web02' ? null : cumulative(LONE, LONE_ROWS.filter((k) => at(r).i >= k).length)) },
  );
  // many lines: 8 syscall ops, op k at k·10 per second, ops 0-2 never called (flat zero)
  for (let k = 0; k < SYSCALL_OPS; k++) {
    series.push({ spec: spec(`syscall/op${k}`, 'counter', { op: `op${k}` }, 'events'), cell: (r) => BigInt(at(r).i * (k < 3 ? 0 : k * 10)) });
  }
  for (const [k, cgroup] of ['/system.slice', '/user.slice'].entries()) {
    series.push(
      { spec: spec(`cgroup_cpu_usage/${cgroup}/user`, 'counter', { cgroup, state: 'user' }, 'nanoseconds'), cell: (r) => BigInt(at(r).i * (k + 1) * 100_000_000) },
      { spec: spec(`cgroup_memory_current/${cgroup}`, 'gauge', { cgroup }, 'bytes'), cell: () => (k + 1) * 512 * MiB },
    );
  }
  for (const sampler of ['cpu_usage', 'scheduler_runqueue']) {
    for (const state of ['active', 'failed']) {
      series.push({
        spec: spec(`rezolus_sampler_state/${sampler}/${state}`, 'gauge', { sampler, state }, 'count'),
        cell: (r) => Number((at(r).host === 'web02' && sampler === 'scheduler_runqueue') === (state === 'failed')),
      });
    }
  }
  const descriptions = {
    cpu_usage: 'Time each CPU spent in each state since boot.',
    scheduler_runqueue_latency: 'Time tasks waited on a runqueue.',
    memory_available: 'Estimate of memory available.',
  };
  await writeRecording(path, all, series, meta(hosts, { descriptions }), 300);
}

interface Viewer {
  readonly url: string;
  readonly child: ChildProcess;
}

let dir: string;
const viewers: Viewer[] = [];

/** `rezolus view ARGS` on a free loopback port; resolves with the URL it prints. */
function startView(args: string[]): Promise<Viewer> {
  const child = spawn(process.execPath, rezolusArgv('view', '--log-level', 'warn', ...args), {
    cwd: ROOT,
    stdio: ['ignore', 'ignore', 'pipe'],
  });
  let stderr = '';
  return new Promise((resolve, reject) => {
    const timer = setTimeout(() => {
      child.kill('SIGKILL');
      reject(new Error(`rezolus view printed no URL in 60 s:\n${stderr}`));
    }, 60_000);
    child.stderr?.on('data', (d: Buffer) => {
      stderr += d.toString();
      const url = /rezolus view: open (http:\/\/\S+)/.exec(stderr)?.[1];
      if (url !== undefined) {
        clearTimeout(timer);
        const v = { url, child };
        viewers.push(v);
        resolve(v);
      }
    });
    child.once('exit', (code) => {
      clearTimeout(timer);
      reject(new Error(`rezolus view exited (${code}) before it printed its URL:\n${stderr}`));
    });
  });
}

let single: Viewer;
let compared: Viewer;

test.before(async () => {
  if (browser.skipReason !== undefined) return;
  dir = mkdtempSync(join(tmpdir(), 'rezolus-view-browser-'));
  await record(join(dir, 'fleet.parquet'), ['web01', 'web02'], ROWS, T0, 1);
  await record(join(dir, 'b.parquet'), ['web01'], ROWS - 100, T0 + DAY_NS, 0.5);
  [single, compared] = await Promise.all([startView([join(dir, 'fleet.parquet')]), startView([`before=${join(dir, 'fleet.parquet')}`, `after=${join(dir, 'b.parquet')}`])]);
});

test.after.always(async () => {
  await Promise.all(
    viewers.map(
      (v) =>
        new Promise<void>((resolve) => {
          if (v.child.exitCode !== null) return resolve();
          v.child.once('exit', () => resolve());
          v.child.kill('SIGTERM');
        }),
    ),
  );
  if (dir !== undefined) rmSync(dir, { recursive: true, force: true });
});

async function api<T>(v: Viewer, path: string): Promise<T> {
  const res = await fetch(new URL(path, v.url));
  if (!res.ok) throw new Error(`${path}: HTTP ${res.status} ${await res.text()}`);
  return (await res.json()) as T;
}

interface Drawn {
  readonly id: string;
  readonly metric: string;
  readonly kind: string;
  readonly host: string;
  readonly url: string;
  readonly data: unknown;
  readonly draws: number;
  /** the plotting area's width, CSS px */
  readonly width: number | undefined;
}

/** The charts on the page, once every chart in view has drawn its latest query. */
async function charts(page: Page, count?: number): Promise<Drawn[]> {
  await page.waitForFunction(
    (n) => {
      const cs = window.__charts;
      return cs.length > 0 && (n === undefined || cs.length === n) && cs.every((c) => c.draws > 0 && c.data !== undefined);
    },
    count,
    { timeout: 30_000 },
  );
  // a moment for a load that started meanwhile to land
  await page.waitForTimeout(300);
  return page.evaluate(() =>
    window.__charts.map((c) => ({ id: c.id, metric: c.metric, kind: c.kind, host: c.host, url: c.url, data: JSON.parse(JSON.stringify(c.data)), draws: c.draws, width: c.width })),
  );
}

/** The text of the first element `selector` finds. */
async function text(page: Page, selector: string): Promise<string> {
  return (await page.locator(selector).first().textContent()) ?? '';
}

const positive = (v: readonly (number | null)[]) => v.map((x) => (x !== null && x > 0 ? x : null));
const finite = (v: readonly (number | null)[]) => v.filter((x): x is number => x !== null);

/** Checks that a chart holds exactly what its query returns now. */
async function holdsQuery(t: ExecutionContext, v: Viewer, c: Drawn): Promise<QueryResult> {
  const r = await api<QueryResult>(v, c.url);
  if (c.kind === 'heatmap') {
    const g = (c.data as { grid: { x: number[]; lower: number[]; upper: number[]; values: number[][] } }).grid;
    t.deepEqual(g.x, r.t.map((x) => x / 1000), `${c.metric} heatmap columns`);
    t.deepEqual(g.lower, r.heatmap?.lower, `${c.metric} heatmap rows`);
    t.deepEqual(g.upper, r.heatmap?.upper);
    t.deepEqual(g.values, r.heatmap?.counts, `${c.metric} heatmap counts`);
    return r;
  }
  if (c.kind === 'percpu') {
    const g = (c.data as { rowNames: string[]; grid: { values: (number | null)[][] } });
    const cpus = [...new Set(r.series.map((s) => s.labels.id as string))].sort((a, b) => Number(a) - Number(b));
    t.deepEqual(g.rowNames, cpus, `${c.metric} rows are the CPUs`);
    // the default pick of a state label is busy: every state but idle and iowait, summed per CPU
    const busy = (col: number, cpu: string) =>
      r.series.filter((s) => s.labels.id === cpu && s.labels.state !== 'idle' && s.labels.state !== 'iowait').reduce((sum, s) => sum + (s.avg[col] ?? 0), 0);
    r.t.forEach((_, col) => {
      cpus.forEach((cpu, row) => t.true(Math.abs((g.grid.values[col]?.[row] ?? Number.NaN) - busy(col, cpu)) < 1e-6, `${c.metric} col ${col} cpu ${cpu}`));
    });
    return r;
  }
  const data = c.data as (number | null)[][];
  t.deepEqual(data[0], r.t.map((x) => x / 1000), `${c.metric} x`);
  const lines = data.slice(1).map((l) => JSON.stringify(l));
  for (const s of r.series) {
    const want = c.kind === 'percentiles' ? positive(s.avg) : s.avg;
    t.true(lines.includes(JSON.stringify(want)), `${c.metric}: the chart has ${s.name}'s line`);
  }
  return r;
}

const seriesNamed = (r: QueryResult, name: string): QuerySeries | undefined => r.series.find((s) => s.name === name || s.name.split(/[ /]/).includes(name));

browser.serial('file with two hosts: the fleet page lists both, sorts by a column, and a click opens the host', async (t) => {
  await browser.withPage(t, async ({ page, shot }) => {
    await page.goto(single.url);
    await page.waitForSelector('table.fleet tbody tr');
    const hosts = await api<HostSummary[]>(single, 'api/v1/hosts');
    t.deepEqual(
      hosts.map((h) => h.host),
      ['web01', 'web02'],
    );
    t.deepEqual(await page.locator('table.fleet tbody tr').evaluateAll((rows) => rows.map((r) => r.getAttribute('data-host'))), ['web01', 'web02']);
    // web01: (0.2+0.3+0.4+0.5) + 4·0.05 = 1.6 of 4 CPUs busy; web02: 4·0.55 = 2.2
    t.is(await text(page, 'tr[data-host="web01"] td[data-key="cpu"]'), '40% of 4');
    t.is(await text(page, 'tr[data-host="web02"] td[data-key="cpu"]'), '55% of 4');
    t.is(await text(page, 'tr[data-host="web02"] td[data-key="failed"]'), '1');
    t.regex((await page.locator('tr[data-host="web02"] td[data-key="failed"]').getAttribute('title')) ?? '', /scheduler_runqueue/);
    // the samplers cell names on hover the samplers not active, their state and why
    t.regex((await page.locator('tr[data-host="web02"] td[data-key="active"]').getAttribute('title')) ?? '', /scheduler_runqueue: failed/);
    // a recording has no live-only columns (last frame, buffered, refused), and no stale hosts
    for (const key of ['age', 'buffered', 'refused']) t.is(await page.locator(`table.fleet [data-key="${key}"]`).count(), 0, key);
    t.is(await page.locator('table.fleet tr.stale').count(), 0);
    t.is(await text(page, 'tr[data-host="web01"] td[data-key="memAvailable"]'), '3 GiB');
    await page.click('th[data-key="cpu"]');
    t.deepEqual(await page.locator('table.fleet tbody tr').evaluateAll((rows) => rows.map((r) => r.getAttribute('data-host'))), ['web02', 'web01']);
    t.regex(await text(page, '#header'), /recording[\s\S]*fleet\.parquet/);
    await shot('fleet');
    // two checked hosts open side by side, one cursor and one zoom for both
    t.true(await page.locator('button.compare-hosts').isDisabled());
    await page.check('tr[data-host="web01"] input[type="checkbox"]');
    await page.check('tr[data-host="web02"] input[type="checkbox"]');
    await page.click('button.compare-hosts');
    await page.waitForFunction(() => location.hash.startsWith('#/host?h=') && new URLSearchParams(location.hash.split('?')[1]).getAll('h').length === 2);
    const both = await charts(page);
    t.deepEqual([...new Set(both.map((c) => c.host))].sort(), ['web01', 'web02']);
    t.deepEqual(await page.locator('.column-host').evaluateAll((cs) => cs.map((c) => c.getAttribute('data-host'))), ['web01', 'web02']);
    // one row per chart: each chart of web01 has web02's beside it, at the same height
    const tops = async () =>
      page.locator('.columns .card').evaluateAll((cs) => cs.map((c) => [c.getAttribute('data-metric'), c.getAttribute('data-host'), Math.round(c.getBoundingClientRect().top)]));
    const rowsOf = (cards: (string | number | null)[][]) => {
      const byRow = new Map<string, string[]>();
      for (const [metric, host, top] of cards) byRow.set(String(top), [...(byRow.get(String(top)) ?? []), `${metric}@${host}`]);
      return [...byRow.values()];
    };
    for (const row of rowsOf(await tops())) t.is(row.length, 2, row.join(', '));
    await shot('side-by-side');
    // a chart only web01 has: an empty placeholder for web02 in its row
    await page.click('nav.sections a:has-text("TCP")');
    await page.waitForSelector('.card.placeholder[data-host="web02"]');
    await charts(page);
    const tcp = rowsOf(await tops());
    t.deepEqual(tcp, [
      ['tcp_connect_latency@web01', 'tcp_connect_latency@web02'],
      ['tcp_connect_latency@web01', 'tcp_connect_latency@web02'],
    ]);
    await shot('side-by-side-placeholder');
    await page.goBack();
    // back on the fleet page, a click on a row opens that host
    await page.goBack();
    await page.waitForSelector('tr[data-host="web02"]');
    await page.click('tr[data-host="web02"] td[data-key="cpu"]');
    await page.waitForFunction(() => location.hash === '#/host?h=web02');
    await charts(page);
  });
});

browser.serial('a host page draws what /api/v1/query returns: rates with the burst, a gauge spike, percentiles, bucket heatmap', async (t) => {
  await browser.withPage(
    t,
    async ({ page, shot }) => {
      await page.goto(`${single.url}#/host?h=web01&s=Overview`);
      const drawn = await charts(page);
      t.true(drawn.length >= 4, drawn.map((c) => `${c.metric}:${c.kind}`).join(', '));
      const results = new Map<string, QueryResult>();
      for (const c of drawn) results.set(`${c.metric}:${c.kind}`, await holdsQuery(t, single, c));
      // known answers: 1 MiB/s received, a 50 MiB one-second burst in the burst line
      const net = results.get('network_bytes:rate');
      t.truthy(net, 'network bytes are on the Overview');
      if (net !== undefined) {
        const rx = seriesNamed(net, 'receive');
        t.truthy(rx);
        t.true(finite(rx?.avg ?? []).some((v) => Math.abs(v - MiB) < 1), 'receive at 1 MiB/s');
        t.is(Math.max(...finite(rx?.max ?? [])), MiB + BURST_BYTES, 'the burst view holds the one-second burst');
        const line = ((drawn.find((c) => c.metric === 'network_bytes')?.data ?? []) as number[][]).slice(1);
        t.true(line.some((l) => Math.max(...finite(l)) === MiB + BURST_BYTES), 'and the chart draws it');
      }
      const p = results.get('scheduler_runqueue_latency:percentiles');
      t.truthy(p, 'the run-queue percentiles are on the Overview');
      if (p !== undefined) {
        // 1 ms falls in the h2 bucket [0.983, 1.049) ms, 50 ms in [46.1, 50.3) ms
        for (const v of finite(seriesNamed(p, 'p50')?.avg ?? [])) t.true(v >= 983_040 && v < 1_048_576, `p50 ${v}`);
        for (const v of finite(seriesNamed(p, 'p99.9')?.avg ?? [])) t.true(v >= 46_137_344 && v < 50_331_648, `p99.9 ${v}`);
      }
      // the heatmap's hover line names a bucket and a count
      const heat = page.locator('.card-heatmap .u-over').first();
      const box = await heat.boundingBox();
      if (box !== null) await page.mouse.move(box.x + box.width / 2, box.y + box.height * 0.6);
      await shot('host-overview');
      const mem = await api<QueryResult>(single, `api/v1/query?host=web01&metric=memory_available`);
      t.is(Math.max(...finite(mem.series[0]?.max ?? [])), 7 * GiB, 'the one-sample spike survives in the max');
      // an unlabelled series is named by its metric, not "total"
      const memLegend = await text(page, '.card[data-metric="memory_available"] .u-legend');
      t.regex(memLegend, /memory_available/);
      t.notRegex(memLegend, /total/);
      t.is(await page.locator('#error').isHidden(), true);
    },
    { viewport: { width: 1400, height: 1600 } },
  );
});

browser.serial('a sparse histogram: a step with data between gaps is drawn (a point, not nothing)', async (t) => {
  await browser.withPage(t, async ({ page, shot }) => {
    await page.goto(`${single.url}#/host?h=web01&s=TCP`);
    const drawn = await charts(page);
    const c = drawn.find((d) => d.metric === 'tcp_connect_latency' && d.kind === 'percentiles');
    t.truthy(c, drawn.map((d) => `${d.metric}:${d.kind}`).join(', '));
    const lines = ((c?.data ?? []) as (number | null)[][]).slice(1);
    t.true(lines.some((l) => finite(l).length > 0), 'the chart holds values');
    // coloured pixels inside the plotting area: the lines' colours (grid and text are grey)
    const coloured = await page.locator('.card-percentiles[data-metric="tcp_connect_latency"] canvas').evaluate((canvas: PageCanvas) => {
      const ctx = canvas.getContext('2d');
      if (ctx === null) return -1;
      const { data } = ctx.getImageData(0, 0, canvas.width, canvas.height);
      let n = 0;
      for (let i = 0; i < data.length; i += 4) {
        const [r, g, b, a] = [data[i] ?? 0, data[i + 1] ?? 0, data[i + 2] ?? 0, data[i + 3] ?? 0];
        if (a > 200 && Math.max(r, g, b) - Math.min(r, g, b) > 60) n++;
      }
      return n;
    });
    t.true(coloured >= 8 * LONE_ROWS.length, `coloured pixels: ${coloured}`);
    await shot('sparse-percentiles');
  });
});

browser.serial('a chart of many lines: all-zero lines hidden (a toggle shows them), the hovered values largest first', async (t) => {
  await browser.withPage(t, async ({ page, shot }) => {
    await page.goto(`${single.url}#/host?h=web01&s=Syscalls`);
    await charts(page);
    const card = page.locator('.card[data-metric="syscall"]');
    t.is(await card.locator('.u-legend').count(), 0, 'no uPlot legend of 8 lines');
    t.is(await card.locator('.zero-toggle').textContent(), 'show 3 all-zero lines');
    const box = await card.locator('.u-over').boundingBox();
    if (box !== null) await page.mouse.move(box.x + box.width / 2, box.y + box.height / 2);
    await page.waitForFunction(() => (document.querySelector('.card[data-metric="syscall"] .hover-values')?.querySelectorAll('.hv').length ?? 0) > 0);
    const rows = await card.locator('.hover-values .hv').allTextContents();
    t.deepEqual(
      rows.map((r) => r.split(':')[0]),
      ['op7', 'op6', 'op5', 'op4', 'op3'],
    );
    await shot('many-lines');
    await card.locator('.zero-toggle').click();
    t.is(await card.locator('.zero-toggle').textContent(), 'hide 3 all-zero lines');
    await page.mouse.move(box === null ? 0 : box.x + box.width / 3, box === null ? 0 : box.y + 10);
    await page.waitForFunction(() => (document.querySelector('.card[data-metric="syscall"] .hover-values')?.querySelectorAll('.hv').length ?? 0) === 8);
    t.pass();
  });
});

browser.serial('sections switch: the CPU section draws per-CPU heatmaps of the busy time', async (t) => {
  await browser.withPage(
    t,
    async ({ page, shot }) => {
      await page.goto(`${single.url}#/host?h=web01&s=Overview`);
      await charts(page);
      await page.click('nav.sections a:has-text("CPU")');
      await page.waitForFunction(() => location.hash.includes('s=CPU'));
      await page.waitForFunction(() => window.__charts.some((c) => c.metric === 'cpu_usage'));
      const drawn = await charts(page);
      t.true(drawn.every((c) => c.metric.startsWith('cpu_')), drawn.map((c) => c.metric).join(', '));
      const usage = drawn.find((c) => c.metric === 'cpu_usage');
      t.is(usage?.kind, 'percpu');
      if (usage !== undefined) {
        const r = await holdsQuery(t, single, usage);
        // CPU 2 of web01: user 0.4 + system 0.05 s/s
        const cpu2 = r.series.filter((s) => s.labels.id === '2' && s.labels.state !== 'idle');
        const col = r.t.length >> 1;
        t.true(Math.abs(cpu2.reduce((sum, s) => sum + (s.avg[col] ?? 0), 0) - 0.45e9) < 1e3);
      }
      t.is(await page.locator('.card-percpu select[data-label="state"]').inputValue(), 'busy');
      // CPU time per second is cores busy
      t.regex(await text(page, '.card-percpu h3'), /cores/);
      t.regex(await text(page, '.card-percpu .color-legend'), /0\.55 cores/);
      // the heatmap's plotting area starts as far into its card as a line chart's does
      const inset = (sel: string) =>
        page.evaluate((q) => {
          const card = document.querySelector(q);
          const over = card?.querySelector('.u-over');
          return over === null || over === undefined || card === null ? -1 : over.getBoundingClientRect().left - card.getBoundingClientRect().left;
        }, sel);
      t.is(await inset('.card-percpu'), await inset('.card:not(.card-percpu)'));
      // hovering a cell says when as well as which CPU
      const heat = await page.locator('.card-percpu .u-over').boundingBox();
      if (heat !== null) await page.mouse.move(heat.x + heat.width / 2, heat.y + heat.height * 0.8);
      await page.waitForFunction(() => /CPU \d/.test(document.querySelector('.card-percpu .cell-info')?.textContent ?? ''));
      t.regex(await text(page, '.card-percpu .cell-info'), /^2025-01-01 \d\d:\d\d:\d\d · CPU \d+: /);
      await shot('host-cpu-heatmap');
      // another pick redraws without a query
      await page.selectOption('.card-percpu select[data-label="state"]', 'idle');
      await page.waitForFunction(() => (window.__charts.find((c) => c.metric === 'cpu_usage')?.data as { selection?: { state?: string } } | undefined)?.selection?.state === 'idle');
      t.pass();
    },
    { viewport: { width: 1400, height: 1000 } },
  );
});

browser.serial('brushing zooms every chart and refetches at the finer step, each chart once; Back unzooms; reset zoom goes back', async (t) => {
  await browser.withPage(t, async ({ page, shot }) => {
    await page.goto(`${single.url}#/host?h=web01&s=Overview`);
    const before = await charts(page);
    const step0 = (await api<QueryResult>(single, before[0]?.url ?? '')).step;
    const over = page.locator('.card .u-over').first();
    const box = await over.boundingBox();
    if (box === null) return t.fail('no chart area');
    // the /query requests of one zoom, and those that failed (aborted by a newer one)
    const queries: string[] = [];
    const failed: string[] = [];
    page.on('request', (r) => {
      if (r.url().includes('/api/v1/query')) queries.push(r.url());
    });
    page.on('requestfailed', (r) => {
      if (r.url().includes('/api/v1/query')) failed.push(r.url());
    });
    await page.mouse.move(box.x + box.width * 0.25, box.y + box.height / 2);
    await page.mouse.down();
    await page.mouse.move(box.x + box.width * 0.35, box.y + box.height / 2, { steps: 6 });
    await page.mouse.up();
    await page.waitForFunction(() => location.hash.includes('from='));
    const hash = new URLSearchParams((await page.evaluate(() => location.hash)).split('?')[1]);
    const from = Number(hash.get('from'));
    const to = Number(hash.get('to'));
    const urls = before.map((c) => c.url);
    await page.waitForFunction((old) => window.__charts.every((c, i) => c.url !== old[i]), urls);
    const after = await charts(page);
    for (const c of after) {
      const q = new URLSearchParams(c.url.split('?')[1]);
      t.true(Math.abs(Number(q.get('start')) - from) <= 1 && Math.abs(Number(q.get('end')) - to) <= 1, `${c.metric}: ${c.url}`);
      t.is(q.get('budget'), String(c.width), `${c.metric}: the budget is the chart's width`);
      const r = await holdsQuery(t, single, c);
      t.true(r.step < step0, `${c.metric}: step ${r.step} < ${step0}`);
      t.true(r.t.every((x) => x >= from - r.step && x <= to), c.metric);
    }
    // one zoom: each chart on screen fetched once, nothing aborted
    const zoomQueries = [...queries];
    t.deepEqual(failed, [], 'no query aborted');
    t.is(zoomQueries.length, after.length, `${zoomQueries.length} queries for ${after.length} charts:\n${zoomQueries.join('\n')}`);
    for (const c of after) t.is(zoomQueries.filter((u) => u.endsWith(c.url)).length, 1, `${c.metric} ${c.kind}: fetched once`);
    t.regex(await text(page, '#header .state'), /zoomed/);
    // the zoom is a history entry: Back shows the whole recording again, Forward the zoom
    await page.goBack();
    await page.waitForFunction(() => !location.hash.includes('from='));
    await page.waitForFunction((s) => window.__charts.every((c) => c.result !== undefined && c.result.step === s), step0);
    t.regex(await text(page, '#header .state'), /whole recording/);
    await page.goForward();
    await page.waitForFunction(() => location.hash.includes('from='));
    await page.waitForFunction((s) => window.__charts.every((c) => c.result !== undefined && c.result.step < s), step0);
    t.regex(await text(page, '#header .state'), /zoomed/);
    // a minute: HH:MM:SS labels, none cut off at the right edge
    await shot('zoomed');
    await page.click('button.reset-zoom');
    await page.waitForFunction(() => !location.hash.includes('from='));
    await page.waitForFunction((s) => window.__charts.every((c) => c.result !== undefined && c.result.step === s), step0);
    t.regex(await text(page, '#header .state'), /whole recording/);
  }, { viewport: { width: 1400, height: 1600 } });
});

browser.serial('the cgroup picker filters the cgroups section', async (t) => {
  await browser.withPage(t, async ({ page }) => {
    await page.goto(`${single.url}#/host?h=web01&s=cgroups`);
    const all = await charts(page);
    t.true(all.length >= 2);
    await page.selectOption('select.cgroup-select', '/user.slice');
    await page.waitForFunction(() => window.__charts.every((c) => c.url.includes('match=cgroup%3D%2Fuser.slice')));
    for (const c of await charts(page)) {
      const r = await holdsQuery(t, single, c);
      t.deepEqual(
        r.series.map((s) => s.labels.cgroup),
        r.series.map(() => '/user.slice'),
      );
      t.true(r.series.length > 0);
    }
  });
});

browser.serial('two files compared: A, B and A − B on seconds from each start', async (t) => {
  await browser.withPage(
    t,
    async ({ page, shot }) => {
      const info = await api<ViewInfo>(compared, 'api/v1/info');
      t.is(info.mode, 'compare');
      await page.goto(`${compared.url}#/compare?s=Overview`);
      const drawn = await charts(page);
      const net = drawn.find((c) => c.metric === 'network_bytes');
      t.truthy(net);
      if (net !== undefined) {
        const [urlA, urlB] = net.url.split(' ');
        const a = await api<QueryResult>(compared, urlA ?? '');
        const b = await api<QueryResult>(compared, urlB ?? '');
        t.is(a.step, b.step);
        const d = net.data as { main: (number | null)[][]; diff: (number | null)[][] };
        // x: seconds from each start, from 0
        t.is(d.main[0]?.[0], 0);
        const rxA = seriesNamed(a, 'receive')?.avg ?? [];
        const rxB = seriesNamed(b, 'receive')?.avg ?? [];
        const main = d.main.slice(1).map((l) => JSON.stringify(l.slice(0, rxB.length)));
        t.true(main.includes(JSON.stringify(rxA.slice(0, rxB.length))), "A's receive line is A's query");
        t.true(main.includes(JSON.stringify(rxB)), "B's receive line is B's query");
        const diff = d.diff.slice(1).map((l) => JSON.stringify(l.slice(0, rxB.length)));
        const want = rxB.map((v, i) => (v === null || rxA[i] === null || rxA[i] === undefined ? null : (rxA[i] as number) - v));
        t.true(diff.includes(JSON.stringify(want)), 'and the difference is A − B');
      }
      const usage = drawn.find((c) => c.metric === 'scheduler_runqueue_latency' && c.kind === 'heatmap');
      t.truthy(usage, 'histograms get an A and a B heatmap');
      t.regex(await text(page, '#header'), /A\/B comparison[\s\S]*before: [\s\S]*fleet\.parquet[\s\S]*after: [\s\S]*b\.parquet/);
      // the sources by the names given, not A/B
      t.regex(await text(page, '.card[data-metric="network_bytes"] h3'), /before solid, after dashed; below: before − after/);
      t.regex(await text(page, '.card[data-metric="network_bytes"] .u-legend'), /before receive[\s\S]*after receive/);
      // the difference has a scale (ticks besides 0) and its value on hover
      const diff = page.locator('.card[data-metric="network_bytes"] .chart.diff');
      await diff.scrollIntoViewIfNeeded();
      const box = await diff.locator('.u-over').boundingBox();
      if (box !== null) await page.mouse.move(box.x + box.width * 0.2, box.y + box.height / 2);
      await page.waitForFunction(() => /before − after receive:?\s*-?\d/.test(document.querySelector('.card[data-metric="network_bytes"] .chart.diff .u-legend')?.textContent ?? ''));
      t.pass();
      // the two heatmaps share one colour scale
      const heat = drawn.find((c) => c.metric === 'scheduler_runqueue_latency' && c.kind === 'heatmap')?.data as { a: { colorMax: number }; b: { colorMax: number } } | undefined;
      t.true(heat !== undefined && heat.a.colorMax === heat.b.colorMax && heat.a.colorMax > 0);
      await shot('compare');
    },
    { viewport: { width: 1400, height: 1600 } },
  );
});

browser.serial('an API error is one clear line on the page', async (t) => {
  await browser.withPage(
    t,
    async ({ page, shot }) => {
      await page.goto(`${single.url}#/host?h=no-such-host`);
      await page.waitForSelector('#error:not([hidden])');
      const line = await text(page, '#error');
      t.regex(line, /no-such-host/);
      t.false(line.includes('\n'));
      await shot('error');
    },
    { expectErrors: /status of 404/ },
  );
});
