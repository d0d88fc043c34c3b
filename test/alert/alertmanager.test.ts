/**
 * The Alertmanager forwarder against Debian's real prometheus-alertmanager
 * (0.25) and a real nats-server: records written to the alert state bucket
 * with kv.put, as an evaluator writes them, and what Alertmanager then
 * lists (GET /api/v2/alerts), counts (/metrics) and notifies (a webhook
 * receiver with send_resolved).
 *
 * What 0.25 does, as seen here: a firing alert is listed with
 * status.state "active" and the endsAt it was posted with; a resolved one
 * (endsAt in the past) is not listed at all, counts in
 * alertmanager_alerts_received_total{status="resolved"}, and is notified
 * with status "resolved" and the endsAt posted.
 */
import test, { type ExecutionContext } from 'ava';
import { createServer, type Server } from 'node:http';
import { createServer as createTcpServer, type AddressInfo, type Socket } from 'node:net';
import type { KV } from '@nats-io/kv';
import { connect } from '@nats-io/transport-node';
import { pino, type Logger } from 'pino';
import { AlertmanagerForwarder, alertmanagerLabels, type AlertmanagerOptions, sanitizeLabelName } from '../../src/alert/alertmanager.js';
import { alertStateBucket } from '../../src/alert/bus.js';
import { alertKey, type AlertRecord, type AlertState, seriesId } from '../../src/alert/contract.js';
import { AlertStateWatch } from '../../src/alert/state-watch.js';
import { freePort } from '../../src/up/nats-server.js';
import { type GettableAlert, type ProxiedPost, startAlertmanager, startAlertProxy, type TestAlertmanager } from '../helpers/alertmanager.js';
import { startTestNats } from '../helpers/nats.js';
import { until } from '../helpers/until.js';

/** Waits for events: generous, the machine is a loaded 2-core VM. */
const WAIT_MS = 30_000;

interface LogLine {
  readonly level: number;
  readonly msg: string;
  readonly alertmanager?: string;
  readonly cause?: string;
}

function capturedLog(): { log: Logger; lines: LogLine[] } {
  const lines: LogLine[] = [];
  const log = pino({ level: 'debug' }, { write: (s: string) => void lines.push(JSON.parse(s) as LogLine) });
  return { log, lines };
}

/** A record as an evaluator writes it; firing ones fired 30 s after they became active. */
function record(host: string, rule: string, state: AlertState, extra: Partial<AlertRecord> = {}): AlertRecord {
  const activeAt = extra.activeAt ?? Date.now() - 120_000;
  return {
    v: 1,
    rule,
    host,
    series: {},
    state,
    previous: state === 'firing' ? 'pending' : 'firing',
    seq: 1,
    activeAt,
    ...(state === 'pending' ? {} : { firedAt: activeAt + 30_000 }),
    value: 2_500_000,
    threshold: 1_000_000,
    unit: 'nanoseconds',
    valueText: '2.5 ms',
    thresholdText: '1ms',
    severity: 'page',
    labels: { team: 'kernel' },
    summary: `${rule} on ${host}: 2.5ms (> 1ms)`,
    evaluator: 'test-evaluator',
    at: Date.now(),
    published: true,
    ...extra,
  };
}

const keyOf = (r: AlertRecord): string => alertKey(r.host, r.rule, seriesId(r.series));

interface Bus {
  readonly kv: KV;
  put(r: AlertRecord): Promise<void>;
  /** a new watch of the bucket, started (one per forwarder, as each evaluator has its own) */
  watch(log: Logger): Promise<AlertStateWatch>;
  /** a forwarder on a new watch, started; stopped at teardown */
  forwarder(o: AlertmanagerOptions, log: Logger): Promise<AlertmanagerForwarder>;
}

async function bus(t: ExecutionContext): Promise<Bus> {
  const server = await startTestNats();
  const nc = await connect({ servers: server.url });
  const kv = await alertStateBucket(nc, 1, undefined);
  const watches: AlertStateWatch[] = [];
  const forwarders: AlertmanagerForwarder[] = [];
  t.teardown(async () => {
    for (const f of forwarders) await f.stop();
    for (const w of watches) await w.stop();
    await nc.close();
    await server.dispose();
  });
  const watch = async (log: Logger): Promise<AlertStateWatch> => {
    const w = new AlertStateWatch(kv, log);
    watches.push(w);
    await w.start();
    return w;
  };
  return {
    kv,
    async put(r) {
      await kv.put(keyOf(r), JSON.stringify(r));
    },
    watch,
    async forwarder(o, log) {
      const f = new AlertmanagerForwarder(o, await watch(log), log);
      forwarders.push(f);
      f.start();
      return f;
    },
  };
}

