// Alert markers in Chromium on a live viewer (a real nats-server, an agent
// `alpha`, the alert stream made by src/alert/bus.ts, events made by the
// contract's transitionEvent): the fleet table counts alpha's firing alerts;
// a following host page draws the window's pending and firing events of
// alpha (not beta's) and a resolved one published while it is open, and
// lists them in the strip; zoomed to a known range, each marker is at the x
// that range gives, its flag painted in its state's colour, on line charts
// and heatmaps; hovering one tells rule, state, value and summary; a click
// in the strip zooms to the alert. Screenshots in test-artifacts/browser-alerts/.
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { jetstream, jetstreamManager } from '@nats-io/jetstream';
import type { NatsConnection } from '@nats-io/nats-core';
import { connect } from '@nats-io/transport-node';
import test from 'ava';
import type { Page } from 'playwright-core';
import { runAgent, type RunningAgent } from '../../src/agent/main.js';
import { ensureAlertStream } from '../../src/alert/bus.js';
import { type AlertRecord, alertSubject, transitionEvent, transitionMsgId } from '../../src/alert/contract.js';
import { loadAgentConfig } from '../../src/config/agent.js';
import { silentLogger } from '../../src/log/logger.js';
import { SAMPLER_NAMES } from '../../src/samplers/registry.js';
import type { QueryResult } from '../../src/viewer/api.js';
import { runViewer, type RunningViewer } from '../../src/viewer/main.js';
import { ARTIFACTS, useBrowser } from '../helpers/browser.js';
import { NO_KERNEL } from '../helpers/fixtures.js';
import { startTestNats, type TestNats } from '../helpers/nats.js';
import { until } from '../helpers/until.js';

const browser = useBrowser(test, import.meta.url);

/** What the page keeps for tests (src/viewer/web/chart-registry.ts); the callbacks that read it run in the page. */
interface PageChart {
  readonly metric: string;
  readonly kind: string;
  readonly host: string;
  readonly draws: number;
  readonly result: QueryResult | undefined;
  readonly marks: readonly { readonly at: number; readonly rule: string; readonly state: string; readonly x: number }[] | undefined;
}
interface Rect {
  readonly left: number;
  readonly top: number;
  readonly width: number;
  readonly height: number;
}
/** The few DOM names the callbacks that run in the page use (this file is typechecked without the DOM lib). */
interface PageElement {
  readonly textContent: string | null;
  getAttribute(name: string): string | null;
  getBoundingClientRect(): Rect;
  querySelector(selector: string): PageElement | null;
  getContext(kind: '2d'): { getImageData(x: number, y: number, w: number, h: number): { readonly data: ArrayLike<number> } } | null;
}
declare const window: { readonly __charts: PageChart[] };
declare const location: { readonly hash: string };
declare const document: PageElement & { querySelectorAll(selector: string): ArrayLike<PageElement> & Iterable<PageElement> };
declare const devicePixelRatio: number;

const RULE = 'runqueue_p99';
const SUMMARY = 'run-queue p99 on alpha is 4.2 ms';

let server: TestNats;
let nc: NatsConnection;
let agent: RunningAgent;
let viewer: RunningViewer;
let dir: string;
let pending: AlertRecord;
let firing: AlertRecord;
let resolved: AlertRecord | undefined;

function record(over: Partial<AlertRecord> & Pick<AlertRecord, 'host' | 'rule' | 'state' | 'at'>): AlertRecord {
  return {
    v: 1, series: {}, previous: 'inactive', seq: 1, activeAt: over.at, value: 0.0042, threshold: 0.001, unit: 'seconds', severity: 'warning',
    labels: {}, summary: SUMMARY, evaluator: 'test', published: true, ...over,
  };
}

async function publish(r: AlertRecord): Promise<void> {
  await jetstream(nc).publish(alertSubject(r.host, r.rule), JSON.stringify(transitionEvent(r, '4.2 ms', '1 ms')), { msgID: transitionMsgId(r) });
}

