/**
 * Reply-subject redirection against the config `rezolus nats-auth` prints,
 * on a real nats-server: the server answers a JetStream API request (and
 * acks a JetStream publish) on whatever reply subject the client names, with
 * the server's own rights. Each attack names another host's frame subject,
 * descriptor or status key, or the hindsight control subject as its reply;
 * none may store, change or dump anything. A push consumer delivering into
 * those subjects is the same attack through the consumer API.
 */
import test, { type ExecutionContext } from 'ava';
import { mkdirSync, mkdtempSync, readdirSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { AckPolicy, jetstream, jetstreamManager } from '@nats-io/jetstream';
import { Kvm } from '@nats-io/kv';
import type { NatsConnection } from '@nats-io/nats-core';
import { connectBus } from '../../src/bus/connect.js';
import { DESCRIPTOR_BUCKET, HINDSIGHT_CONTROL_SUBJECT, STATUS_BUCKET } from '../../src/bus/subjects.js';
import { loadHindsightConfig } from '../../src/config/hindsight.js';
import type { NatsSecurity } from '../../src/config/nats.js';
import { runHindsight, type RunningHindsight } from '../../src/hindsight/main.js';
import { silentLogger } from '../../src/log/logger.js';
import { startAuthNats, type AuthNats } from '../helpers/auth-nats.js';
import type { TestNats } from '../helpers/nats.js';
import { capturingLogger, security } from '../helpers/security.js';

let server: TestNats;
let dir: string;
let admin: NatsConnection;
let hindsight: RunningHindsight;
const hindsightLog = capturingLogger();
let auth: AuthNats;
const HASH = '0123456789abcdef';
const VICTIM_DESCRIPTOR = `hostb.${HASH}`;

const user = (name: string, extra: Partial<NatsSecurity> = {}): NatsSecurity => security({ user: name, password: auth.password(name), ...extra });
const connectAs = (name: string): Promise<NatsConnection> =>
  connectBus({ url: server.url, name: `attacker-${name}`, log: silentLogger(), security: user(name, name.startsWith('agent-') ? { inboxPrefix: `_INBOX_${name.slice(6)}` } : {}) });

/** The attackers: a host's agent and each consumer user. */
const ATTACKERS = ['agent-hosta', 'rezolus-exporter', 'rezolus-recorder', 'rezolus-hindsight'];

async function hostbMessages(): Promise<number> {
  const info = await (await jetstreamManager(admin)).streams.info('REZOLUS', { subjects_filter: 'rezolus.metrics.hostb.>' });
  return Object.values(info.state.subjects ?? {}).reduce((a, b) => a + b, 0);
}

async function revisions(): Promise<{ descriptor: number; status: number }> {
  const kvm = new Kvm(admin);
  const d = await (await kvm.open(DESCRIPTOR_BUCKET)).get(VICTIM_DESCRIPTOR);
  const s = await (await kvm.open(STATUS_BUCKET)).get('hostb');
  return { descriptor: d?.revision ?? 0, status: s?.revision ?? 0 };
}

async function dumps(): Promise<number> {
  const status = await hindsight.app.inject({ method: 'GET', url: '/status' });
  return status.json<{ dumps: number }>().dumps;
}

/** Long enough for a server response to land wherever it lands; the checks after it ask the server. */
const settle = (nc: NatsConnection): Promise<void> => nc.flush().then(() => new Promise((r) => setTimeout(r, 300)));

test.before(async () => {
  dir = mkdtempSync(join(tmpdir(), 'rezolus-redirect-test-'));
  auth = await startAuthNats(dir, ['hosta', 'hostb']);
  server = auth.server;
  admin = auth.admin;
  const { descriptors, status } = await auth.provision();
  // hostb's state, as its agent would have left it
  await descriptors.put(VICTIM_DESCRIPTOR, '{"hostb":"descriptor"}');
  await status.put('hostb', '{"host":"hostb"}');
  mkdirSync(join(dir, 'dumps'));
  const config = loadHindsightConfig(undefined, { natsUrl: server.url, listen: { host: '127.0.0.1', port: 0 }, output: join(dir, 'dumps', 'hindsight.parquet'), intervalMs: 250 });
  hindsight = await runHindsight({ ...config, durationMs: 60_000, nats: user('rezolus-hindsight') }, hindsightLog.log);
});

test.after.always(async () => {
  await hindsight?.stop().catch(() => undefined);
  await auth?.dispose();
  rmSync(dir, { recursive: true, force: true });
});

/** Sends `subject` with `reply` as each attacker (a publish it may not make is refused by its permissions: also fine). */
async function redirect(t: ExecutionContext, as: string, subject: string, reply: string): Promise<void> {
  const nc = await connectAs(as);
  try {
    nc.publish(subject, '', { reply });
    await settle(nc);
  } finally {
    await nc.close();
  }
  t.pass();
}

test.serial('a JetStream API answer redirected to another host\'s frame subject is not stored', async (t) => {
  const before = await hostbMessages();
  for (const as of ATTACKERS) await redirect(t, as, '$JS.API.INFO', 'rezolus.metrics.hostb.cpu_usage');
  for (const as of ATTACKERS) await redirect(t, as, '$JS.API.STREAM.INFO.REZOLUS', 'rezolus.metrics.hostb.memory_meminfo');
  t.is(await hostbMessages() - before, 0, 'messages stored under hostb');
});

test.serial('a publish ack redirected to another host\'s descriptor or status key changes nothing', async (t) => {
  const before = await revisions();
  await redirect(t, 'agent-hosta', 'rezolus.metrics.hosta.cpu_usage', `$KV.${DESCRIPTOR_BUCKET}.${VICTIM_DESCRIPTOR}`);
  await redirect(t, 'agent-hosta', 'rezolus.metrics.hosta.cpu_usage', `$KV.${STATUS_BUCKET}.hostb`);
  await redirect(t, 'agent-hosta', `$KV.${STATUS_BUCKET}.hosta`, `$KV.${STATUS_BUCKET}.hostb`);
  for (const as of ATTACKERS) await redirect(t, as, '$JS.API.INFO', `$KV.${STATUS_BUCKET}.hostb`);
  t.deepEqual(await revisions(), before, 'hostb\'s descriptor and status revisions');
});

test.serial('a server answer redirected to the hindsight control subject does not dump', async (t) => {
  const before = await dumps();
  // a plain subscriber with the hindsight user's rights sees what would reach the service
  const watcher = await connectAs('rezolus-hindsight');
  const seen: string[] = [];
  watcher.subscribe(HINDSIGHT_CONTROL_SUBJECT, { callback: (_e, m) => void seen.push(m.string()) });
  await watcher.flush();
  try {
    for (const as of ATTACKERS.filter((a) => a !== 'rezolus-hindsight')) {
      await redirect(t, as, '$JS.API.INFO', HINDSIGHT_CONTROL_SUBJECT);
      await redirect(t, as, '$JS.API.STREAM.INFO.REZOLUS', HINDSIGHT_CONTROL_SUBJECT);
    }
    await redirect(t, 'agent-hosta', 'rezolus.metrics.hosta.cpu_usage', HINDSIGHT_CONTROL_SUBJECT);
    await settle(watcher);
    const reached = [...seen];
    // the hindsight user itself: its own answers may reach its own subscription, but the service refuses them
    await redirect(t, 'rezolus-hindsight', '$JS.API.INFO', HINDSIGHT_CONTROL_SUBJECT);
    await new Promise((r) => setTimeout(r, 1000));
    t.log(`reached the control subject: ${reached.length}; dumps: ${await dumps() - before}`);
    t.deepEqual(reached, [], 'what reached the control subject');
    t.is(await dumps() - before, 0, 'dumps made');
    t.deepEqual(readdirSync(join(dir, 'dumps')), [], 'no dump file');
  } finally {
    await watcher.close();
  }
});

test.serial('a push consumer delivering stored messages into another host\'s keys or the control subject changes nothing and dumps nothing', async (t) => {
  // a compromised host stores what would pass for dump requests on its own subject
  const host = await connectAs('agent-hosta');
  await jetstream(host).publish('rezolus.metrics.hosta.cpu_usage', '{"output":"evil.parquet"}');
  await jetstream(host).publish('rezolus.metrics.hosta.cpu_usage', '');
  await host.close();
  const before = { ...(await revisions()), hostb: await hostbMessages(), dumps: await dumps() };
  const targets = [`$KV.${STATUS_BUCKET}.hostb`, `$KV.${DESCRIPTOR_BUCKET}.${VICTIM_DESCRIPTOR}`, HINDSIGHT_CONTROL_SUBJECT, 'rezolus.metrics.hostb.cpu_usage'];
  const outcome: string[] = [];
  for (const as of ['rezolus-recorder', 'rezolus-hindsight']) {
    const nc = await connectAs(as);
    try {
      const jsm = await jetstreamManager(nc);
      for (const deliver of targets) {
        const made = await jsm.consumers.add('REZOLUS', { deliver_subject: deliver, ack_policy: AckPolicy.None, filter_subject: 'rezolus.metrics.hosta.>' })
          .then(() => 'created', (e: unknown) => `refused: ${String(e)}`);
        outcome.push(`${as} -> ${deliver}: ${made}`);
      }
    } finally {
      await nc.close();
    }
  }
  t.log(outcome.join('\n'));
  await new Promise((r) => setTimeout(r, 1500));
  const after = { ...(await revisions()), hostb: await hostbMessages(), dumps: await dumps() };
  const files = readdirSync(join(dir, 'dumps'));
  const jsm = await jetstreamManager(admin);
  for await (const c of jsm.consumers.list('REZOLUS')) await jsm.consumers.delete('REZOLUS', c.name);
  t.log(`before ${JSON.stringify(before)} after ${JSON.stringify(after)} files ${files.join(', ')}`);
  t.deepEqual(after, before, 'hostb\'s keys, frames, and the dumps made');
  t.deepEqual(files, [], 'no dump file');
  // they did reach hindsight, which refused them as deliveries, not requests
  const refused = hindsightLog.lines.filter((l) => l.msg === 'refused a message on the control subject: no dump' && /JetStream/.test(String(l.error)));
  t.true(refused.length >= 2, JSON.stringify(refused));
});

test.serial('a host\'s frame reaches each consumer account live exactly once (from the host\'s account, not again through the stream\'s)', async (t) => {
  const got = new Map<string, number>();
  const consumers = await Promise.all(['rezolus-exporter', 'rezolus-recorder', 'rezolus-hindsight'].map(connectAs));
  consumers.forEach((nc, i) => nc.subscribe('rezolus.metrics.hosta.once', { callback: () => void got.set(String(i), (got.get(String(i)) ?? 0) + 1) }));
  await Promise.all(consumers.map((nc) => nc.flush()));
  const host = await connectAs('agent-hosta');
  await jetstream(host).publish('rezolus.metrics.hosta.once', 'x');
  await host.close();
  await settle(admin);
  await Promise.all(consumers.map((nc) => nc.close()));
  t.deepEqual([...got.values()], [1, 1, 1]);
});