async function alertmanager(t: ExecutionContext, port?: number, webhookUrl?: string): Promise<TestAlertmanager> {
  const am = await startAlertmanager({ ...(port === undefined ? {} : { port }), ...(webhookUrl === undefined ? {} : { webhookUrl }) });
  t.teardown(() => am.dispose());
  return am;
}

const named = (alerts: readonly GettableAlert[], alertname: string, host: string): GettableAlert[] =>
  alerts.filter((a) => a.labels['alertname'] === alertname && a.labels['host'] === host);

/** Polls until Alertmanager lists (or, with present false, no longer lists) the alert; fails the test with what it lists. */
async function listed(t: ExecutionContext, am: TestAlertmanager, alertname: string, host: string, present = true): Promise<GettableAlert | undefined> {
  let last: GettableAlert[] = [];
  const ok = await until(async () => {
    last = await am.alerts();
    return named(last, alertname, host).length > 0 === present;
  }, WAIT_MS);
  t.true(ok, `${alertname} on ${host} ${present ? 'not listed' : 'still listed'} by ${am.url} within ${WAIT_MS} ms; it lists ${JSON.stringify(last)}`);
  return named(last, alertname, host)[0];
}

interface Notification {
  readonly status: string;
  readonly alerts: { status: string; labels: Record<string, string>; startsAt: string; endsAt: string }[];
}

/** A webhook receiver: Alertmanager's notifications as they arrive. */
async function webhook(t: ExecutionContext): Promise<{ url: string; got: Notification[] }> {
  const got: Notification[] = [];
  const server: Server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      got.push(JSON.parse(Buffer.concat(chunks).toString()) as Notification);
      res.writeHead(200).end();
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  t.teardown(() => new Promise<void>((resolve) => server.close(() => resolve())));
  return { url: `http://127.0.0.1:${(server.address() as AddressInfo).port}/hook`, got };
}

const notified = (got: readonly Notification[], status: string, alertname: string): Notification['alerts'][number] | undefined =>
  got.flatMap((n) => n.alerts).find((a) => a.status === status && a.labels['alertname'] === alertname);

test('label names are sanitised; a taken name keeps its value as exported_<name>; empty values are left out', (t) => {
  t.is(sanitizeLabelName('cpu'), 'cpu');
  t.is(sanitizeLabelName('team-name'), 'team_name');
  t.is(sanitizeLabelName('9lives'), '_9lives');
  t.is(sanitizeLabelName('a.b/c d'), 'a_b_c_d');
  t.is(sanitizeLabelName(''), '_');
  t.is(sanitizeLabelName('naïve'), 'na_ve');
  const labels = alertmanagerLabels({
    rule: 'cpu_throttled',
    host: 'web-1',
    severity: 'warning',
    labels: { team: 'kernel', 'team-name': 'k', alertname: 'other', severity: 'warning', empty: '' },
    series: { host: 'db-9', cgroup: '/system.slice/x', team: 'kernel', __proto__x: 'p' },
  });
  t.deepEqual(labels, {
    alertname: 'cpu_throttled',
    host: 'web-1',
    severity: 'warning',
    team: 'kernel',
    team_name: 'k',
    exported_alertname: 'other',
    exported_host: 'db-9',
    cgroup: '/system.slice/x',
    __proto__x: 'p',
  });
  t.is(Object.getPrototypeOf(alertmanagerLabels({ rule: 'r', host: 'h', severity: '', labels: {}, series: { ['__proto__']: 'x' } })), Object.prototype);
});

