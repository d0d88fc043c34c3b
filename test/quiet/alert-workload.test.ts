/**
 * A real workload trips a real rule, end to end (issue 17): a real
 * nats-server, a real agent on this host with the BPF scheduler_runqueue
 * sampler at 500 ms, and `rezolus alert` (runAlert, in process) with one rule
 * on the run-queue latency p99. CPU burners raise the p99 over the threshold:
 * pending then firing arrive with the measured value, the incident file read
 * with DuckDB holds this host's frames from before the burners started to
 * after the firing, and the alert resolves once they stop.
 *
 * The threshold, from the 3 s p99 of scheduler_runqueue_latency measured on
 * this 2-core VM (kernel 6.18, HZ=250; other sessions' work running beside):
 * - no test running: 1 to 42 ms;
 * - the whole suite running (240 s of 3 s windows): median 6 ms, p90 23 to
 *   33 ms, max 101 ms (a few windows at the suite's busiest);
 * - 6 busy loops in the test's own session: 17 to 38 ms, 12: 29 to 109 ms,
 *   20: 46 to 84 ms: over the suite's noise only part of the time;
 * - 48 busy loops in a session (an autogroup) of their own: 125 to 600 ms,
 *   96: 300 to 870 ms, except when other sessions took most of both CPUs
 *   (load average near 40), where 96 gave 42 to 470 ms.
 * A busy loop waits about (loops / CPUs) scheduler ticks of 4 ms between two
 * turns, so the loaded p99 grows with the loops while what they take from the
 * rest of the suite does not (one session's weight). So: 96 burners in a
 * session of their own (helpers/alert-burners.ts); threshold 150 ms, half
 * again over the worst noise seen (p99 is a bucket bound: with grouping
 * power 3 the buckets there end at 134.2, 151.0, 167.8 ms, so it takes
 * 151.0 or more); clear 100 ms, so the resolution waits only through the
 * suite's noisiest moments. Runs of this test (alone, beside two busy
 * loops, beside the whole suite): 2 to 19 ms in the 3 s before the burners;
 * with 96 of them 168 to 302 ms at pending and 252 to 604 ms at firing (64
 * gave 151 to 252 and 201 to 671).
 * Waits are for events with generous deadlines; nothing asserts elapsed time.
 */
import test from 'ava';
import { jetstreamManager } from '@nats-io/jetstream';
import { Kvm } from '@nats-io/kv';
import { connect } from '@nats-io/transport-node';
import { existsSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve, sep } from 'node:path';
import { runAgent, type RunningAgent } from '../../src/agent/main.js';
import { ALERT_STATE_BUCKET, ALERTS_PREFIX, ALERTS_STREAM, alertKey, parseRecord, type AlertEvent, type AlertRecord, type CaptureEvent, type TransitionEvent } from '../../src/alert/contract.js';
import { runAlert, type RunningAlert } from '../../src/alert/main.js';
import { loadAgentConfig } from '../../src/config/agent.js';
import { loadAlertsConfig } from '../../src/config/alerts.js';
import { createLogger, silentLogger } from '../../src/log/logger.js';
import { fromDense, percentiles, subtract, type SparseHistogram } from '../../src/metrics/histogram.js';
import { metricCatalog } from '../../src/samplers/catalog.js';
import { SAMPLER_NAMES } from '../../src/samplers/registry.js';
import { Burners } from '../helpers/alert-burners.js';
import { Duck } from '../helpers/duckdb.js';
import { startTestNats } from '../helpers/nats.js';
import { until } from '../helpers/until.js';

const HOST = 'alert-e2e';
const RULE = 'runqueue_burn';
const THRESHOLD_NS = 150e6;
const CLEAR_NS = 100e6;
const BURNERS = 96;
const ms = (iso: string | undefined): number => (iso === undefined ? Number.NaN : Date.parse(iso));

interface Seen {
  /** when this process received it */
  readonly arrived: number;
  readonly subject: string;
  readonly event: AlertEvent;
}

const isTransition = (e: AlertEvent): e is TransitionEvent => e.kind === 'transition';
const isCapture = (e: AlertEvent): e is CaptureEvent => e.kind === 'capture';

/** One line per event, for messages and the log. */
function describe(seen: readonly Seen[], t0: number): string {
  return seen
    .map(({ arrived, event: e }) =>
      isTransition(e)
        ? `${((arrived - t0) / 1000).toFixed(1)}s ${e.previous}->${e.state} value=${e.value} (${e.valueText}) activeAt=${e.activeAt}`
        : `${((arrived - t0) / 1000).toFixed(1)}s capture file=${e.file} rows=${e.rows} error=${e.error}`,
    )
    .join('\n');
}

