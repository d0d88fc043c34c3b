/**
 * `rezolus setup` against a real nats-server running the accounts of
 * `rezolus nats-auth`: as the admin it creates the frames stream, both
 * buckets and (with --alerts) the alert stream and bucket, publishing
 * nothing and leaving no host in the status bucket; an agent's per-host
 * user then runs on them; a per-host user's setup is refused in one line;
 * a second run brings a changed [stream] setting to the stream.
 */
import test from 'ava';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { jetstreamManager } from '@nats-io/jetstream';
import { ALERT_STATE_BUCKET, ALERTS_STREAM } from '../../src/alert/contract.js';
import { runAgent } from '../../src/agent/main.js';
import { DEFAULT_STREAM, DESCRIPTOR_BUCKET, STATUS_BUCKET } from '../../src/bus/subjects.js';
import { loadAgentConfig } from '../../src/config/agent.js';
import { silentLogger } from '../../src/log/logger.js';
import { SAMPLER_NAMES } from '../../src/samplers/registry.js';
import { startAuthNats, type AuthNats } from '../helpers/auth-nats.js';
import { NO_KERNEL, PROC, SYS } from '../helpers/fixtures.js';
import { ROOT, runRezolusWithEnv } from '../helpers/rezolus-cli.js';
import { until } from '../helpers/until.js';

let dir: string;
let auth: AuthNats;

test.before(async () => {
  dir = mkdtempSync(join(tmpdir(), 'rezolus-setup-test-'));
  auth = await startAuthNats(dir, ['hosta']);
});

test.after.always(async () => {
  await auth?.dispose();
  rmSync(dir, { recursive: true, force: true });
});

/** `rezolus setup ARGS` as `user` (credentials from the environment, as a Job gives them). */
function setup(user: string, ...args: string[]): Promise<{ code: number | null; stdout: string; stderr: string }> {
  const env = { REZOLUS_NATS_URL: '', REZOLUS_NATS_USER: user, REZOLUS_NATS_PASSWORD: auth.password(user) };
  return runRezolusWithEnv(env, 'setup', '--nats', auth.server.url, ...args);
}

async function streams(): Promise<Map<string, { messages: number; maxAgeMs: number }>> {
  const jsm = await jetstreamManager(auth.admin);
  const out = new Map<string, { messages: number; maxAgeMs: number }>();
  for await (const s of jsm.streams.list()) out.set(s.config.name, { messages: s.state.messages, maxAgeMs: s.config.max_age / 1e6 });
  return out;
}

test.serial('a per-host user may not set up: one line says so and who may, and nothing is made', async (t) => {
  const r = await setup('agent-hosta');
  t.is(r.code, 1, r.stderr);
  t.regex(r.stderr, /may not receive replies .*inbox of its own.*admin/);
  t.is(r.stderr.trim().split('\n').length, 1, r.stderr);
  t.is((await streams()).size, 0);
});

test.serial('the admin makes the stream and both buckets, and the alert ones with --alerts; no frame, no host; the host\'s agent then runs', async (t) => {
  const r = await setup('rezolus-admin', '--alerts', join(ROOT, 'config', 'alerts.toml'));
  t.is(r.code, 0, r.stderr);
  t.deepEqual(r.stdout.trim().split('\n').map((l) => l.split(':')[0]), [
    `stream ${DEFAULT_STREAM}`, `bucket ${DESCRIPTOR_BUCKET}`, `bucket ${STATUS_BUCKET}`, `stream ${ALERTS_STREAM}`, `bucket ${ALERT_STATE_BUCKET}`,
  ]);
  const made = await streams();
  t.deepEqual([...made.keys()].sort(), [DEFAULT_STREAM, ALERTS_STREAM, `KV_${ALERT_STATE_BUCKET}`, `KV_${DESCRIPTOR_BUCKET}`, `KV_${STATUS_BUCKET}`].sort());
  for (const [name, s] of made) t.is(s.messages, 0, `${name} holds nothing: no host left behind`);

  // the host's agent, with its per-host user, finds them and publishes
  const base = loadAgentConfig(undefined, SAMPLER_NAMES, { host: 'hosta', natsUrl: auth.server.url });
  const samplers = Object.fromEntries(SAMPLER_NAMES.map((n) => [n, { enabled: n === 'cpu_usage', intervalMs: 100 }]));
  const agent = await runAgent({ ...base, procfs: PROC, sysfs: SYS, kernel: NO_KERNEL, samplers, http: undefined, nats: auth.user('agent-hosta') }, silentLogger());
  try {
    t.true(await until(async () => ((await streams()).get(DEFAULT_STREAM)?.messages ?? 0) > 0, 20_000), 'the agent\'s frames are stored');
  } finally {
    await agent.stop();
  }
});