test('the constructor refuses what it cannot post to', (t) => {
  const { log } = capturedLog();
  const watch = {} as AlertStateWatch; // never reached: the options are checked first
  t.throws(() => new AlertmanagerForwarder({ urls: [] }, watch, log), { message: /no URL/ });
  t.throws(() => new AlertmanagerForwarder({ urls: ['127.0.0.1:9093'] }, watch, log), { message: /only http and https|not a URL/ });
  t.throws(() => new AlertmanagerForwarder({ urls: ['ftp://am:21'] }, watch, log), { message: /only http and https/ });
  t.throws(() => new AlertmanagerForwarder({ urls: ['http://am:9093'], resendMs: 0 }, watch, log), { message: /resendMs/ });
  t.throws(() => new AlertmanagerForwarder({ urls: ['http://am:9093'], generatorUrl: 'not a url {host}' }, watch, log), { message: /generatorUrl/ });
  const ok = new AlertmanagerForwarder({ urls: ['http://user:p%40ss@am:9093/', 'https://host/am/api/v2/alerts'] }, watch, log);
  t.deepEqual(
    ok.status().targets.map((x) => x.url),
    ['http://am:9093/api/v2/alerts', 'https://host/am/api/v2/alerts'],
    'credentials stay out of the URL (and the logs); the API path is appended once',
  );
});

test('a firing record is listed with its labels, annotations and startsAt and re-sent; pending and a stale that never fired are not; stale after firing stays firing', async (t) => {
  const b = await bus(t);
  const am = await alertmanager(t);
  const { log } = capturedLog();
  const pending = record('h1', 'runqueue_p99_high', 'pending');
  const firing = record('h1', 'cpu_throttled', 'firing', {
    labels: { team: 'kernel', 'team-name': 'k' },
    series: { cgroup: '/system.slice/nginx.service', host: 'container-7' },
    runbook: 'https://example.invalid/runbooks/cpu',
  });
  await b.put(pending);
  await b.put(firing);
  const fwd = await b.forwarder({ urls: [am.url], resendMs: 400, timeoutMs: 5000, generatorUrl: 'http://viewer.invalid/?host={host}&rule={rule}' }, log);

  const a = await listed(t, am, 'cpu_throttled', 'h1');
  t.deepEqual(a?.labels, {
    alertname: 'cpu_throttled',
    host: 'h1',
    severity: 'page',
    team: 'kernel',
    team_name: 'k',
    cgroup: '/system.slice/nginx.service',
    exported_host: 'container-7',
  });
  t.deepEqual(a?.annotations, {
    summary: 'cpu_throttled on h1: 2.5ms (> 1ms)',
    threshold: '1ms',
    value: '2.5 ms',
    runbook_url: 'https://example.invalid/runbooks/cpu',
  });
  t.is(Date.parse(a?.startsAt ?? ''), firing.firedAt as number);
  t.is(a?.status.state, 'active');
  t.true(Date.parse(a?.endsAt ?? '') > Date.now(), `a firing alert ends in the future (posted with endsAt): ${a?.endsAt}`);
  t.is(a?.generatorURL, 'http://viewer.invalid/?host=h1&rule=cpu_throttled');
  t.is(named(await am.alerts(), 'runqueue_p99_high', 'h1').length, 0, 'a pending record is not posted');

  // live: a pending record, then a firing one; had the pending one been posted, it would have been first
  await b.put(record('h1', 'tcp_retransmits', 'pending'));
  await b.put(record('h1', 'memory_low', 'firing'));
  await listed(t, am, 'memory_low', 'h1');
  t.is(named(await am.alerts(), 'tcp_retransmits', 'h1').length, 0, 'a pending record is not posted');
  // pending → firing
  const fired = record('h1', 'tcp_retransmits', 'firing');
  await b.put(fired);
  t.is(Date.parse((await listed(t, am, 'tcp_retransmits', 'h1'))?.startsAt ?? ''), fired.firedAt as number);

  // re-sent each round with no change in the bucket: 3 firing alerts per round
  const received = async (): Promise<number> => (await am.metric('alertmanager_alerts_received_total', { status: 'firing', version: 'v2' })) ?? 0;
  const before = await received();
  t.true(await until(async () => (await received()) >= before + 6, WAIT_MS), `firing alerts re-sent: ${before} then ${await received()}`);

  // a stale that never fired (pending → stale), then the firing one going stale
  await b.put(record('h1', 'io_latency', 'stale', { previous: 'pending', firedAt: undefined, staleAt: Date.now() }));
  const staleAt = Date.now() - 5000;
  await b.put({ ...firing, state: 'stale', previous: 'firing', seq: 2, staleAt, at: staleAt });
  let last: GettableAlert | undefined;
  t.true(
    await until(async () => {
      last = named(await am.alerts(), 'cpu_throttled', 'h1')[0];
      return last?.annotations['stale_since'] !== undefined;
    }, WAIT_MS),
    `the stale alert stays listed with a stale_since annotation: ${JSON.stringify(last)}`,
  );
  t.is(last?.annotations['stale_since'], new Date(staleAt).toISOString());
  t.is(last?.status.state, 'active');
  t.is(Date.parse(last?.startsAt ?? ''), firing.firedAt as number, 'same alert, same start');
  t.is(named(await am.alerts(), 'io_latency', 'h1').length, 0, 'a stale record whose episode never fired is not posted');
  t.deepEqual(fwd.status().targets.map((x) => x.up), [true]);
  t.is(fwd.status().firing, 3);
});

