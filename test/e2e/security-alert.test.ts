/**
 * The alert evaluator as `rezolus-alert` against a real nats-server running
 * the config `rezolus nats-auth` prints: the admin creates the events stream
 * and the state bucket (one `rezolus alert` run with its credentials; the
 * alert user may not), then `rezolus alert` as rezolus-alert fires on a
 * host's low memory: the event is in REZOLUS_ALERTS, the record in the
 * bucket, the incident captured from the frames stream, and the exporter
 * user, which may only read the bucket, serves it as rezolus_alerts. The
 * alert user may not publish frames, write descriptors or status, or get the
 * server to do either for it.
 */
import test from 'ava';
import { spawn, type ChildProcess } from 'node:child_process';
import { existsSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { AckPolicy, jetstream, jetstreamManager } from '@nats-io/jetstream';
import { Kvm } from '@nats-io/kv';
import type { NatsConnection } from '@nats-io/nats-core';
import { ROOT } from '../../scripts/gen-docs.js';
import { ALERT_STATE_BUCKET, ALERTS_STREAM, parseRecord, type AlertEvent, type TransitionEvent } from '../../src/alert/contract.js';
import { connectBus } from '../../src/bus/connect.js';
import { statusBucket } from '../../src/bus/kv.js';
import { DESCRIPTOR_BUCKET, STATUS_BUCKET } from '../../src/bus/subjects.js';
import type { NatsSecurity } from '../../src/config/nats.js';
import { loadExporterConfig } from '../../src/config/exporter.js';
import { runExporter, type RunningExporter } from '../../src/exporter/main.js';
import { silentLogger } from '../../src/log/logger.js';
import { startAuthNats, type AuthNats } from '../helpers/auth-nats.js';
import { MEM_DESCRIPTOR, MemoryHost, MiB, prepareBus, readAlertEvents } from '../helpers/alert-bus.js';
import { security } from '../helpers/security.js';
import { until } from '../helpers/until.js';
import { rezolusArgv } from '../helpers/rezolus-cli.js';

const RECORD_KEY = 'web-1.memory_low._';
/** alert records already in the bucket when the watches start: enough bytes (6 MB) for the server to ask for flow control */
const FILLERS = 1500;

let dir: string;
let auth: AuthNats;
let admin: NatsConnection;
let agent: NatsConnection;
let host: MemoryHost;
let rules: string;
const children: ChildProcess[] = [];
const running: { stop(): Promise<void> }[] = [];

const user = (name: string, extra: Partial<NatsSecurity> = {}): NatsSecurity => security({ user: name, password: auth.password(name), ...extra });
const connectAs = (name: string): Promise<NatsConnection> => connectBus({ url: auth.server.url, name: `test-${name}`, log: silentLogger(), security: user(name) });

interface AlertRun {
  readonly child: ChildProcess;
  stderr: string;
  readonly exited: Promise<number | null>;
}

/** `rezolus alert` with the test's rules, as `who` (credentials from the environment). */
function alertAs(who: string): AlertRun {
  const child = spawn(process.execPath, rezolusArgv('alert', '--config', rules, '--nats', auth.server.url), {
    cwd: ROOT, stdio: ['ignore', 'ignore', 'pipe'], env: { ...process.env, REZOLUS_NATS_USER: who, REZOLUS_NATS_PASSWORD: auth.password(who) },
  });
  children.push(child);
  const run: AlertRun = { child, stderr: '', exited: new Promise((r) => child.once('exit', (code) => r(code))) };
  child.stderr?.on('data', (b: Buffer) => (run.stderr += b.toString()));
  return run;
}

const transitions = (events: readonly AlertEvent[]): TransitionEvent[] => events.filter((e): e is TransitionEvent => e.kind === 'transition');

async function stored(stream: string, subject: string): Promise<number> {
  const info = await (await jetstreamManager(admin)).streams.info(stream, { subjects_filter: subject });
  return Object.values(info.state.subjects ?? {}).reduce((a, b) => a + b, 0);
}

async function streamExists(name: string): Promise<boolean> {
  return (await jetstreamManager(admin)).streams.info(name).then(() => true, () => false);
}

test.before(async () => {
  dir = mkdtempSync(join(tmpdir(), 'rezolus-security-alert-'));
  auth = await startAuthNats(dir, ['web-1', 'web-2']);
  admin = auth.admin;
  // the admin's part: the frames stream, the descriptor (with web-1's memory descriptor) and status buckets
  await prepareBus(admin, 'web-1', silentLogger());
  await statusBucket(admin, { ttlMs: 3_600_000, replicas: 1 });
  // web-1's frames come from its own user, through its account
  agent = await connectBus({ url: auth.server.url, name: 'test-agent-web-1', log: silentLogger(), security: user('agent-web-1', { inboxPrefix: '_INBOX_web-1' }) });
  host = new MemoryHost(agent, 'web-1', 200);
  host.start();
  rules = join(dir, 'alerts.toml');
  writeFileSync(
    rules,
    [
      '[general]', 'every = "250ms"',
      '[capture]', `dir = ${JSON.stringify(join(dir, 'incidents'))}`, 'every = "0s"',
      '[[rule]]', 'name = "memory_low"', 'metric = "memory_available"', 'reduce = "last"', 'window = "1s"',
      'op = "<"', 'threshold = "100MiB"', 'for = "0s"', 'keep_firing_for = "0s"', 'capture = { before = "2s", after = "500ms" }',
    ].join('\n'),
  );
});

test.after.always(async () => {
  for (const c of children) c.kill('SIGKILL');
  for (const r of running.reverse()) await r.stop().catch(() => undefined);
  host?.stop();
  await agent?.close().catch(() => undefined);
  await auth?.dispose();
  rmSync(dir, { recursive: true, force: true });
});

let refusedStart = '';

test.serial('rezolus-alert may not create the events stream or the state bucket: rezolus alert as that user stops at start', async (t) => {
  const run = alertAs('rezolus-alert');
  t.not(await run.exited, 0, run.stderr);
  refusedStart = run.stderr;
  t.regex(run.stderr, /\$JS\.API\.STREAM\.CREATE\.REZOLUS_ALERTS/, 'names what was refused');
  t.false(await streamExists(ALERTS_STREAM), 'no events stream');
  t.false(await streamExists(`KV_${ALERT_STATE_BUCKET}`), 'no state bucket');
});

test.serial('that refusal says, without a stack trace, that the admin creates them', (t) => {
  t.regex(refusedStart, /^rezolus alert: .*REZOLUS_ALERTS.* may not create it.*admin/m);
  t.notRegex(refusedStart, /\n\s+at /, 'no stack trace');
});

test.serial('the admin creates both with one rezolus alert run of its own', async (t) => {
  const run = alertAs('rezolus-admin');
  t.true(await until(() => run.stderr.includes('alert evaluator running'), 60_000), run.stderr);
  run.child.kill('SIGTERM');
  t.is(await run.exited, 0, run.stderr);
  t.true(await streamExists(ALERTS_STREAM));
  t.true(await streamExists(`KV_${ALERT_STATE_BUCKET}`));
});

test.serial('rezolus alert as rezolus-alert fires on a host\'s low memory: the event in REZOLUS_ALERTS, the record in the bucket, the incident captured; the exporter user serves it', async (t) => {
  // records of a rule nobody evaluates, already there when the watches start: they read 6 MB through their accounts
  const kv = await new Kvm(admin).open(ALERT_STATE_BUCKET);
  const filler = 'x'.repeat(4000);
  await Promise.all(Array.from({ length: FILLERS }, (_, i) => kv.put(`filler-${i}.other._`, JSON.stringify({ v: 1, rule: 'other', host: `filler-${i}`, series: {}, state: 'resolved', previous: 'firing', activeAt: 0, published: true, summary: filler }))));

  const run = alertAs('rezolus-alert');
  const config = loadExporterConfig(undefined, { natsUrl: auth.server.url, listen: { host: '127.0.0.1', port: 0 }, intervalMs: 500 });
  const exporter: RunningExporter = await runExporter({ ...config, nats: user('rezolus-exporter') }, silentLogger());
  running.push(exporter);
  t.true(await until(() => run.stderr.includes('alert evaluator running'), 60_000), run.stderr);

  host.value = 50 * MiB;
  const firing = async (): Promise<TransitionEvent | undefined> => transitions(await readAlertEvents(admin)).find((e) => e.state === 'firing');
  t.true(await until(async () => (await firing()) !== undefined, 60_000), `a firing event:\n${run.stderr}`);
  const event = await firing();
  t.is(event?.host, 'web-1');
  t.is(event?.rule, 'memory_low');
  t.is(event?.value, 50 * MiB);
  const entry = await kv.get(RECORD_KEY);
  const record = entry === null ? undefined : parseRecord(entry.value);
  t.is(record?.state, 'firing');
  t.is(record?.evaluator, event?.evaluator, 'the evaluator that published it wrote it');

  // the capture replays web-1's window of the frames stream with ordered consumers
  t.true(await until(async () => (await readAlertEvents(admin)).some((e) => e.kind === 'capture'), 60_000), `a capture event:\n${run.stderr}`);
  const capture = (await readAlertEvents(admin)).find((e) => e.kind === 'capture');
  t.true(capture?.kind === 'capture' && capture.file !== undefined && existsSync(capture.file), JSON.stringify(capture));

  // the exporter's watch, through its account, sees the firing record
  const gauge = /rezolus_alerts\{rule="memory_low",host="web-1",[^}]*state="firing"[^}]*\} 1/;
  let body = '';
  t.true(await until(async () => gauge.test((body = (await exporter.app.inject({ method: 'GET', url: '/metrics' })).body)), 30_000), body.split('\n').filter((l) => l.includes('rezolus_alerts')).join('\n'));

  host.value = 1024 * MiB;
  t.true(await until(async () => transitions(await readAlertEvents(admin)).some((e) => e.state === 'resolved'), 60_000), 'resolved');
  t.notRegex(run.stderr, /Permissions Violation|permission/i, 'the evaluator was refused nothing');
  run.child.kill('SIGTERM');
  t.is(await run.exited, 0, run.stderr);
});