test.serial('run again: unchanged; with another [stream] max_age and [descriptors] ttl the admin\'s run changes them and says so, a consumer\'s run may not', async (t) => {
  const again = await setup('rezolus-admin');
  t.is(again.code, 0, again.stderr);
  t.deepEqual(again.stdout.trim().split('\n').map((l) => /: (\w+)/.exec(l)?.[1]), ['unchanged', 'unchanged', 'unchanged'], again.stdout);

  const shipped = readFileSync(join(ROOT, 'config', 'agent.toml'), 'utf8');
  const changed = shipped.replace(/^max_age = .*$/m, 'max_age = "20m"').replace(/^ttl = "24h"$/m, 'ttl = "48h"');
  t.notRegex(changed, /^max_age = "15m"$|^ttl = "24h"$/m, 'the shipped agent.toml has both lines');
  const file = join(dir, 'agent.toml');
  writeFileSync(file, changed);
  // a consumer's user may read the stream but not change it: one line, exit 1, nothing changed
  const refused = await setup('rezolus-exporter', '--config', file);
  t.is(refused.code, 1, refused.stdout + refused.stderr);
  t.regex(refused.stderr, /may not change stream REZOLUS \(max_age 15m -> 20m\).*admin/);
  t.is(refused.stderr.trim().split('\n').length, 1, refused.stderr);
  t.is((await streams()).get(DEFAULT_STREAM)?.maxAgeMs, 15 * 60_000);

  const r = await setup('rezolus-admin', '--config', file);
  t.is(r.code, 0, r.stderr);
  t.regex(r.stdout, /^stream REZOLUS: updated \(max_age 15m -> 20m\)$/m);
  t.regex(r.stdout, /^bucket rezolus_descriptors: updated \(max_age 1d -> 2d\)$/m);
  t.regex(r.stdout, /^bucket rezolus_status: unchanged/m);
  const now = await streams();
  t.is(now.get(DEFAULT_STREAM)?.maxAgeMs, 20 * 60_000);
  t.is(now.get(`KV_${DESCRIPTOR_BUCKET}`)?.maxAgeMs, 48 * 3_600_000);
});

test.serial('a stream of that name rezolus cannot use is named with what is wrong, and left as it is', async (t) => {
  const jsm = await jetstreamManager(auth.admin);
  await jsm.streams.delete(ALERTS_STREAM);
  await jsm.streams.add({ name: ALERTS_STREAM, subjects: ['wrong.>'] });
  const r = await setup('rezolus-admin', '--alerts', join(ROOT, 'config', 'alerts.toml'));
  t.is(r.code, 1, r.stdout + r.stderr);
  t.regex(r.stderr, /stream REZOLUS_ALERTS exists with settings rezolus cannot use: subjects is \["wrong\.>"\], rezolus needs "rezolus\.alerts\.>"\. Delete it \(nats stream rm REZOLUS_ALERTS\)/);
  t.regex(r.stdout, /^bucket rezolus_status: unchanged/m, 'what was ready before it is said');
  t.deepEqual((await jsm.streams.info(ALERTS_STREAM)).config.subjects, ['wrong.>']);
});