test('resolved, and a deleted key: Alertmanager lists the alert no more and notifies it resolved with endsAt = resolvedAt; resolved ones are re-sent', async (t) => {
  const b = await bus(t);
  const hook = await webhook(t);
  const am = await alertmanager(t, undefined, hook.url);
  const { log } = capturedLog();
  const x = record('h2', 'runqueue_p99_high', 'firing');
  const y = record('h2', 'host_silent', 'firing');
  await b.put(x);
  await b.put(y);
  const fwd = await b.forwarder({ urls: [am.url], resendMs: 400, timeoutMs: 5000 }, log);
  await listed(t, am, 'runqueue_p99_high', 'h2');
  await listed(t, am, 'host_silent', 'h2');
  t.true(await until(() => notified(hook.got, 'firing', 'runqueue_p99_high') !== undefined, WAIT_MS), 'firing notification');

  const resolvedAt = Date.now() - 1234;
  await b.put({ ...x, state: 'resolved', previous: 'firing', seq: 3, resolvedAt, at: resolvedAt, value: 400_000 });
  await listed(t, am, 'runqueue_p99_high', 'h2', false);
  t.truthy(named(await am.alerts(), 'host_silent', 'h2')[0], 'the other alert is still listed');
  t.true(await until(() => notified(hook.got, 'resolved', 'runqueue_p99_high') !== undefined, WAIT_MS), `resolved notification: ${JSON.stringify(hook.got)}`);
  const n = notified(hook.got, 'resolved', 'runqueue_p99_high');
  t.is(Date.parse(n?.endsAt ?? ''), resolvedAt, 'endsAt is the record resolvedAt');
  t.is(Date.parse(n?.startsAt ?? ''), x.firedAt as number);

  await b.kv.delete(keyOf(y));
  await listed(t, am, 'host_silent', 'h2', false);
  t.true(await until(() => notified(hook.got, 'resolved', 'host_silent') !== undefined, WAIT_MS), 'a deleted key is notified resolved');

  const resolvedReceived = async (): Promise<number> => (await am.metric('alertmanager_alerts_received_total', { status: 'resolved', version: 'v2' })) ?? 0;
  t.true(await until(async () => (await resolvedReceived()) >= 6, WAIT_MS), `resolved alerts re-sent (2 per round): ${await resolvedReceived()}`);
  t.deepEqual({ firing: fwd.status().firing, resolved: fwd.status().resolved }, { firing: 0, resolved: 2 });
});