test.serial('the alert user may not publish frames, write descriptors or status, change the alert stream, nor get the server to do it for it', async (t) => {
  const nc = await connectAs('rezolus-alert');
  try {
    const js = jetstream(nc);
    const jsm = await jetstreamManager(nc);
    const kvm = new Kvm(nc);
    const refused = { message: /Permissions Violation for Publish/ };
    await t.throwsAsync(js.publish('rezolus.metrics.web-2.memory_meminfo', 'frame'), refused, 'a frame');
    await t.throwsAsync(js.publish('rezolus.metrics.web-1.memory_meminfo', 'frame'), refused, 'a frame of the host it alerts on');
    await t.throwsAsync((await kvm.open(DESCRIPTOR_BUCKET)).put(`web-2.${MEM_DESCRIPTOR.hash}`, '{}'), refused, 'a descriptor');
    await t.throwsAsync((await kvm.open(STATUS_BUCKET)).put('web-2', '{}'), refused, 'a status key');
    const info = await jsm.streams.info(ALERTS_STREAM);
    await t.throwsAsync(jsm.streams.update(ALERTS_STREAM, { ...info.config, subjects: ['rezolus.alerts.>', 'rezolus.control.>'] }), refused, 'the events stream\'s subjects');
    await t.throwsAsync(jsm.streams.add({ name: 'ELSEWHERE', subjects: ['rezolus.control.>'] }), refused, 'a stream of its own');
    await t.throwsAsync(jsm.streams.purge(`KV_${ALERT_STATE_BUCKET}`), refused, 'a purge of the state bucket');

    // a server answer redirected onto a frame subject lands in its own account (it reads frames there), not in the stream
    const landed: string[] = [];
    const sub = nc.subscribe('rezolus.metrics.web-2.>', { callback: (_e, m) => void landed.push(m.subject) });
    await nc.flush();
    nc.publish('$JS.API.INFO', '', { reply: 'rezolus.metrics.web-2.redirected' });
    t.true(await until(() => landed.includes('rezolus.metrics.web-2.redirected'), 10_000), 'the answer came back to the requester');

    // a push consumer of its bucket delivering records onto another host's frame subject (which it listens to): nothing stored
    const bucketStream = `KV_${ALERT_STATE_BUCKET}`;
    await jsm.consumers.add(bucketStream, { name: 'redirect', deliver_subject: 'rezolus.metrics.web-2.delivered', ack_policy: AckPolicy.None, filter_subject: `$KV.${ALERT_STATE_BUCKET}.${RECORD_KEY}` });
    // the server either delivers the record or drops the consumer (an ephemeral one without interest, after 5 s)
    const adminJsm = await jetstreamManager(admin);
    let outcome = '';
    t.true(await until(async () => {
      const info = await adminJsm.consumers.info(bucketStream, 'redirect').catch(() => undefined);
      outcome = info === undefined ? 'dropped undelivered' : `delivered ${info.delivered.consumer_seq}`;
      return info === undefined || info.delivered.consumer_seq > 0;
    }, 30_000), 'the server delivered or dropped it');
    t.log(`push consumer onto rezolus.metrics.web-2.delivered: ${outcome}; seen live: ${landed.includes('rezolus.metrics.web-2.delivered')}`);
    sub.unsubscribe();
    await adminJsm.consumers.delete(bucketStream, 'redirect').catch(() => undefined);
    // the stream stores in order: once this marker is stored, a delivery that reached it before would be too
    await jetstream(admin).publish('rezolus.metrics.web-1.marker', 'x');
    t.is(await stored('REZOLUS', 'rezolus.metrics.web-2.>'), 0, 'frames stored under web-2');
  } finally {
    await nc.close();
  }
});

test.serial('the exporter user reads the alert bucket and may not write it or publish alert events', async (t) => {
  const nc = await connectAs('rezolus-exporter');
  try {
    const kv = await new Kvm(nc).open(ALERT_STATE_BUCKET);
    const seen: string[] = [];
    const watch = await kv.watch({ key: RECORD_KEY });
    void (async () => {
      for await (const e of watch) seen.push(e.key);
    })();
    t.true(await until(() => seen.length > 0, 30_000), 'the watch delivers through the exporter\'s account');
    watch.stop();
    t.deepEqual(seen, [RECORD_KEY]);
    const refused = { message: /Permissions Violation for Publish/ };
    await t.throwsAsync(kv.put(RECORD_KEY, '{}'), refused, 'a record');
    await t.throwsAsync(jetstream(nc).publish('rezolus.alerts.web-1.memory_low', '{}'), refused, 'an alert event');
  } finally {
    await nc.close();
  }
});