/** The p99 (ns) of the events between two cumulative histograms; undefined when none. */
function p99(later: SparseHistogram, earlier: SparseHistogram): number | undefined {
  const d = subtract(later, earlier);
  const p = d === undefined ? undefined : percentiles(d, [0.99]);
  return p === undefined ? undefined : Number(p[0]);
}

test('CPU burners raise the run-queue p99 over a rule: pending, firing, an incident file from before they started, resolved after they stop', async (t) => {
  // under ava's 2 min of silence, so that a test stuck past its deadlines fails here and its teardown kills the burners
  t.timeout(110_000);
  const server = await startTestNats();
  const nc = await connect({ servers: server.url });
  const dir = mkdtempSync(join(tmpdir(), 'rezolus-alert-workload-'));
  let agent: RunningAgent | undefined;
  let alert: RunningAlert | undefined;
  let burners: Burners | undefined;
  let stopWatch: (() => void) | undefined;
  const logLines: string[] = [];
  t.teardown(async () => {
    // the busy loops first, and every step whatever the one before it did
    const steps = [() => burners?.stop(), () => stopWatch?.(), () => alert?.stop(), () => agent?.stop(), () => nc.close(), () => server.dispose()];
    const errors: unknown[] = [];
    for (const step of steps) await Promise.resolve().then(step).catch((error: unknown) => errors.push(error));
    rmSync(dir, { recursive: true, force: true });
    if (errors.length > 0) throw new AggregateError(errors, 'teardown failed');
  });
  const logTail = (): string => logLines.slice(-30).join('');

  // every alert event as it arrives (the stream's copy is checked at the end)
  const seen: Seen[] = [];
  const sub = nc.subscribe(`${ALERTS_PREFIX}.>`);
  void (async () => {
    for await (const m of sub) seen.push({ arrived: Date.now(), subject: m.subject, event: m.json<AlertEvent>() });
  })();
  await nc.flush();

  const base = loadAgentConfig(undefined, SAMPLER_NAMES, { host: HOST, natsUrl: server.url });
  const samplers = Object.fromEntries(SAMPLER_NAMES.map((n) => [n, { enabled: n === 'scheduler_runqueue', intervalMs: 500 }]));
  agent = await runAgent({ ...base, samplers, http: undefined }, silentLogger());
  const status = agent.agent.status().find((s) => s.name === 'scheduler_runqueue')?.status;
  if (status?.state !== 'active' && status?.state !== 'degraded') {
    t.fail(`the BPF sampler scheduler_runqueue did not load on this host, so no workload can trip the rule: ${JSON.stringify(status)}`);
    return;
  }

  const rules = join(dir, 'alerts.toml');
  const incidents = join(dir, 'incidents');
  writeFileSync(
    rules,
    `[general]
hosts = "${HOST}"
every = "500ms"

[capture]
dir = ${JSON.stringify(incidents)}
every = "5s"
interval = "500ms"

[[rule]]
name = "${RULE}"
metric = "scheduler_runqueue_latency"
reduce = "p99"
window = "3s"
op = ">"
threshold = "150ms"
clear = "100ms"
for = "2s"
keep_firing_for = "1s"
missing_after = "10s"
severity = "warning"
summary = "run-queue p99 on {host} is {value} (over {threshold})"
capture = { before = "10s", after = "2s" }
`,
  );
  const config = loadAlertsConfig(rules, metricCatalog(), { natsUrl: server.url });
  alert = await runAlert(config, createLogger('info', 'alert', { write: (line: string) => void logLines.push(line) }));
  const running = alert;

  // every revision of the alert's record in the state bucket (the evaluator made the bucket)
  const records: AlertRecord[] = [];
  const watch = await (await new Kvm(nc).open(ALERT_STATE_BUCKET)).watch({ key: alertKey(HOST, RULE, '_') });
  stopWatch = () => watch.stop();
  void (async () => {
    for await (const e of watch) {
      const r = e.operation === 'PUT' ? parseRecord(e.value) : undefined;
      if (r !== undefined) records.push(r);
    }
  })();

  // the evaluator follows the host: the rule's alert exists, then 8 more frames (4 s of them at 500 ms) fill its 3 s window
  const fed = await until(() => running.stats().alerts === 1, 20_000);
  t.true(fed, `no scheduler_runqueue_latency frame of ${HOST} reached the evaluator: ${JSON.stringify(running.stats())}`);
  if (!fed) return;
  const frames0 = running.stats().frames;
  t.true(await until(() => running.stats().frames >= frames0 + 8, 20_000), `frames stopped: ${JSON.stringify(running.stats())}`);

  // idle: the rule holds still
  t.deepEqual(describe(seen, Date.now()), '', `events before the burners started:\n${logTail()}`);
  if (seen.length > 0) return;

  const T = Date.now();
  burners = Burners.start(BURNERS);
  t.true(await burners.ready(10_000), `${burners.alive().length} of ${BURNERS + 2} burner processes running`);

  const transitions = (): TransitionEvent[] => seen.map((s) => s.event).filter(isTransition);
  const fired = await until(() => transitions().some((e) => e.state === 'firing'), 40_000);
  const stopAt = Date.now();
  await burners.stop();
  if (!fired) {
    t.fail(`no firing within 40 s of starting ${BURNERS} burners; events:\n${describe(seen, T)}\nevaluator log:\n${logTail()}`);
    return;
  }

  const done = await until(() => seen.some((s) => isCapture(s.event)) && transitions().some((e) => e.state === 'resolved'), 30_000);
  t.true(done, `capture and resolved expected; events:\n${describe(seen, T)}\nevaluator log:\n${logTail()}`);
  t.log(`events (seconds after the burners started):\n${describe(seen, T)}`);
  if (!done) return;

  for (const s of seen) {
    t.is(s.subject, `${ALERTS_PREFIX}.${HOST}.${RULE}`);
    t.true(s.arrived >= T, 'no event before the burners');
  }
  const firing = transitions().find((e) => e.state === 'firing') as TransitionEvent;
  const episode = seen.filter((s) => s.event.activeAt === firing.activeAt);
  const states = episode.map((s) => (isTransition(s.event) ? s.event.state : 'capture'));
  // the capture may come before or after the resolution (it is written `after` past the firing, plus the time frames take to settle)
  t.deepEqual(states.filter((s) => s !== 'capture'), ['pending', 'firing', 'resolved'], describe(seen, T));
  t.is(states.filter((s) => s === 'capture').length, 1);
  const [pending, , resolved] = episode.map((s) => s.event).filter(isTransition) as [TransitionEvent, TransitionEvent, TransitionEvent];
  // before it, only pending episodes the burners' ramp let fall back (pending -> inactive); after it, whatever
  // else loads this machine may start others (a second run of this test beside it did): not this test's business
  for (const other of transitions().filter((e) => ms(e.activeAt) < ms(firing.activeAt))) {
    t.true(other.state === 'pending' || other.state === 'inactive', `an unexpected transition ${other.previous}->${other.state} before the firing`);
    t.true(ms(other.activeAt) >= T);
  }

  t.true(ms(pending.activeAt) >= T, 'the episode began after the burners started');
  for (const e of [pending, firing]) {
    t.is(e.unit, 'nanoseconds');
    t.is(e.threshold, THRESHOLD_NS);
    t.is(e.thresholdText, '150ms');
    t.true(typeof e.value === 'number' && e.value > THRESHOLD_NS, `${e.state} value ${e.value} over the threshold`);
    const text = /^([\d.]+) (ms|s)$/.exec(e.valueText);
    t.truthy(text, `valueText ${e.valueText}`);
    if (text !== null) t.true(Math.abs(Number(text[1]) * (text[2] === 's' ? 1e9 : 1e6) - (e.value as number)) <= 0.01 * (e.value as number), `${e.valueText} is ${e.value} ns`);
    t.regex(e.summary, new RegExp(`^run-queue p99 on ${HOST} is ${e.valueText.replace('.', '\\.')} \\(over 150ms\\)$`));
  }
  t.is(pending.previous, 'inactive');
  t.is(firing.previous, 'pending');
  t.is(firing.activeAt, pending.activeAt, 'one episode: firing keeps the start of pending');
  t.true(ms(firing.firedAt) - ms(firing.activeAt) >= 2000, `fired ${firing.firedAt} at least for = 2s after ${firing.activeAt}`);
  t.is(resolved.previous, 'firing');
  t.is(resolved.activeAt, pending.activeAt);
  t.is(resolved.firedAt, firing.firedAt);
  t.true(ms(resolved.resolvedAt) > stopAt, `resolved at ${resolved.resolvedAt}, the burners stopped at ${new Date(stopAt).toISOString()}`);
  t.true(resolved.value === null || resolved.value <= CLEAR_NS, `resolved with ${resolved.valueText}, at most the clear threshold`);

  // the incident file, read by DuckDB
  const capture = episode.map((s) => s.event).find(isCapture) as CaptureEvent;
  t.is(capture.error, undefined);
  const file = capture.file ?? '';
  t.true(file.startsWith(resolve(incidents, HOST) + sep) && file.endsWith('.parquet') && existsSync(file), `capture file ${file} under ${incidents}/${HOST}`);
  t.is(ms(capture.since), ms(pending.activeAt) - 10_000, 'before = 10s');
  t.is(ms(capture.until), ms(firing.firedAt) + 2000, 'after = 2s');
  const duck = await Duck.open();
  const rows = await duck.rows(`SELECT timestamp, host, scheduler_runqueue_latency AS rq FROM read_parquet('${file}') ORDER BY timestamp`);
  t.is(rows.length, capture.rows ?? Number.NaN);
  t.true(rows.every((r) => r.host === HOST), 'frames of this host only');
  const ts = rows.map((r) => Number((r.timestamp as bigint) / 1_000_000n));
  const first = ts[0] ?? Number.NaN;
  const last = ts[ts.length - 1] ?? Number.NaN;
  t.true(first < T, `the first row ${new Date(first).toISOString()} is before the burners started at ${new Date(T).toISOString()}`);
  t.true(last >= ms(firing.firedAt), `the last row ${new Date(last).toISOString()} is not before the firing at ${firing.firedAt}`);
  const hists = rows.map((r) => (r.rq === null ? undefined : fromDense((r.rq as { items: bigint[] }).items)));
  t.true(hists.filter((h) => h !== undefined).length >= rows.length - 2, 'the scheduler_runqueue_latency column is filled');

  // what the file says of the run queue: the 3 s p99 at each row, seconds from the burners' start
  const series: string[] = [];
  let idleP99: number | undefined;
  let loadedP99 = 0;
  ts.forEach((at, i) => {
    const j = ts.findIndex((x) => x >= at - 3000);
    const h = hists[i];
    const h0 = hists[j];
    if (j >= i || h === undefined || h0 === undefined) return;
    const p = p99(h, h0);
    if (p === undefined) return;
    series.push(`${((at - T) / 1000).toFixed(1)}:${(p / 1e6).toFixed(1)}`);
    if (at <= T) idleP99 = p;
    if (at > ms(pending.activeAt) && at <= ms(firing.firedAt)) loadedP99 = Math.max(loadedP99, p);
  });
  t.log(`capture: ${rows.length} rows, ${new Date(first).toISOString()} .. ${new Date(last).toISOString()} (burners from ${new Date(T).toISOString()}), ${capture.bytes} bytes`);
  t.log(`3 s p99 in ms by second from the burners' start: ${series.join(' ')}`);
  t.true(idleP99 !== undefined && idleP99 <= THRESHOLD_NS, `the idle p99 in the file (${idleP99} ns) is under the threshold`);
  t.true(loadedP99 > THRESHOLD_NS, `the loaded p99 in the file (${loadedP99} ns) is over the threshold`);

  // the stream holds one event per transition: no (episode, seq, state) twice, and the same events as the subscription
  const jsm = await jetstreamManager(nc);
  const info = await jsm.streams.info(ALERTS_STREAM);
  t.true(await until(() => seen.length >= info.state.messages, 10_000), `${seen.length} events received, ${info.state.messages} stored`);
  const stored: AlertEvent[] = [];
  for (let seq = info.state.first_seq; seq <= info.state.last_seq; seq++) {
    const m = await jsm.streams.getMessage(ALERTS_STREAM, { seq });
    if (m !== null) stored.push(m.json<AlertEvent>());
  }
  t.is(stored.length, info.state.messages);
  const ids = stored.map((e) => (isTransition(e) ? `${e.activeAt}/${e.state}/${e.previous}` : `${e.activeAt}/capture`));
  t.deepEqual([...new Set(ids)], ids, 'no transition stored twice');
  t.deepEqual(stored, seen.slice(0, stored.length).map((s) => s.event), 'the stream holds what was received, in order');

  // the state bucket: the episode's last record is the resolved one, published, with the capture's result
  // (the last record of the episode, not of the key: a later episode may have begun meanwhile)
  const latest = (): AlertRecord | undefined => records.filter((r) => r.activeAt === ms(pending.activeAt)).pop();
  const settled = await until(() => {
    const r = latest();
    return r?.state === 'resolved' && r.published && r.capture?.result !== undefined;
  }, 15_000);
  const record = latest();
  t.true(settled, `the episode's last KV record: ${JSON.stringify(record)}`);
  t.deepEqual(
    records.filter((r) => r.activeAt === ms(pending.activeAt)).map((r) => r.state).filter((st, i, all) => st !== all[i - 1]),
    ['pending', 'firing', 'resolved'],
    'the record went pending, firing, resolved',
  );
  t.like(record, { state: 'resolved', previous: 'firing', seq: 3, activeAt: ms(pending.activeAt), firedAt: ms(firing.firedAt), resolvedAt: ms(resolved.resolvedAt) });
  t.is(record?.capture?.result?.file, file);
  t.is(record?.capture?.result?.rows, rows.length);
  t.log(`run-queue p99: idle ${((idleP99 ?? 0) / 1e6).toFixed(1)} ms before the burners, up to ${(loadedP99 / 1e6).toFixed(1)} ms with ${BURNERS} burners`);
});