test.before(async () => {
  if (browser.skipReason !== undefined) return;
  server = await startTestNats();
  dir = mkdtempSync(join(tmpdir(), 'rezolus-view-browser-alerts-'));
  nc = await connect({ servers: server.url });
  await ensureAlertStream(nc, { maxAgeMs: 3_600_000, maxBytes: 16 * 1024 * 1024, replicas: 1 }, silentLogger());
  const base = loadAgentConfig(undefined, SAMPLER_NAMES, { host: 'alpha', natsUrl: server.url });
  const on = ['cpu_usage', 'cpu_cores', 'memory_meminfo'];
  const samplers = Object.fromEntries(SAMPLER_NAMES.map((n) => [n, { enabled: on.includes(n), intervalMs: 200 }]));
  agent = await runAgent({ ...base, procfs: '/proc', sysfs: '/sys', kernel: NO_KERNEL, samplers }, silentLogger());
  // the events go after alpha's first frame (the live page starts there): wait for it, then 4 s of frames
  const jsm = await jetstreamManager(nc);
  let first = Number.NaN;
  await until(async () => {
    const info = await jsm.streams.info('REZOLUS').catch(() => undefined);
    first = info !== undefined && info.state.messages > 0 ? Date.parse(info.state.first_ts) : Number.NaN;
    return Number.isFinite(first);
  }, 60_000);
  await new Promise((r) => setTimeout(r, Math.max(0, first + 4000 - Date.now())));
  const now = Date.now();
  pending = record({ host: 'alpha', rule: RULE, state: 'pending', at: now - 2500 });
  firing = record({ ...pending, state: 'firing', previous: 'pending', seq: 2, at: now - 1000, firedAt: now - 1000 });
  await publish(pending);
  await publish(firing);
  // another host's alert: never on alpha's page
  await publish(record({ host: 'beta', rule: 'memory_low', state: 'firing', previous: 'pending', at: now - 1800 }));
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
  await agent?.stop();
  await nc?.close();
  await server?.dispose();
  if (dir !== undefined) rmSync(dir, { recursive: true, force: true });
});

/** The alert markers of every chart drawn for the range from `from`: chart, marker, where its plotting area is, and the colour of its flag's middle. */
function markersOn(page: Page, from: number) {
  return page.evaluate((start) => {
    const out: { metric: string; kind: string; state: string; at: number; x: number; over: Rect; flag: number[] }[] = [];
    for (const c of window.__charts) {
      if (c.result?.start !== start || c.marks === undefined) continue;
      const card = document.querySelector(`.card[data-metric="${c.metric}"][data-kind="${c.kind}"]`);
      const over = card?.querySelector('.u-over')?.getBoundingClientRect();
      const canvas = card?.querySelector('canvas');
      if (over === undefined || canvas === undefined || canvas === null) continue;
      const cr = canvas.getBoundingClientRect();
      for (const m of c.marks) {
        // the flag sits on the plotting area's top edge, 7 px high: 3 px above the edge is inside it
        const x = Math.round((over.left - cr.left + m.x) * devicePixelRatio);
        const y = Math.round((over.top - cr.top - 3) * devicePixelRatio);
        const px = canvas.getContext('2d')?.getImageData(x, y, 1, 1).data ?? [];
        out.push({ metric: c.metric, kind: c.kind, state: m.state, at: m.at, x: m.x, over: { left: over.left, top: over.top, width: over.width, height: over.height }, flag: [...Array.from(px)] });
      }
    }
    return out;
  }, from);
}

/** The colour family a state is drawn in: red, amber, green. */
function colourOf([r = 0, g = 0, b = 0, a = 0]: number[]): string {
  if (a < 200) return `transparent (${r},${g},${b},${a})`;
  if (r > 170 && g < 90 && b < 90) return 'red';
  if (r > 200 && g > 110 && g < 200 && b < 80) return 'amber';
  if (g > r + 60 && g > b + 40) return 'green';
  return `other (${r},${g},${b})`;
}

