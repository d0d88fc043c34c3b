import test, { type ExecutionContext } from 'ava';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { KV } from '@nats-io/kv';
import type { NatsConnection } from '@nats-io/nats-core';
import { alertStateBucket } from '../../src/alert/bus.js';
import { alertKey, seriesId, type AlertRecord } from '../../src/alert/contract.js';
import { connectBus } from '../../src/bus/connect.js';
import { agentInboxPrefix } from '../../src/bus/subjects.js';
import { loadExporterConfig } from '../../src/config/exporter.js';
import { alertLabels, labelName } from '../../src/exporter/alerts.js';
import { runExporter, type RunningExporter } from '../../src/exporter/main.js';
import { renderExposition } from '../../src/exporter/render.js';
import { silentLogger } from '../../src/log/logger.js';
import type { Logger } from '../../src/log/logger.js';
import { startAuthNats } from '../helpers/auth-nats.js';
import { checkExposition } from '../helpers/exposition-check.js';
import { m, makeDescriptor, makeFrame } from '../helpers/frames.js';
import { startTestNats, type TestNats } from '../helpers/nats.js';
import { promtoolCheck } from '../helpers/promtool.js';
import { capturingLogger } from '../helpers/security.js';
import { until } from '../helpers/until.js';

// A real nats-server; the alert records are written into the state bucket by
// hand, as an evaluator would, and read back through the exporter's /metrics.

const HEADER = [
  '# HELP rezolus_alerts Alerts of the exported hosts that are pending, firing or stale in the alert state bucket (rezolus_alert_state, written by rezolus alert): 1 per alert, labelled with its rule, host, severity and state, then the labels of the alert\'s series and the rule\'s labels (names made valid Prometheus label names; on a clash the first of these wins). Resolved and inactive alerts are not served, as in Prometheus ALERTS.',
  '# TYPE rezolus_alerts gauge',
];
/** the retry period of the exporter (ALERT_BUCKET_RETRY_MS) is 3 s: this leaves room for a loaded machine */
const WAIT_MS = 30_000;

let server: TestNats;
let nc: NatsConnection;
let kv: KV | undefined;
const exporters: RunningExporter[] = [];

test.before(async () => {
  server = await startTestNats();
  nc = await connectBus({ url: server.url, name: 'test-evaluator', log: silentLogger() });
});

test.after.always(async () => {
  for (const e of exporters) await e.stop();
  await nc?.close();
  await server?.dispose();
});

async function exporter(hosts: string, log: Logger = silentLogger()): Promise<RunningExporter> {
  const config = loadExporterConfig(undefined, { natsUrl: server.url, listen: { host: '127.0.0.1', port: 0 }, hosts, intervalMs: 1000 });
  const e = await runExporter(config, log);
  exporters.push(e);
  return e;
}

function record(o: Partial<AlertRecord> & Pick<AlertRecord, 'host' | 'rule' | 'state'>): AlertRecord {
  return {
    v: 1, series: {}, previous: 'inactive', seq: 1, activeAt: 1_764_000_000_000, value: 0.004, threshold: 0.001, unit: 'seconds',
    severity: 'warning', labels: {}, summary: 'run queue latency p99 is high', evaluator: 'test', at: 1_764_000_000_000, published: true, ...o,
  };
}

function keyOf(r: AlertRecord): string {
  return alertKey(r.host, r.rule, seriesId(r.series));
}

async function put(...records: AlertRecord[]): Promise<void> {
  if (kv === undefined) throw new Error('no bucket yet');
  for (const r of records) await kv.put(keyOf(r), JSON.stringify(r));
}

async function scrape(e: RunningExporter): Promise<string> {
  const r = await fetch(e.url);
  if (r.status !== 200) throw new Error(`/metrics answered ${r.status}`);
  return r.text();
}

