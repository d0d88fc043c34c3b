// Alert events on the viewer: GET /api/v1/alerts answers the events of
// REZOLUS_ALERTS (a real nats-server; events made by the contract's own
// transitionEvent/captureEvent and published with their Nats-Msg-Id) read
// from the window at start and followed after, filtered by host and range,
// in time order; junk on the stream is ignored; the fleet rows count firing
// alerts; without the stream there are none until it appears; a file source
// has none. AlertLog's bounds hold.
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { jetstream, jetstreamManager } from '@nats-io/jetstream';
import type { NatsConnection } from '@nats-io/nats-core';
import { connect } from '@nats-io/transport-node';
import test from 'ava';
import { runAgent, type RunningAgent } from '../../src/agent/main.js';
import { ensureAlertStream } from '../../src/alert/bus.js';
import { type AlertRecord, type AlertState, ALERTS_STREAM, alertSubject, captureEvent, captureMsgId, transitionEvent, transitionMsgId } from '../../src/alert/contract.js';
import { loadAgentConfig } from '../../src/config/agent.js';
import { silentLogger } from '../../src/log/logger.js';
import { SAMPLER_NAMES } from '../../src/samplers/registry.js';
import { AlertLog, parseAlertEvent } from '../../src/viewer/alerts.js';
import type { AlertMark, AlertsResult, HostSummary } from '../../src/viewer/api.js';
import { runViewer, type RunningViewer } from '../../src/viewer/main.js';
import { NO_KERNEL } from '../helpers/fixtures.js';
import { startTestNats, type TestNats } from '../helpers/nats.js';
import { until } from '../helpers/until.js';
import { meta, spec, T0, writeRecording } from './file-recordings.js';

const STREAM_OPTIONS = { maxAgeMs: 24 * 3_600_000, maxBytes: 64 * 1024 * 1024, replicas: 1 };
const enc = new TextEncoder();

function record(over: Partial<AlertRecord> & Pick<AlertRecord, 'host' | 'rule' | 'state' | 'at'>): AlertRecord {
  return {
    v: 1,
    series: {},
    previous: 'inactive',
    seq: 1,
    activeAt: over.at,
    value: 0.0042,
    threshold: 0.001,
    unit: 'seconds',
    severity: 'warning',
    labels: { team: 'sre' },
    summary: `run-queue p99 on ${over.host} is 4.2 ms`,
    evaluator: 'test',
    published: true,
    ...over,
  };
}

/** Publishes the transition event of `r` as the evaluator does: its subject, its Nats-Msg-Id. */
async function publishTransition(nc: NatsConnection, r: AlertRecord): Promise<void> {
  await jetstream(nc).publish(alertSubject(r.host, r.rule), JSON.stringify(transitionEvent(r, '4.2 ms', '1 ms')), { msgID: transitionMsgId(r) });
}

async function publishRaw(nc: NatsConnection, subject: string, body: string | Uint8Array): Promise<void> {
  await jetstream(nc).publish(subject, typeof body === 'string' ? enc.encode(body) : body);
}