test('a forwarder started later: a recent resolution is posted once taken, an old one is not; resolved alerts are dropped after the retention', async (t) => {
  const b = await bus(t);
  const am = await alertmanager(t);
  const proxy = await startAlertProxy(am);
  t.teardown(() => proxy.close());
  const { log } = capturedLog();
  const recent = record('h3', 'memory_low', 'resolved', { resolvedAt: Date.now() - 60_000 });
  const old = record('h3', 'block_io_p99_high', 'resolved', { resolvedAt: Date.now() - 20 * 60_000, activeAt: Date.now() - 30 * 60_000 });
  const neverFired = record('h3', 'tcp_retransmits', 'resolved', { firedAt: undefined, resolvedAt: Date.now() - 1000 });
  const z = record('h3', 'cpu_throttled', 'firing', { activeAt: Date.now() - 20 * 60_000 });
  for (const r of [recent, old, neverFired, z]) await b.put(r);
  const fwd = await b.forwarder({ urls: [proxy.url], resendMs: 400, timeoutMs: 5000 }, log);
  await listed(t, am, 'cpu_throttled', 'h3');
  const sent = (): ProxiedPost['alerts'] => proxy.posts.flatMap((p) => p.alerts);
  const posted = sent().find((a) => a.labels['alertname'] === 'memory_low');
  t.is(Date.parse(posted?.endsAt ?? ''), recent.resolvedAt as number, 'the recent resolution posted with its endsAt');
  t.is(sent().filter((a) => a.labels['alertname'] === 'block_io_p99_high').length, 0, 'a resolution older than the retention is not posted');
  t.is(sent().filter((a) => a.labels['alertname'] === 'tcp_retransmits').length, 0, 'an episode that never fired is not posted resolved');

  // z resolves just inside the 15 min retention: posted, then dropped from the re-sends
  const resolvedAt = Date.now() - 15 * 60_000 + 6000;
  await b.put({ ...z, state: 'resolved', previous: 'firing', seq: 3, resolvedAt, at: resolvedAt });
  await listed(t, am, 'cpu_throttled', 'h3', false);
  t.true(await until(() => fwd.status().resolved === 1, WAIT_MS), `z dropped after the retention: ${JSON.stringify(fwd.status())}`);
  // POSTs to one Alertmanager go one at a time: once one more round carrying memory_low is in, no POST built before z was dropped is out
  const memoryLow = (): number => sent().filter((a) => a.labels['alertname'] === 'memory_low').length;
  const zResolved = (): number => sent().filter((a) => a.labels['alertname'] === 'cpu_throttled' && a.endsAt !== undefined && Date.parse(a.endsAt) === resolvedAt).length;
  const m0 = memoryLow();
  t.true(await until(() => memoryLow() >= m0 + 1, WAIT_MS), 'rounds go on');
  const count = zResolved();
  const m1 = memoryLow();
  t.true(await until(() => memoryLow() >= m1 + 2, WAIT_MS), 'rounds go on');
  t.is(zResolved(), count, 'a dropped resolved alert is no longer re-sent, the recent one still is');
  t.true(count >= 1);
  t.true(
    proxy.posts.every((p) => p.status === 200 || p.status === 0),
    `Alertmanager took every POST (0: in flight): ${JSON.stringify(proxy.posts.filter((p) => p.status !== 200))}`,
  );
});

test('an Alertmanager down at first gets the firing alert once it is up; the outage and the recovery are logged once each', async (t) => {
  const b = await bus(t);
  const { log, lines } = capturedLog();
  const port = await freePort();
  await b.put(record('h4', 'runqueue_p99_high', 'firing'));
  const fwd = await b.forwarder({ urls: [`http://127.0.0.1:${port}`], resendMs: 300, timeoutMs: 5000 }, log);
  t.true(await until(() => fwd.status().targets[0]!.failures >= 3, WAIT_MS), 'three rounds failed');
  const down = lines.filter((l) => l.msg.startsWith('alertmanager did not take'));
  t.is(down.length, 1, `logged once per outage: ${JSON.stringify(down)}`);
  t.regex(down[0]?.cause ?? '', /ECONNREFUSED/);
  t.is(down[0]?.alertmanager, `http://127.0.0.1:${port}/api/v2/alerts`);
  t.is(fwd.status().targets[0]?.up, false);

  const am = await alertmanager(t, port);
  await listed(t, am, 'runqueue_p99_high', 'h4');
  t.true(await until(() => lines.some((l) => l.msg.startsWith('alertmanager answers again')), WAIT_MS), 'recovery logged');
  // two more successful rounds: still one line each
  const posts = fwd.status().targets[0]!.posts;
  t.true(await until(() => fwd.status().targets[0]!.posts >= posts + 2, WAIT_MS));
  t.is(lines.filter((l) => l.msg.startsWith('alertmanager answers again')).length, 1);
  t.is(lines.filter((l) => l.msg.startsWith('alertmanager did not take')).length, 1);
  t.is(fwd.status().targets[0]?.up, true);
});

