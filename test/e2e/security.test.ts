/**
 * Per-host credentials against a real nats-server running the config that
 * `rezolus nats-auth` generates: an agent publishes its own host's frames,
 * a refused publish (another host's subject) is reported and counted, not
 * silently lost, nkeys work, a wrong password fails in one line, the
 * consumer users can read and the hindsight user answers dump requests
 * whose output cannot leave its directory.
 */
import test from 'ava';
import { spawn } from 'node:child_process';
import { existsSync, mkdtempSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { AckPolicy, jetstream, jetstreamManager } from '@nats-io/jetstream';
import { Kvm } from '@nats-io/kv';
import { nkeys, type NatsConnection } from '@nats-io/nats-core';
import { ROOT } from '../../scripts/gen-docs.js';
import { runAgent } from '../../src/agent/main.js';
import { connectBus } from '../../src/bus/connect.js';
import { descriptorBucket, statusBucket } from '../../src/bus/kv.js';
import { ensureStream } from '../../src/bus/stream.js';
import { HINDSIGHT_CONTROL_SUBJECT, STATUS_BUCKET } from '../../src/bus/subjects.js';
import { loadAgentConfig, type AgentConfig } from '../../src/config/agent.js';
import { loadHindsightConfig } from '../../src/config/hindsight.js';
import type { NatsSecurity } from '../../src/config/nats.js';
import { RezolusError } from '../../src/errors.js';
import { runHindsight, type RunningHindsight } from '../../src/hindsight/main.js';
import { loadExporterConfig } from '../../src/config/exporter.js';
import { runExporter } from '../../src/exporter/main.js';
import { silentLogger } from '../../src/log/logger.js';
import { runRecord } from '../../src/record/main.js';
import { SAMPLER_NAMES } from '../../src/samplers/registry.js';
import { NO_KERNEL, PROC, SYS } from '../helpers/fixtures.js';
import { startAuthNats, type AuthNats } from '../helpers/auth-nats.js';
import { startTestNats, type TestNats } from '../helpers/nats.js';
import { capturingLogger, security } from '../helpers/security.js';
import { rezolusArgv } from '../helpers/rezolus-cli.js';
import { until } from '../helpers/until.js';

let server: TestNats;
let dir: string;
let auth: AuthNats;
let seedFile: string;
let admin: NatsConnection;
const running: { stop(): Promise<void> }[] = [];

const user = (name: string, extra: Partial<NatsSecurity> = {}): NatsSecurity => security({ user: name, password: auth.password(name), ...extra });

function agentConfig(host: string, nats: NatsSecurity): AgentConfig {
  const base = loadAgentConfig(undefined, SAMPLER_NAMES, { host, natsUrl: server.url });
  const on = ['cpu_usage', 'memory_meminfo'];
  const samplers = Object.fromEntries(SAMPLER_NAMES.map((n) => [n, { enabled: on.includes(n), intervalMs: 100 }]));
  // a message a tick (bundle_interval 0): the counts below are of stored messages
  return { ...base, procfs: PROC, sysfs: SYS, kernel: NO_KERNEL, samplers, http: undefined, nats, bundleIntervalMs: 0 };
}

async function hostMessages(host: string): Promise<number> {
  const info = await (await jetstreamManager(admin)).streams.info('REZOLUS', { subjects_filter: `rezolus.metrics.${host}.>` });
  return Object.values(info.state.subjects ?? {}).reduce((a, b) => a + b, 0);
}

test.before(async () => {
  dir = mkdtempSync(join(tmpdir(), 'rezolus-security-test-'));
  // hosta and the consumers by password, hostb by nkey: both kinds in one config
  const kp = nkeys.createUser();
  seedFile = join(dir, 'agent-hostb.nk');
  writeFileSync(seedFile, `${new TextDecoder().decode(kp.getSeed())}\n`, { mode: 0o600 });
  auth = await startAuthNats(dir, ['hosta', 'hostb'], (name) => (name === 'agent-hostb' ? { kind: 'nkey', publicKey: kp.getPublicKey() } : undefined));
  server = auth.server;
  // the admin provisions the stream and the buckets; agents may not
  admin = auth.admin;
  await auth.provision();
});

test.after.always(async () => {
  for (const r of running.reverse()) await r.stop().catch(() => undefined);
  await auth?.dispose();
  rmSync(dir, { recursive: true, force: true });
});

test.serial('an agent with its host user publishes its frames and its status', async (t) => {
  const agent = await runAgent(agentConfig('hosta', user('agent-hosta')), silentLogger());
  running.push(agent);
  // ten stored messages (ticks), waited for rather than timed: a busy machine may take longer
  t.true(await until(async () => (await hostMessages('hosta')) >= 10, 20_000), `stored ${await hostMessages('hosta')}`);
  t.true(agent.publisher.stats.published >= 10, `published ${agent.publisher.stats.published}`);
  t.is(agent.publisher.stats.refused, 0);
  // its status (written at start) landed in its own key
  const entry = await (await new Kvm(admin).open(STATUS_BUCKET)).get('hosta');
  t.is(entry?.json<{ host: string }>().host, 'hosta');
});

test.serial('publishing as another host is refused, reported in the log and counted, and does not block the agent', async (t) => {
  const { log, lines } = capturingLogger();
  // hosta's credentials, claiming hostb: its frame subjects are not hosta's
  const agent = await runAgent(agentConfig('hostb', user('agent-hosta', { inboxPrefix: '_INBOX_hosta' })), log);
  running.push(agent);
  await new Promise((r) => setTimeout(r, 1500));
  const s = agent.publisher.stats;
  t.true(s.refused >= 10, `refused ${s.refused}`);
  t.is(s.published, 0, 'no frame was acked');
  t.true(s.buffered <= 4, `the refused frames do not pile up in the buffer (buffered ${s.buffered})`);
  t.is(await hostMessages('hostb'), 0, 'nothing was stored under hostb');
  const errors = lines.filter((l) => l.level === 50 && l.subject === 'rezolus.metrics.hostb._bundle');
  t.is(errors.length, 1, 'one error line per refused subject (per minute), naming it');
  t.regex(errors[0]?.msg ?? '', /refused publishing to rezolus\.metrics\.hostb\._bundle/);
  await agent.stop();
  running.pop();
});

test.serial('another host\'s user with the default inbox: the agent stops at start and names the host mismatch', async (t) => {
  // hosta's credentials claiming hostb: its replies would come on _INBOX_hostb, which hosta's user may not use
  const error = await t.throwsAsync(runAgent(agentConfig('hostb', user('agent-hosta')), silentLogger()), { instanceOf: RezolusError });
  t.is(error?.code, 'NATS_PERMISSION');
  t.regex(error?.message ?? '', /may not receive replies on _INBOX_hostb\.\S* \(the inbox of host "hostb"\): is --host/);
  t.false((error?.message ?? '').includes('has no JetStream'), 'not blamed on JetStream');
});

test.serial('an agent with an nkey user publishes its frames', async (t) => {
  const agent = await runAgent(agentConfig('hostb', security({ nkeySeedFile: seedFile })), silentLogger());
  running.push(agent);
  // ten stored messages (ticks), waited for rather than timed: a busy machine may take longer
  t.true(await until(async () => (await hostMessages('hostb')) >= 10, 20_000), `stored ${await hostMessages('hostb')}`);
  t.true(agent.publisher.stats.published >= 10, `published ${agent.publisher.stats.published}`);
  t.is(agent.publisher.stats.refused, 0);
});

test.serial('an agent user may not read another stream, change the stream limits nor trigger a dump', async (t) => {
  const nc = await connectBus({ url: server.url, name: 'test-agent', log: silentLogger(), security: user('agent-hosta', { inboxPrefix: '_INBOX_hosta' }) });
  try {
    const jsm = await jetstreamManager(nc);
    const stream = loadAgentConfig(undefined, SAMPLER_NAMES).stream;
    const err = await t.throwsAsync(ensureStream(jsm, { ...stream, name: 'OTHER' }, silentLogger()));
    t.true(err instanceof RezolusError);
    t.regex(err?.message ?? '', /^this NATS user may not read stream OTHER \(Permissions Violation for Publish to "\$JS\.API\.STREAM\.INFO\.OTHER"\)/);
    // other limits than the stream's: the agent may not change them, warns and goes on with the stream as it is
    const { log, lines } = capturingLogger();
    const info = await ensureStream(jsm, { ...stream, maxAgeMs: 60_000 }, log);
    t.is(info.config.max_age, 900_000_000_000);
    t.is((await (await jetstreamManager(admin)).streams.info('REZOLUS')).config.max_age, 900_000_000_000, 'unchanged');
    t.true(lines.some((l) => l.level === 40 && /^the stream's max_age(, duplicate_window)? differ from .* may not change them/.test(l.msg) && JSON.stringify(l.max_age) === '[900000000000,60000000000]'), 'names the limit that differs, with both values');
    await t.throwsAsync(nc.request(HINDSIGHT_CONTROL_SUBJECT, '', { timeout: 2000 }), { message: /Permissions Violation for Publish/ });
  } finally {
    await nc.close();
  }
});

test.serial('an agent puts its descriptors under its own host and may not touch another host\'s', async (t) => {
  const kvAdmin = await new Kvm(admin).open('rezolus_descriptors');
  const keys: string[] = [];
  for await (const k of await kvAdmin.keys()) keys.push(k);
  t.true(keys.some((k) => /^hosta\.[0-9a-f]{16}$/.test(k)), `hosta's descriptors under hosta.<hash>: ${keys.join(', ')}`);
  const victim = keys.find((k) => k.startsWith('hostb.'));
  t.not(victim, undefined, 'hostb (the nkey agent) put its own');
  const nc = await connectBus({ url: server.url, name: 'tamper', log: silentLogger(), security: user('agent-hosta', { inboxPrefix: '_INBOX_hosta' }) });
  try {
    const kv = await new Kvm(nc).open('rezolus_descriptors');
    await t.throwsAsync(kv.put(victim ?? '', '{"junk":1}'), { message: /Permissions Violation for Publish to "\$KV\.rezolus_descriptors\.hostb\./ });
    await t.throwsAsync(kv.put('0123456789abcdef', '{"junk":1}'), { message: /Permissions Violation/ }, 'nor the bare-hash keys of older agents');
    await t.notThrowsAsync(kv.put('hosta.0123456789abcdef', '{"junk":1}'), 'its own keys it may write (consumers check content against the hash)');
  } finally {
    await nc.close();
  }
  const entry = await kvAdmin.get(victim ?? '');
  t.not(entry?.string(), '{"junk":1}', 'hostb\'s descriptor is untouched');
});

test.serial('a wrong password fails at once with one line naming the user', async (t) => {
  const started = Date.now();
  const err = await t.throwsAsync(connectBus({ url: server.url, name: 'test', log: silentLogger(), security: security({ user: 'agent-hosta', password: 'wrong' }) }));
  t.true(err instanceof RezolusError);
  t.regex(err?.message ?? '', /^cannot connect to NATS at nats:\/\/127\.0\.0\.1:\d+: the server refused user "agent-hosta" \(AuthorizationError: Authorization Violation\)/);
  t.false((err?.message ?? '').includes('\n'));
  t.true(Date.now() - started < 10_000, 'no endless retry');
});

test.serial('rezolus agent with a wrong password or a bad seed file exits with one line', async (t) => {
  const run = async (toml: string, env: Record<string, string> = {}): Promise<{ code: number | null; stderr: string }> => {
    const file = join(dir, `agent-${Math.random().toString(36).slice(2)}.toml`);
    writeFileSync(file, toml);
    const child = spawn(process.execPath, rezolusArgv('agent', '--config', file, '--nats', server.url, '--log-level', 'silent', '--procfs', PROC, '--sysfs', SYS), {
      cwd: ROOT, stdio: ['ignore', 'ignore', 'pipe'], env: { ...process.env, ...env },
    });
    let stderr = '';
    child.stderr.on('data', (d: Buffer) => (stderr += d.toString()));
    const code = await new Promise<number | null>((r) => child.once('close', r));
    return { code, stderr };
  };
  const wrong = await run('[nats]\nuser = "agent-hosta"\n[kernel]\nenabled = false\n[http]\nenabled = false\n', { REZOLUS_NATS_PASSWORD: 'nope' });
  t.is(wrong.code, 1);
  t.regex(wrong.stderr, /^rezolus agent: cannot connect to NATS at .*: the server refused user "agent-hosta"/);
  t.is(wrong.stderr.trim().split('\n').length, 1, wrong.stderr);
  const notSeed = join(dir, 'not-a-seed.nk');
  writeFileSync(notSeed, 'UABC\n');
  const bad = await run(`[nats]\nnkey_seed_file = "${notSeed}"\n`);
  t.is(bad.code, 2);
  t.regex(bad.stderr, /^rezolus agent: .*\[nats\] nkey_seed_file: .*not-a-seed\.nk does not hold an nkey user seed/);
  t.false(bad.stderr.includes('UABC'), 'the file content is not printed');
  t.is(bad.stderr.trim().split('\n').length, 1);
});

test.serial('the exporter user follows the frames live', async (t) => {
  const config = loadExporterConfig(undefined, { natsUrl: server.url, listen: { host: '127.0.0.1', port: 0 }, intervalMs: 500 });
  const exporter = await runExporter({ ...config, nats: user('rezolus-exporter') }, silentLogger());
  running.push(exporter);
  t.not(await exporter.following, undefined, 'it opened the descriptor bucket');
  let body = '';
  for (let i = 0; i < 40 && !body.includes('host="hosta"'); i++) {
    await new Promise((r) => setTimeout(r, 100));
    body = (await exporter.app.inject({ method: 'GET', url: '/metrics' })).body;
  }
  t.regex(body, /cpu_usage_seconds_total\{[^}]*host="hosta"/);
});

test.serial('the consumer users read the stream; the hindsight user answers dumps, inside its directory only', async (t) => {
  const now = Date.now();
  const rec = await runRecord({
    natsUrl: server.url, nats: user('rezolus-recorder'), hosts: 'hosta', intervalMs: 250, durationMs: undefined, output: join(dir, 'replay.parquet'),
    replay: { stream: 'REZOLUS', sinceNs: BigInt(now - 60_000) * 1_000_000n, untilNs: BigInt(now) * 1_000_000n },
  }, silentLogger());
  const summary = await rec.done;
  t.true(summary.rows > 0, 'the recorder user replays the window');
  t.deepEqual(summary.hosts, ['hosta']);

  const out = join(dir, 'dumps', 'hindsight.parquet');
  rmSync(join(dir, 'dumps'), { recursive: true, force: true });
  const { mkdirSync } = await import('node:fs');
  mkdirSync(join(dir, 'dumps'));
  const config = loadHindsightConfig(undefined, { natsUrl: server.url, listen: { host: '127.0.0.1', port: 0 }, output: out, hosts: 'hosta', intervalMs: 250 });
  const hindsight: RunningHindsight = await runHindsight({ ...config, durationMs: 60_000, nats: user('rezolus-hindsight') }, silentLogger());
  running.push(hindsight);
  const ask = async (body: unknown): Promise<{ ok: boolean; error?: string; output?: string; rows?: number }> => {
    const reply = await admin.request(HINDSIGHT_CONTROL_SUBJECT, body === undefined ? '' : JSON.stringify(body), { timeout: 20_000 });
    return reply.json();
  };
  const named = await ask({ output: 'incident-42.parquet' });
  t.true(named.ok, JSON.stringify(named));
  t.is(named.output, join(dir, 'dumps', 'incident-42.parquet'));
  t.true(existsSync(join(dir, 'dumps', 'incident-42.parquet')));
  // a symlinked subdirectory of the output directory must not lead a dump outside it either
  symlinkSync(dir, join(dir, 'dumps', 'link'));
  for (const bad of ['../escape.parquet', join(dir, 'abs.parquet'), 'sub/../../escape.parquet', 'link/escape.parquet']) {
    const r = await ask({ output: bad });
    t.false(r.ok, bad);
    t.regex(r.error ?? '', /absolute path|has a directory part/, bad);
  }
  t.false(existsSync(join(dir, 'escape.parquet')));
  t.false(existsSync(join(dir, 'abs.parquet')));
  const http = await hindsight.app.inject({ method: 'POST', url: '/dump', payload: { output: '../escape.parquet' } });
  t.is(http.statusCode, 400);
  t.regex(http.json<{ error: string }>().error, /has a directory part/);
  const abs = await hindsight.app.inject({ method: 'POST', url: '/dump', payload: { output: '/tmp/x.parquet' } });
  t.is(abs.statusCode, 400);
  t.regex(abs.json<{ error: string }>().error, /absolute path/);
});

test.serial('each role through its own account: a retried publish is stored once, a live and a durable recording, acks, a hindsight snapshot', async (t) => {
  // the agent's publish goes through its account's service import: Nats-Msg-Id still dedups
  const nc = await connectBus({ url: server.url, name: 'dedup', log: silentLogger(), security: user('agent-hosta', { inboxPrefix: '_INBOX_hosta' }) });
  try {
    const js = jetstream(nc);
    const first = await js.publish('rezolus.metrics.hosta.dedup_test', 'x', { msgID: 'hosta-dedup-1' });
    const again = await js.publish('rezolus.metrics.hosta.dedup_test', 'x', { msgID: 'hosta-dedup-1' });
    t.false(first.duplicate);
    t.true(again.duplicate, 'the retry is known as a duplicate');
    t.is(again.seq, first.seq);
  } finally {
    await nc.close();
  }
  // live frames from a host's account reach the recorder's account (a stream import from the host's account)
  const live = await (await runRecord({ natsUrl: server.url, nats: user('rezolus-recorder'), hosts: 'hosta', intervalMs: 250, durationMs: 1500, output: join(dir, 'live.parquet') }, silentLogger())).done;
  t.true(live.rows > 0, `live rows ${live.rows}`);
  t.deepEqual(live.hosts, ['hosta']);
  // a durable consumer's acks go back to the stream's account (ackAck waits for the server's answer)
  const rec = await connectBus({ url: server.url, name: 'acks', log: silentLogger(), security: user('rezolus-recorder') });
  try {
    const jsm = await jetstreamManager(rec);
    await jsm.consumers.add('REZOLUS', { durable_name: 'acktest', ack_policy: AckPolicy.Explicit, filter_subject: 'rezolus.metrics.hosta.>' });
    const batch = await (await jetstream(rec).consumers.get('REZOLUS', 'acktest')).fetch({ max_messages: 3, expires: 5000 });
    let acked = 0;
    for await (const m of batch) if (await m.ackAck()) acked++;
    t.is(acked, 3);
    const info = await jsm.consumers.info('REZOLUS', 'acktest');
    t.is(info.num_ack_pending, 0);
    t.true(info.ack_floor.stream_seq > 0);
    await jsm.consumers.delete('REZOLUS', 'acktest');
  } finally {
    await rec.close();
  }
  // the CLI as the recorder (--durable) and as hindsight (snapshot), credentials from the environment;
  // the recorder's password as a variable filled from a password file has it, with its line end
  const cli = async (who: string, args: string[], lineEnd = ''): Promise<{ code: number | null; stderr: string }> => {
    const child = spawn(process.execPath, rezolusArgv(...args, '--nats', server.url, '--log-level', 'error'), {
      cwd: ROOT, stdio: ['ignore', 'ignore', 'pipe'], env: { ...process.env, REZOLUS_NATS_USER: who, REZOLUS_NATS_PASSWORD: `${auth.password(who)}${lineEnd}` },
    });
    let stderr = '';
    child.stderr.on('data', (d: Buffer) => (stderr += d.toString()));
    return { code: await new Promise<number | null>((r) => child.once('close', r)), stderr };
  };
  const durable = await cli('rezolus-recorder', ['record', '--durable', 'sec1', '--hosts', 'hosta', '--interval', '250ms', '--since', '1m', '-o', join(dir, 'durable.parquet')], '\n');
  t.is(durable.code, 0, durable.stderr);
  t.true(existsSync(join(dir, 'durable.parquet')));
  const snapshot = await cli('rezolus-hindsight', ['hindsight', 'snapshot', '--last', '1m', '--hosts', 'hosta', '--interval', '250ms', '-o', join(dir, 'snapshot.parquet')]);
  t.is(snapshot.code, 0, snapshot.stderr);
  t.true(existsSync(join(dir, 'snapshot.parquet')));
});

test.serial('the config printed by rezolus nats-auth --nkeys runs in nats-server, and its seed files log the users in', async (t) => {
  const secrets = join(dir, 'cli-secrets');
  const child = spawn(process.execPath, rezolusArgv('nats-auth', '--hosts', 'cli-host,cli-other', '--nkeys', '--secrets-dir', secrets), {
    cwd: ROOT, stdio: ['ignore', 'pipe', 'pipe'],
  });
  let stdout = '';
  let stderr = '';
  child.stdout.on('data', (d: Buffer) => (stdout += d.toString()));
  child.stderr.on('data', (d: Buffer) => (stderr += d.toString()));
  t.is(await new Promise<number | null>((r) => child.once('close', r)), 0, stderr);
  const conf = join(dir, 'cli-auth.conf');
  writeFileSync(conf, stdout);
  const other = await startTestNats(0, undefined, conf);
  try {
    const adminNc = await connectBus({ url: other.url, name: 'test', log: silentLogger(), security: security({ nkeySeedFile: join(secrets, 'rezolus-admin.nk') }) });
    await ensureStream(await jetstreamManager(adminNc), loadAgentConfig(undefined, SAMPLER_NAMES).stream, silentLogger());
    await descriptorBucket(adminNc, { ttlMs: 86_400_000, replicas: 1 });
    await statusBucket(adminNc, { ttlMs: 3_600_000, replicas: 1 });
    await adminNc.close();
    const agent = await runAgent({ ...agentConfig('cli-host', security({ nkeySeedFile: join(secrets, 'agent-cli-host.nk') })), natsUrl: other.url }, silentLogger());
    try {
      // the nkey recorder follows it live from its own account
      const live = runRecord({ natsUrl: other.url, nats: security({ nkeySeedFile: join(secrets, 'rezolus-recorder.nk') }), hosts: 'cli-host', intervalMs: 250, durationMs: 1500, output: join(dir, 'cli-live.parquet') }, silentLogger());
      t.true(await until(() => agent.publisher.stats.published >= 5, 20_000), `published ${agent.publisher.stats.published}`);
      t.is(agent.publisher.stats.refused, 0);
      t.true((await (await live).done).rows > 0, 'the nkey recorder recorded it live');
      // a server answer the agent's user redirects to the other host's subject or key is not stored
      const nc = await connectBus({ url: other.url, name: 'redirect', log: silentLogger(), security: security({ nkeySeedFile: join(secrets, 'agent-cli-host.nk'), inboxPrefix: '_INBOX_cli-host' }) });
      nc.publish('$JS.API.INFO', '', { reply: 'rezolus.metrics.cli-other.cpu_usage' });
      nc.publish('rezolus.metrics.cli-host.cpu_usage', '', { reply: '$KV.rezolus_status.cli-other' });
      await nc.flush();
      await nc.close();
      await new Promise((r) => setTimeout(r, 300));
      const check = await connectBus({ url: other.url, name: 'check', log: silentLogger(), security: security({ nkeySeedFile: join(secrets, 'rezolus-admin.nk') }) });
      const adminJsm = await jetstreamManager(check);
      const stored = async (stream: string, subject: string): Promise<number> => Object.values((await adminJsm.streams.info(stream, { subjects_filter: subject })).state.subjects ?? {}).reduce((a, b) => a + b, 0);
      try {
        t.is(await stored('REZOLUS', 'rezolus.metrics.cli-other.>'), 0);
        t.is(await stored('KV_rezolus_status', '$KV.rezolus_status.cli-other'), 0);
      } finally {
        await check.close();
      }
    } finally {
      await agent.stop();
    }
  } finally {
    await other.dispose();
  }
});