/** The rezolus_alerts lines of an exposition, header included, in order. */
function family(text: string): string[] {
  return text.split('\n').filter((l) => /^rezolus_alerts[{ ]/.test(l) || / rezolus_alerts /.test(l));
}

/** Waits until the exporter's rezolus_alerts family is `expected` (header and sample lines), then asserts it. */
async function served(t: ExecutionContext, e: RunningExporter, expected: readonly string[]): Promise<string> {
  let text = '';
  await until(async () => {
    text = await scrape(e);
    return family(text).join('\n') === expected.join('\n');
  }, WAIT_MS);
  t.deepEqual(family(text), expected);
  return text;
}

function promtoolAccepts(t: ExecutionContext, text: string): void {
  const p = promtoolCheck(text);
  if (p === undefined) t.log('promtool missing (apt-get install prometheus); skipped');
  else t.is(p.status, 0, p.output);
}

test('labelName: keys become valid Prometheus label names', (t) => {
  t.is(labelName('cpu'), 'cpu');
  t.is(labelName('cgroup.path'), 'cgroup_path');
  t.is(labelName('0day'), '_0day');
  t.is(labelName('__name__'), '_name__');
  t.is(labelName('___x'), '_x');
  t.is(labelName('größe'), 'gr__e');
  t.is(labelName('a-b c'), 'a_b_c');
  t.is(labelName(''), undefined);
});

test('alertLabels: rule, host, severity and state first and winning, then series over rule labels, sorted', (t) => {
  const r = record({
    host: 'web-01', rule: 'runq_p99', state: 'firing', severity: 'page',
    series: { state: 'user', cpu: '3', 'team.name': 'series side' },
    labels: { team_name: 'rule side', rule: 'other', zone: 'b', 'a-b': 'x', '': 'dropped' },
  });
  t.is(alertLabels(r), '{rule="runq_p99",host="web-01",severity="page",state="firing",a_b="x",cpu="3",team_name="series side",zone="b"}');
  // a record written by someone else: non-string values, missing labels
  const odd = { ...record({ host: 'h', rule: 'r', state: 'stale' }), labels: undefined, series: { n: 7, t: true, o: { x: 1 }, z: null } } as unknown as AlertRecord;
  t.is(alertLabels(odd), '{rule="r",host="h",severity="warning",state="stale",n="7",t="true"}');
});

test('an agent family named rezolus_alerts cannot clash with the alerts family: it is left out as a conflict', (t) => {
  const d = makeDescriptor('fake', { rezolus_alerts: m('gauge', 'count', [], 'an agent family of the same name') }, [['rezolus_alerts', []]]);
  const decl = { name: 'rezolus_alerts', type: 'gauge' as const, unit: 'count', labelKeys: 'rule,host,severity,state', header: `${HEADER.join('\n')}\n` };
  const r = renderExposition([{ latest: makeFrame({ host: 'a', descriptor: d, values: [5] }), base: undefined, rates: undefined, sinceNs: 0n }], {
    families: [{ decl, text: 'rezolus_alerts{rule="r",host="a",severity="",state="firing"} 1\n', lines: 1 }],
  });
  t.is(r.text, `${HEADER.join('\n')}\nrezolus_alerts{rule="r",host="a",severity="",state="firing"} 1\n`);
  t.is(r.conflicts, 1);
  t.is(r.series, 1);
  // empty (the bucket is followed, no alert is active) it is not written, and it still keeps the name
  const empty = renderExposition([{ latest: makeFrame({ host: 'a', descriptor: d, values: [5] }), base: undefined, rates: undefined, sinceNs: 0n }], {
    families: [{ decl, text: '', lines: 0 }],
  });
  t.is(empty.text, '');
  t.is(empty.conflicts, 1);
});

test.serial('before the bucket exists no alert is served and the exporter says so once; it follows the bucket once it appears', async (t) => {
  const { log, lines } = capturingLogger();
  const e = await exporter('web-*', log);
  const waiting = (): number => lines.filter((l) => l.level === 30 && /alert state bucket not there yet/.test(l.msg)).length;
  const retries = (): number => lines.filter((l) => l.level === 20 && /alert state bucket still not readable/.test(l.msg)).length;
  // two more tries after the first: still one info line
  t.true(await until(() => retries() >= 2, WAIT_MS), `retries: ${JSON.stringify(lines.map((l) => l.msg))}`);
  t.is(waiting(), 1);
  t.false(e.alerts.following);
  const before = await scrape(e);
  t.deepEqual(family(before), []);
  t.regex(before, /^rezolus_exporter_nats_connected 1$/m, 'the exporter serves on');

  kv = await alertStateBucket(nc, 1, undefined);
  await put(record({ host: 'web-01', rule: 'late_rule', state: 'firing', series: { cpu: '1' } }));
  await served(t, e, [...HEADER, 'rezolus_alerts{rule="late_rule",host="web-01",severity="warning",state="firing",cpu="1"} 1']);
  t.true(e.alerts.following);
  t.is(lines.filter((l) => l.level === 30 && l.msg === 'following the alert state bucket').length, 1);
  t.is(lines.filter((l) => l.level >= 40).length, 0, JSON.stringify(lines.filter((l) => l.level >= 40)));
  await put(record({ host: 'web-01', rule: 'late_rule', state: 'resolved', previous: 'firing', series: { cpu: '1' } }));
  await served(t, e, []);
});

test.serial('pending, firing and stale alerts are served with their labels and 1; resolved and inactive ones are not; promtool accepts it', async (t) => {
  if (kv === undefined) kv = await alertStateBucket(nc, 1, undefined);
  await put(
    record({ host: 'web-01', rule: 'runq_p99', state: 'firing', severity: 'page', series: { cpu: '0' }, labels: { team: 'sched', 'runbook.url': 'https://x/y' } }),
    record({ host: 'web-01', rule: 'runq_p99', state: 'pending', series: { cpu: '1' }, labels: { team: 'sched' } }),
    record({ host: 'web-02', rule: 'silent', state: 'stale', severity: 'critical', value: null }),
    record({ host: 'web-02', rule: 'tcp_retrans', state: 'resolved', previous: 'firing' }),
    record({ host: 'web-02', rule: 'mem_avail', state: 'inactive', previous: 'pending' }),
  );
  // started with the records already in the bucket: they are read at start
  const e = await exporter('web-*');
  const samples = [
    'rezolus_alerts{rule="runq_p99",host="web-01",severity="page",state="firing",cpu="0",runbook_url="https://x/y",team="sched"} 1',
    'rezolus_alerts{rule="runq_p99",host="web-01",severity="warning",state="pending",cpu="1",team="sched"} 1',
    'rezolus_alerts{rule="silent",host="web-02",severity="critical",state="stale"} 1',
  ];
  const text = await served(t, e, [...HEADER, ...samples.sort((a, b) => (keyFor(a) < keyFor(b) ? -1 : 1))]);
  t.deepEqual(checkExposition(text), []);
  promtoolAccepts(t, text);
  // the other alerts of these hosts go for the next tests
  await kv.delete(keyOf(record({ host: 'web-01', rule: 'runq_p99', state: 'firing', series: { cpu: '0' } })));
  await kv.delete(keyOf(record({ host: 'web-01', rule: 'runq_p99', state: 'firing', series: { cpu: '1' } })));
  await kv.delete(keyOf(record({ host: 'web-02', rule: 'silent', state: 'stale' })));
  const none = await served(t, e, []);
  t.true(e.alerts.following);
  t.deepEqual(checkExposition(none), []);
});

/** Lines are served in KV key order (host, rule, series id): the key of a sample line, from its labels. */
function keyFor(line: string): string {
  const label = (k: string): string => new RegExp(`[{,]${k}="([^"]*)"`).exec(line)?.[1] ?? '';
  const series: Record<string, string> = {};
  if (label('cpu') !== '') series.cpu = label('cpu');
  return alertKey(label('host'), label('rule'), seriesId(series));
}

test.serial('a change is followed: pending becomes firing, then resolved disappears; a deleted key disappears', async (t) => {
  if (kv === undefined) kv = await alertStateBucket(nc, 1, undefined);
  const e = await exporter('web-01');
  const base = { host: 'web-01', rule: 'blkio_p99', series: { device: 'sda' } };
  await put(record({ ...base, state: 'pending' }));
  await served(t, e, [...HEADER, 'rezolus_alerts{rule="blkio_p99",host="web-01",severity="warning",state="pending",device="sda"} 1']);
  await put(record({ ...base, state: 'firing', previous: 'pending', seq: 2 }));
  await served(t, e, [...HEADER, 'rezolus_alerts{rule="blkio_p99",host="web-01",severity="warning",state="firing",device="sda"} 1']);
  await put(record({ ...base, state: 'resolved', previous: 'firing', seq: 3 }));
  await served(t, e, []);
  await put(record({ ...base, state: 'firing', activeAt: 1_764_000_600_000 }));
  await served(t, e, [...HEADER, 'rezolus_alerts{rule="blkio_p99",host="web-01",severity="warning",state="firing",device="sda"} 1']);
  await kv.delete(keyOf(record({ ...base, state: 'firing' })));
  await served(t, e, []);
});

test.serial('the host selection is honoured: globs, a plain name in another spelling, the fleet', async (t) => {
  if (kv === undefined) kv = await alertStateBucket(nc, 1, undefined);
  const webs = await exporter('web-*');
  const db = await exporter('DB-01');
  const fleet = await exporter('*');
  await put(
    record({ host: 'web-03', rule: 'cpu_throttled', state: 'firing', series: { cgroup: '/a' } }),
    record({ host: 'db-01', rule: 'cpu_throttled', state: 'firing', series: { cgroup: '/b' } }),
    record({ host: 'db-010', rule: 'cpu_throttled', state: 'pending', series: { cgroup: '/c' } }),
  );
  // written last: the watch is ordered, so an exporter that serves its marker has taken every record above
  const markers = [record({ host: 'web-03', rule: 'zz_marker', state: 'stale' }), record({ host: 'db-01', rule: 'zz_marker', state: 'stale' })];
  await put(...markers);
  const web3 = 'rezolus_alerts{rule="cpu_throttled",host="web-03",severity="warning",state="firing",cgroup="/a"} 1';
  const db1 = 'rezolus_alerts{rule="cpu_throttled",host="db-01",severity="warning",state="firing",cgroup="/b"} 1';
  const db10 = 'rezolus_alerts{rule="cpu_throttled",host="db-010",severity="warning",state="pending",cgroup="/c"} 1';
  const marker = (host: string): string => `rezolus_alerts{rule="zz_marker",host="${host}",severity="warning",state="stale"} 1`;
  await served(t, fleet, [...HEADER, db1, marker('db-01'), db10, web3, marker('web-03')]);
  await served(t, webs, [...HEADER, web3, marker('web-03')]);
  await served(t, db, [...HEADER, db1, marker('db-01')]);
  for (const [host, cgroup] of [['web-03', '/a'], ['db-01', '/b'], ['db-010', '/c']] as const) {
    await kv.delete(keyOf(record({ host, rule: 'cpu_throttled', state: 'firing', series: { cgroup } })));
  }
  for (const r of markers) await kv.delete(keyOf(r));
  await served(t, fleet, []);
});

test.serial('label values with quotes, backslashes and line feeds are escaped; odd label names made valid; promtool accepts it', async (t) => {
  if (kv === undefined) kv = await alertStateBucket(nc, 1, undefined);
  const e = await exporter('web-01');
  const hostile = 'a"b\\c\nd';
  await put(record({
    host: 'web-01', rule: 'hostile', state: 'firing', severity: 'pa"ge',
    series: { path: hostile, '0.x': 'zero', __name__: 'not the name' },
    labels: { 'team/owner': 'ops\\', summary: 'line one\nline two' },
  }));
  const text = await served(t, e, [
    ...HEADER,
    'rezolus_alerts{rule="hostile",host="web-01",severity="pa\\"ge",state="firing",_0_x="zero",_name__="not the name",path="a\\"b\\\\c\\nd",summary="line one\\nline two",team_owner="ops\\\\"} 1',
  ]);
  t.deepEqual(checkExposition(text), []);
  promtoolAccepts(t, text);
  await kv.delete(keyOf(record({ host: 'web-01', rule: 'hostile', state: 'firing', series: { path: hostile, '0.x': 'zero', __name__: 'not the name' } })));
  await served(t, e, []);
});

test.serial('two alerts whose labels come out alike once names are made valid are served once', async (t) => {
  if (kv === undefined) kv = await alertStateBucket(nc, 1, undefined);
  const e = await exporter('web-01');
  const dotted = record({ host: 'web-01', rule: 'alike', state: 'firing', series: { 'a.b': '1' } });
  const underscored = record({ host: 'web-01', rule: 'alike', state: 'firing', series: { a_b: '1' } });
  t.not(keyOf(dotted), keyOf(underscored));
  // the watch is ordered: once the marker written last is served, both alike ones have been taken
  const marker = record({ host: 'web-01', rule: 'alike_marker', state: 'pending' });
  await put(dotted, underscored, marker);
  const text = await served(t, e, [
    ...HEADER,
    'rezolus_alerts{rule="alike",host="web-01",severity="warning",state="firing",a_b="1"} 1',
    'rezolus_alerts{rule="alike_marker",host="web-01",severity="warning",state="pending"} 1',
  ]);
  t.deepEqual(checkExposition(text), []);
  for (const r of [dotted, underscored, marker]) await kv.delete(keyOf(r));
  await served(t, e, []);
});

test.serial('a NATS user that may not read the bucket (an agent\'s): one warning, no alerts, the exporter serves on', async (t) => {
  const dir = mkdtempSync(join(tmpdir(), 'rezolus-alerts-auth-'));
  const auth = await startAuthNats(dir, ['web-01']);
  const { log, lines } = capturingLogger();
  let e: RunningExporter | undefined;
  try {
    await auth.provision();
    await alertStateBucket(auth.admin, 1, undefined);
    const config = loadExporterConfig(undefined, { natsUrl: auth.server.url, listen: { host: '127.0.0.1', port: 0 }, hosts: '*', intervalMs: 1000 });
    // an agent's user, which never reads alerts (whatever rights rezolus-exporter has)
    e = await runExporter({ ...config, nats: auth.user('agent-web-01', { inboxPrefix: agentInboxPrefix('web-01') }) }, log);
    const refused = (): number => lines.filter((l) => l.level === 40 && /may not follow the alert state bucket/.test(l.msg)).length;
    t.true(await until(() => refused() > 0, WAIT_MS), JSON.stringify(lines.map((l) => l.msg)));
    t.is(refused(), 1);
    t.false(e.alerts.following);
    const text = await scrape(e);
    t.deepEqual(family(text), []);
    t.regex(text, /^rezolus_exporter_nats_connected 1$/m);
  } finally {
    await e?.stop();
    await auth.dispose();
    rmSync(dir, { recursive: true, force: true });
  }
});