test('several URLs: each Alertmanager gets every alert, a hanging, dead or wrong one delays nobody; two forwarders make one alert', async (t) => {
  const b = await bus(t);
  const [am1, am2] = await Promise.all([alertmanager(t), alertmanager(t)]);
  // accepts connections and never answers
  const sockets: Socket[] = [];
  const hang = createTcpServer((s) => void sockets.push(s));
  await new Promise<void>((resolve) => hang.listen(0, '127.0.0.1', resolve));
  t.teardown(() => {
    for (const s of sockets) s.destroy();
    return new Promise<void>((resolve) => hang.close(() => resolve()));
  });
  const hangUrl = `http://127.0.0.1:${(hang.address() as AddressInfo).port}`;
  const a = capturedLog();
  const fwdA = await b.forwarder({ urls: [hangUrl, am1!.url, am2!.url, `${am1!.url}/nope`], resendMs: 400, timeoutMs: 1500 }, a.log);
  // a second evaluator's forwarder on its own watch
  const fwdB = await b.forwarder({ urls: [am1!.url, am2!.url], resendMs: 400, timeoutMs: 1500 }, capturedLog().log);

  const r = record('h5', 'runqueue_p99_high', 'firing', { series: { cpu: '1' } });
  await b.put(r);
  await b.put(record('h5', 'runqueue_p99_high', 'firing', { series: { cpu: '0' } }));
  for (const am of [am1!, am2!]) {
    await listed(t, am, 'runqueue_p99_high', 'h5');
    t.true(await until(async () => named(await am.alerts(), 'runqueue_p99_high', 'h5').length === 2, WAIT_MS), 'both series');
    t.deepEqual(
      named(await am.alerts(), 'runqueue_p99_high', 'h5').map((x) => x.labels['cpu']).sort(),
      ['0', '1'],
      'one alert per series although two forwarders post each',
    );
  }
  t.true(await until(() => fwdA.status().targets[0]!.failures >= 1, WAIT_MS), 'the hanging one timed out');
  t.regex(fwdA.status().targets[0]?.lastError ?? '', /no answer within 1500 ms/);
  t.true(await until(() => fwdA.status().targets[3]!.failures >= 1, WAIT_MS));
  t.regex(fwdA.status().targets[3]?.lastError ?? '', /^HTTP 404: 404 page not found/);
  const warned = a.lines.filter((l) => l.msg.startsWith('alertmanager did not take')).map((l) => l.alertmanager);
  t.true(warned.includes(`${hangUrl}/api/v2/alerts`) && warned.includes(`${am1!.url}/nope/api/v2/alerts`), JSON.stringify(warned));

  // one Alertmanager dies; the resolution still reaches the other
  await am2!.dispose();
  await b.put({ ...r, state: 'resolved', previous: 'firing', seq: 3, resolvedAt: Date.now(), at: Date.now() });
  t.true(
    await until(async () => named(await am1!.alerts(), 'runqueue_p99_high', 'h5').map((x) => x.labels['cpu']).join() === '0', WAIT_MS),
    'cpu 1 resolved on the live Alertmanager, cpu 0 still firing',
  );
  t.true(await until(() => fwdA.status().targets[2]!.up === false && fwdB.status().targets[1]!.up === false, WAIT_MS));
  // the first failure may be a POST the dying process had taken ("other side closed"); the next round is refused
  t.true(await until(() => /ECONNREFUSED/.test(fwdA.status().targets[2]?.lastError ?? ''), WAIT_MS), fwdA.status().targets[2]?.lastError);
  t.true(fwdA.status().targets[1]?.up);
});

test('a round is cut into POSTs of at most maxBatch alerts, and every alert arrives', async (t) => {
  const b = await bus(t);
  const am = await alertmanager(t);
  const proxy = await startAlertProxy(am);
  t.teardown(() => proxy.close());
  for (let cpu = 0; cpu < 7; cpu++) await b.put(record('h6', 'cpu_throttled', 'firing', { series: { cpu: String(cpu) } }));
  const fwd = await b.forwarder({ urls: [proxy.url], resendMs: 400, timeoutMs: 5000, maxBatch: 3 }, capturedLog().log);
  t.true(await until(async () => named(await am.alerts(), 'cpu_throttled', 'h6').length === 7, WAIT_MS), 'all 7 listed');
  // a full round after that: 7 alerts in 3 POSTs of at most 3
  const posts = fwd.status().targets[0]!.posts;
  t.true(await until(() => fwd.status().targets[0]!.posts >= posts + 6, WAIT_MS));
  t.true(proxy.posts.every((p) => p.alerts.length >= 1 && p.alerts.length <= 3), JSON.stringify(proxy.posts.map((p) => p.alerts.length)));
  t.true(proxy.posts.some((p) => p.alerts.length === 3), 'full batches');
  t.true(proxy.posts.every((p) => p.status === 200 || p.status === 0), 'Alertmanager took every POST (0: in flight)');
});