browser.serial("the fleet table counts a host's firing alerts", async (t) => {
  await browser.withPage(t, async ({ page, shot }) => {
    await page.goto(viewer.url);
    await page.waitForSelector('table.fleet tr[data-host="alpha"]', { timeout: 30_000 });
    await page.waitForFunction(() => document.querySelector('tr[data-host="alpha"] td[data-key="alerts"]')?.textContent === '1 firing', null, { timeout: 30_000 });
    t.is(await page.locator('table.fleet th[data-key="alerts"]').count(), 1);
    t.is(await page.locator('table.fleet tr[data-host="beta"]').count(), 0, 'beta sends no frames: no row');
    await shot('fleet');
  });
});

browser.serial("a following host page draws the window's markers, and a new event as it comes", async (t) => {
  await browser.withPage(t, async ({ page, shot }) => {
    await page.goto(`${viewer.url}#/host?h=alpha&s=Memory`);
    await page.waitForFunction(
      () => window.__charts.some((c) => c.metric === 'memory_available' && (c.marks ?? []).map((m) => m.state).join() === 'pending,firing'),
      null,
      { timeout: 30_000 },
    );
    // every chart of alpha draws the same markers: alpha's, never beta's
    const rules = await page.evaluate(() => window.__charts.flatMap((c) => (c.marks ?? []).map((m) => m.rule)));
    t.true(rules.length >= 2);
    t.deepEqual([...new Set(rules)], [RULE]);

    const now = Date.now();
    resolved = record({ ...firing, state: 'resolved', previous: 'firing', seq: 3, at: now, resolvedAt: now });
    await publish(resolved);
    await page.waitForFunction(
      () => window.__charts.some((c) => c.metric === 'memory_available' && (c.marks ?? []).map((m) => m.state).join() === 'pending,firing,resolved'),
      null,
      { timeout: 30_000 },
    );
    // the strip: newest first
    await page.waitForFunction(() => document.querySelectorAll('.alerts tr[data-state]').length === 3, null, { timeout: 30_000 });
    const states = await page.locator('.alerts tr[data-state]').evaluateAll((rows) => rows.map((r) => `${r.getAttribute('data-rule')}:${r.getAttribute('data-state')}`));
    t.deepEqual(states, [`${RULE}:resolved`, `${RULE}:firing`, `${RULE}:pending`]);
    t.regex((await page.locator('.alerts tr[data-state="firing"]').textContent()) ?? '', /4\.2 ms \(threshold 1 ms\)[\s\S]*run-queue p99 on alpha/);
    await shot('live-host');
    await page.screenshot({ path: join(ARTIFACTS, 'browser-alerts', 'live-host-view.png') });
  });
});