function liveViewer(server: TestNats, dir: string): Promise<RunningViewer> {
  return runViewer(
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
}

async function get<T>(viewer: RunningViewer, path: string): Promise<{ status: number; body: T }> {
  const r = await viewer.app.inject({ method: 'GET', url: path });
  return { status: r.statusCode, body: r.json() as T };
}

const brief = (events: readonly AlertMark[]) => events.map((e) => `${e.host}/${e.rule}/${e.kind === 'capture' ? 'capture' : e.state}`);

test.serial('the live API: the window read at start, new events followed, by host and range, junk ignored, firing counted', async (t) => {
  const server = await startTestNats();
  const dir = mkdtempSync(join(tmpdir(), 'rezolus-view-alerts-'));
  const nc = await connect({ servers: server.url });
  let agent: RunningAgent | undefined;
  let viewer: RunningViewer | undefined;
  try {
    await ensureAlertStream(nc, STREAM_OPTIONS, silentLogger());
    const base = loadAgentConfig(undefined, SAMPLER_NAMES, { host: 'alpha', natsUrl: server.url });
    const samplers = Object.fromEntries(SAMPLER_NAMES.map((n) => [n, { enabled: n === 'memory_meminfo', intervalMs: 200 }]));
    agent = await runAgent({ ...base, procfs: '/proc', sysfs: '/sys', kernel: NO_KERNEL, samplers }, silentLogger());

    const now = Date.now();
    const pending = record({ host: 'alpha', rule: 'runqueue_p99', state: 'pending', at: now - 30_000 });
    const firing = record({ ...pending, state: 'firing', previous: 'pending', seq: 2, at: now - 20_000, firedAt: now - 20_000 });
    const betaFiring = record({ host: 'beta', rule: 'memory_low', state: 'firing', previous: 'pending', at: now - 25_000, activeAt: now - 40_000 });
    // a per-series rule: its own alert, so alpha has two firing until one resolves
    const perSeries = record({ host: 'alpha', rule: 'tcp_retransmits', state: 'firing', previous: 'pending', series: { device: 'eth0' }, at: now - 15_000 });
    for (const r of [pending, firing, betaFiring, perSeries]) await publishTransition(nc, r);
    // the same transition again (a second evaluator): the server stores it once
    await publishTransition(nc, firing);
    const episode = { activeAt: firing.activeAt, firedAt: firing.firedAt ?? firing.at };
    const capture = captureEvent(firing, episode, { file: 'incidents/alpha/runqueue_p99-x.parquet', since: now - 80_000, until: now - 10_000, rows: 350, bytes: 40_000 }, now - 10_000, 'test');
    await jetstream(nc).publish(alertSubject('alpha', 'runqueue_p99'), JSON.stringify(capture), { msgID: captureMsgId(firing, episode) });
    // junk, each of which a hostile or broken publisher could send
    const good = transitionEvent(record({ host: 'alpha', rule: 'junk', state: 'firing', at: now - 5000 }), '1', '0');
    const junk: [string, string | Uint8Array][] = [
      [alertSubject('alpha', 'junk'), 'not json'],
      [alertSubject('alpha', 'junk'), '[1, 2]'],
      [alertSubject('alpha', 'junk'), new Uint8Array([0x7b, 0xff, 0xfe, 0x7d])],
      [alertSubject('alpha', 'junk'), JSON.stringify({ ...good, v: 2 })],
      [alertSubject('alpha', 'junk'), JSON.stringify({ ...good, host: 'beta' })], // filed under another host than its subject
      [alertSubject('alpha', 'junk'), JSON.stringify({ ...good, state: 'exploded' })],
      [alertSubject('alpha', 'junk'), JSON.stringify({ ...good, at: new Date(now + 3_600_000).toISOString() })], // an hour ahead
      [alertSubject('alpha', 'junk'), JSON.stringify({ ...good, at: new Date(now - 7_200_000).toISOString() })], // before the window
      [alertSubject('alpha', 'junk'), JSON.stringify({ ...good, value: 'high' })],
      [alertSubject('alpha', 'junk'), JSON.stringify({ ...good, summary: 'x'.repeat(20_000) })], // larger than an event is
      [alertSubject('alpha', 'junk'), JSON.stringify({ ...good, series: { n: 1 } })],
      [alertSubject('alpha', 'junk'), JSON.stringify(good).replace('"series":{}', '"series":{"__proto__":{"polluted":"yes"}}')],
      [alertSubject('alpha', 'junk'), JSON.stringify(good).replace('"series":{}', '"series":{"__proto__":"yes"}')],
      [alertSubject('alpha', 'junk'), JSON.stringify(good).replace('"series":{}', '"series":{"constructor":"yes"}')],
      [`${alertSubject('alpha', 'junk')}.extra`, JSON.stringify(good)],
      [alertSubject('Alpha', 'junk'), JSON.stringify({ ...good, host: 'Alpha' })], // not a host token
    ];
    for (const [subject, body] of junk) await publishRaw(nc, subject, body);
    const stored = (await (await jetstreamManager(nc)).streams.info(ALERTS_STREAM)).state.messages;
    t.is(stored, 5 + junk.length, 'the repeated transition is stored once');

    viewer = await liveViewer(server, dir);
    const v = viewer;
    const all = () => get<AlertsResult>(v, `/api/v1/alerts?from=${now - 60_000}&to=${now + 60_000}`);
    t.true(await until(async () => (await all()).body.events.length >= 5, 30_000), 'the window read at start');
    const first = await all();
    t.is(first.status, 200);
    t.deepEqual(brief(first.body.events), ['alpha/runqueue_p99/pending', 'beta/memory_low/firing', 'alpha/runqueue_p99/firing', 'alpha/tcp_retransmits/firing', 'alpha/runqueue_p99/capture']);
    t.is(first.body.note, undefined);
    t.is(({} as Record<string, unknown>).polluted, undefined, 'no prototype touched');

    // fields as the page reads them: times in unix ms, texts as published
    const f = first.body.events[2] as AlertMark;
    t.like(f, { at: now - 20_000, activeAt: now - 30_000, kind: 'transition', state: 'firing', previous: 'pending', value: 0.0042, valueText: '4.2 ms', thresholdText: '1 ms', severity: 'warning', summary: 'run-queue p99 on alpha is 4.2 ms' });
    t.deepEqual(first.body.events[3]?.series, { device: 'eth0' });
    t.like(first.body.events[4], { kind: 'capture', state: null, file: 'incidents/alpha/runqueue_p99-x.parquet', at: now - 10_000 });

    // by host; by range (inclusive at both ends)
    t.deepEqual(brief((await get<AlertsResult>(v, `/api/v1/alerts?host=beta&from=${now - 60_000}&to=${now}`)).body.events), ['beta/memory_low/firing']);
    t.deepEqual(brief((await get<AlertsResult>(v, `/api/v1/alerts?host=alpha&from=${now - 20_000}&to=${now - 15_000}`)).body.events), ['alpha/runqueue_p99/firing', 'alpha/tcp_retransmits/firing']);
    t.deepEqual((await get<AlertsResult>(v, `/api/v1/alerts?host=nobody&from=${now - 60_000}&to=${now}`)).body.events, []);
    // without a range: the window so far
    t.is((await get<AlertsResult>(v, '/api/v1/alerts?host=alpha')).body.events.length, 4);

    // the fleet row: two alerts of alpha firing
    let rows: HostSummary[] = [];
    t.true(await until(async () => {
      rows = (await get<HostSummary[]>(v, '/api/v1/hosts')).body;
      return rows.some((h) => h.host === 'alpha');
    }, 30_000));
    t.is(rows.find((h) => h.host === 'alpha')?.alertsFiring, 2);

    // followed: an event published now shows, and the resolved alert is no longer counted
    const resolved = record({ ...firing, state: 'resolved', previous: 'firing', seq: 3, at: Date.now(), resolvedAt: Date.now() });
    await publishTransition(nc, resolved);
    t.true(await until(async () => (await get<AlertsResult>(v, '/api/v1/alerts?host=alpha')).body.events.length === 5, 30_000), 'the new event followed');
    const after = (await get<AlertsResult>(v, '/api/v1/alerts?host=alpha')).body.events;
    t.deepEqual(brief(after).at(-1), 'alpha/runqueue_p99/resolved');
    t.is(after.at(-1)?.at, resolved.at);
    t.is((await get<HostSummary[]>(v, '/api/v1/hosts')).body.find((h) => h.host === 'alpha')?.alertsFiring, 1);

    // bad ranges
    t.is((await get(v, '/api/v1/alerts?from=yesterday')).status, 400);
    t.is((await get(v, `/api/v1/alerts?from=${now}&to=${now - 1}`)).status, 400);
    t.is((await get(v, '/api/v1/alerts?from=-9e15')).status, 400);
  } finally {
    await viewer?.stop();
    await agent?.stop();
    await nc.close();
    await server.dispose();
    rmSync(dir, { recursive: true, force: true });
  }
});

test.serial('without the alert stream: no events and a note, no failure; once an evaluator makes it, its events show', async (t) => {
  const server = await startTestNats();
  const dir = mkdtempSync(join(tmpdir(), 'rezolus-view-alerts-'));
  const nc = await connect({ servers: server.url });
  let viewer: RunningViewer | undefined;
  try {
    viewer = await liveViewer(server, dir);
    const v = viewer;
    t.true(await until(async () => (await get<AlertsResult>(v, '/api/v1/alerts')).body.note !== undefined, 30_000));
    const none = await get<AlertsResult>(v, '/api/v1/alerts?host=alpha');
    t.is(none.status, 200);
    t.deepEqual(none.body.events, []);
    t.regex(none.body.note ?? '', /no alert stream REZOLUS_ALERTS/);
    t.is((await get(v, '/api/v1/info')).status, 200);

    await ensureAlertStream(nc, STREAM_OPTIONS, silentLogger());
    const r = record({ host: 'alpha', rule: 'host_silent', state: 'firing', previous: 'pending', at: Date.now() - 1000 });
    await publishTransition(nc, r);
    // the viewer tries again on its sweep (every 5 s)
    t.true(await until(async () => (await get<AlertsResult>(v, '/api/v1/alerts?host=alpha')).body.events.length === 1, 60_000), 'the event once the stream is there');
    const got = (await get<AlertsResult>(v, '/api/v1/alerts?host=alpha')).body;
    t.is(got.note, undefined);
    t.like(got.events[0], { rule: 'host_silent', state: 'firing', at: r.at });
  } finally {
    await viewer?.stop();
    await nc.close();
    await server.dispose();
    rmSync(dir, { recursive: true, force: true });
  }
});

test.serial('a file source has no alert events: an empty list', async (t) => {
  const dir = mkdtempSync(join(tmpdir(), 'rezolus-view-alerts-file-'));
  const path = join(dir, 'one.parquet');
  let viewer: RunningViewer | undefined;
  try {
    const rows = Array.from({ length: 10 }, (_, i) => ({ ns: T0 + BigInt(i) * 1_000_000_000n, host: 'web01' }));
    await writeRecording(path, rows, [{ spec: spec('memory_available', 'gauge', {}, 'bytes'), cell: (i) => 1000 + i }], meta(['web01']));
    viewer = await runViewer(
      { source: { kind: 'files', files: [{ name: 'one', path }] }, listen: { host: '127.0.0.1', port: 0 }, token: undefined, windowMs: undefined, saveDir: dir, saveIntervalMs: 1000 },
      silentLogger(),
    );
    const r = await get<AlertsResult>(viewer, '/api/v1/alerts?host=web01');
    t.is(r.status, 200);
    t.deepEqual(r.body.events, []);
    t.is((await get<HostSummary[]>(viewer, '/api/v1/hosts')).body[0]?.alertsFiring, undefined, 'no firing count for a file');
  } finally {
    await viewer?.stop();
    rmSync(dir, { recursive: true, force: true });
  }
});

const mark = (host: string, at: number, state: AlertState = 'firing', rule = 'r'): AlertMark => {
  const parsed = parseAlertEvent(alertSubject(host, rule), enc.encode(JSON.stringify(transitionEvent(record({ host, rule, state, at }), 'v', 't'))), at);
  if (parsed === undefined) throw new Error('a valid event was refused');
  return parsed;
};

test('AlertLog: per-host, total and host bounds; the window; each event once', (t) => {
  const log = new AlertLog(60_000, { perHost: 6, total: 20, hosts: 4 });
  const now = 1_000_000_000;
  // per host: its oldest go first
  for (let i = 0; i < 8; i++) t.true(log.add(mark('a', now - 10_000 + i), now));
  t.is(log.size, 6);
  t.deepEqual(log.range('a', 0, now).events.map((e) => e.at - now), [-9998, -9997, -9996, -9995, -9994, -9993]);
  // each event once
  t.false(log.add(mark('a', now - 9993), now));
  t.is(log.size, 6);
  // out of order: kept in time order
  log.add(mark('b', now - 100), now);
  log.add(mark('b', now - 300), now);
  log.add(mark('b', now - 200), now);
  t.deepEqual(log.range('b', 0, now).events.map((e) => e.at - now), [-300, -200, -100]);
  // hosts: a fifth host is refused
  log.add(mark('c', now - 1), now);
  log.add(mark('d', now - 1), now);
  t.false(log.add(mark('e', now - 1), now));
  t.deepEqual(log.hosts(), ['a', 'b', 'c', 'd']);
  // total: beyond 20, down to 18, the oldest of all first (a's)
  for (let i = 0; i < 4; i++) log.add(mark('c', now - 50 + i), now);
  for (let i = 0; i < 4; i++) log.add(mark('d', now - 40 + i), now);
  log.add(mark('b', now - 90), now);
  t.is(log.size, 20);
  log.add(mark('b', now - 80), now);
  t.is(log.size, 18);
  t.deepEqual(log.range('a', 0, now).events.map((e) => e.at - now), [-9995, -9994, -9993], "a's oldest went first");
  t.is(log.range('b', 0, now).events.length, 5);
  // older than the window: refused, and trimmed
  t.false(log.add(mark('b', now - 70_000), now));
  log.trim(now + 60_000 - 150);
  t.deepEqual(log.range(undefined, 0, now + 1).events.map((e) => e.at - now).every((d) => d >= -150), true);
  // the answer's bound: the newest, the rest counted
  const big = new AlertLog(60_000);
  for (let i = 0; i < 10; i++) big.add(mark('a', now - 100 + i), now);
  const r = big.range('a', 0, now, 3);
  t.deepEqual(r.events.map((e) => e.at - now), [-93, -92, -91]);
  t.is(r.omitted, 7);
});

test('AlertLog.firing: the newest transition of each alert (rule and series)', (t) => {
  const log = new AlertLog(60_000);
  const now = 1_000_000_000;
  log.add(mark('a', now - 50, 'pending'), now);
  t.is(log.firing('a'), 0);
  log.add(mark('a', now - 40, 'firing'), now);
  log.add(mark('a', now - 30, 'firing', 'other'), now);
  t.is(log.firing('a'), 2);
  log.add(mark('a', now - 20, 'resolved'), now);
  t.is(log.firing('a'), 1);
  t.is(log.firing('nobody'), 0);
});