browser.serial("zoomed: each marker at its time's x in its state's colour, on lines and heatmaps; hover tells it; a click in the strip zooms to it", async (t) => {
  t.truthy(resolved, 'the test before published the resolved event');
  const last = resolved;
  if (last === undefined) return;
  const from = pending.at - 3000;
  const to = last.at + 3000;
  await browser.withPage(t, async ({ page, shot }) => {
    const expectedAt: Record<string, number> = { pending: pending.at, firing: firing.at, resolved: last.at };
    const colour: Record<string, string> = { pending: 'amber', firing: 'red', resolved: 'green' };
    /** waits for the charts of `kinds` to draw the range with 3 markers, then checks each marker's x and colour */
    const check = async (kinds: readonly string[]) => {
      await page
        .waitForFunction(
          ([start, wanted]) => window.__charts.some((c) => wanted.includes(c.kind) && c.result?.start === start && (c.marks ?? []).length === 3),
          [from, kinds] as const,
          { timeout: 30_000 },
        )
        .catch(async (error: unknown) => {
          t.log(JSON.stringify(await page.evaluate(() => window.__charts.map((c) => [c.metric, c.kind, c.result?.start, c.marks?.length]))), from);
          throw error;
        });
      const marks = (await markersOn(page, from)).filter((m) => kinds.includes(m.kind));
      t.true(marks.length >= 3, `${marks.length} markers on ${kinds.join(', ')} charts`);
      for (const m of marks) {
        t.is(m.at, expectedAt[m.state] ?? Number.NaN, `${m.metric}/${m.kind} ${m.state}`);
        // where the route's range puts that time on the plotting area
        const x = ((m.at - from) / (to - from)) * m.over.width;
        t.true(Math.abs(m.x - x) <= 1, `${m.metric}/${m.kind} ${m.state}: drawn at ${m.x.toFixed(1)} px, the range gives ${x.toFixed(1)} px`);
        t.is(colourOf(m.flag), colour[m.state] ?? '?', `${m.metric}/${m.kind} ${m.state}: flag ${m.flag.join(',')}`);
      }
      return marks;
    };

    // the per-CPU heatmap
    await page.goto(`${viewer.url}#/host?h=alpha&s=CPU&from=${from}&to=${to}`);
    await check(['percpu']);
    await page.screenshot({ path: join(ARTIFACTS, 'browser-alerts', 'zoomed-cpu.png') });
    // line charts (the section changes in place)
    await page.goto(`${viewer.url}#/host?h=alpha&s=Overview&from=${from}&to=${to}`);
    await check(['value', 'rate']);
    // check() waits for one chart of those kinds; on a loaded machine the memory chart may draw later
    await page.waitForFunction(
      (start) => window.__charts.some((c) => c.metric === 'memory_available' && c.result?.start === start && (c.marks ?? []).length === 3),
      from,
      { timeout: 30_000 },
    );
    const marks = (await markersOn(page, from)).filter((m) => m.kind === 'value' || m.kind === 'rate');

    // hover near the firing marker of the memory chart: its tip, and only its chart's
    const mem = marks.find((m) => m.metric === 'memory_available' && m.state === 'firing');
    t.truthy(mem, `a firing marker on memory_available among ${marks.map((m) => `${m.metric}:${m.state}`).join(' ')}`);
    if (mem === undefined) return;
    await page.mouse.move(mem.over.left + mem.x - 40, mem.over.top + 40);
    await page.mouse.move(mem.over.left + mem.x + 2, mem.over.top + 40);
    await page.waitForSelector('.alert-tip:not([hidden])');
    t.is(await page.locator('.alert-tip:not([hidden])').count(), 1);
    const tip = (await page.locator('.alert-tip:not([hidden])').textContent()) ?? '';
    t.regex(tip, new RegExp(`${RULE}\\s*firing`));
    t.regex(tip, /4\.2 ms \(threshold 1 ms\)/);
    t.true(tip.includes(SUMMARY), tip);
    t.false(tip.includes('pending'), `only the marker under the cursor: ${tip}`);
    await shot('zoomed-hover');
    await page.screenshot({ path: join(ARTIFACTS, 'browser-alerts', 'zoomed-hover-view.png') });

    // away from every marker: no tip
    await page.mouse.move(mem.over.left + 5, mem.over.top + 40);
    await page.waitForSelector('.alert-tip:not([hidden])', { state: 'detached', timeout: 5000 }).catch(() => undefined);
    t.is(await page.locator('.alert-tip:not([hidden])').count(), 0);

    // a click on the pending row zooms to it: 15 s either side
    await page.click('.alerts tr[data-state="pending"]');
    await page.waitForFunction((f) => location.hash.includes(`from=${f}`), pending.at - 15_000);
    t.true((await page.evaluate(() => location.hash)).includes(`to=${pending.at + 15_000}`));
  });
});
