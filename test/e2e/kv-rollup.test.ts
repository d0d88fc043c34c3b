/**
 * Rollup headers on the KV buckets (issue 14, part 3), against a real
 * nats-server running the config `rezolus nats-auth` generates: a per-host
 * user may write its own keys of `rezolus_descriptors` and `rezolus_status`,
 * and a `Nats-Rollup: all` there would purge the whole bucket, every other
 * host's keys with it. The buckets refuse rollups; an old bucket that allows
 * them is fixed by the admin, and a per-host agent that cannot fix it says so
 * once.
 */
import test from 'ava';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { jetstream, jetstreamManager, JetStreamApiError } from '@nats-io/jetstream';
import { Kvm, type KV } from '@nats-io/kv';
import { headers, type NatsConnection } from '@nats-io/nats-core';
import { connectBus } from '../../src/bus/connect.js';
import { bucketStream, bucketStreamConfig, descriptorBucket, statusBucket } from '../../src/bus/kv.js';
import { ensureStream } from '../../src/bus/stream.js';
import { agentInboxPrefix, descriptorKey, DESCRIPTOR_BUCKET, STATUS_BUCKET } from '../../src/bus/subjects.js';
import { loadAgentConfig } from '../../src/config/agent.js';
import { silentLogger } from '../../src/log/logger.js';
import { SAMPLER_NAMES } from '../../src/samplers/registry.js';
import { startAuthNats, type AuthNats } from '../helpers/auth-nats.js';
import type { TestNats } from '../helpers/nats.js';
import { capturingLogger, security } from '../helpers/security.js';

const TTL = { ttlMs: 3_600_000, replicas: 1 };
/** the server's answer to a rollup on a stream that does not allow them (JSStreamRollupFailedErr) */
const ROLLUP_NOT_PERMITTED = 10111;

let server: TestNats;
let dir: string;
let auth: AuthNats;
let admin: NatsConnection;

async function as(name: string, host?: string): Promise<NatsConnection> {
  const inboxPrefix = host === undefined ? '' : agentInboxPrefix(host);
  return connectBus({ url: server.url, name: `test-${name}`, log: silentLogger(), security: security({ user: name, password: auth.password(name), inboxPrefix }) });
}

/** Every key of a bucket with its revision and value, as the admin sees it. */
async function contents(kv: KV): Promise<Record<string, string>> {
  const out: Record<string, string> = {};
  for await (const k of await kv.keys()) {
    const e = await kv.get(k);
    if (e !== null) out[k] = `${e.revision}:${e.string()}`;
  }
  return out;
}

/** Publishes an empty value with `Nats-Rollup: <how>` on a key subject through JetStream: the ack, or the error. */
async function rollup(nc: NatsConnection, subject: string, how: 'all' | 'sub'): Promise<unknown> {
  const h = headers();
  h.set('Nats-Rollup', how);
  return jetstream(nc).publish(subject, new Uint8Array(0), { headers: h }).catch((error: unknown) => error);
}

const HASHES = ['0123456789abcdef', 'fedcba9876543210', '00000000deadbeef'];

/** hosta's agent puts its descriptors and status, hostb's its own. */
async function fill(hosts: readonly string[]): Promise<void> {
  for (const host of hosts) {
    const nc = await as(`agent-${host}`, host);
    const d = await descriptorBucket(nc, TTL);
    const s = await statusBucket(nc, TTL);
    for (const hash of HASHES) await d.put(descriptorKey(host, hash), JSON.stringify({ host, hash }));
    await s.put(host, JSON.stringify({ host, state: 'running' }));
    await nc.close();
  }
}

test.before(async () => {
  dir = mkdtempSync(join(tmpdir(), 'rezolus-kv-rollup-test-'));
  auth = await startAuthNats(dir, ['hosta', 'hostb']);
  server = auth.server;
  admin = auth.admin;
  await ensureStream(await jetstreamManager(admin), loadAgentConfig(undefined, SAMPLER_NAMES).stream, silentLogger());
});

test.after.always(async () => {
  await auth?.dispose();
  if (dir !== undefined) rmSync(dir, { recursive: true, force: true });
});

test.serial('a host cannot purge the buckets with Nats-Rollup on its own keys', async (t) => {
  const descriptors = await descriptorBucket(admin, TTL);
  const status = await statusBucket(admin, TTL);
  await fill(['hosta', 'hostb']);
  const before = { descriptors: await contents(descriptors), status: await contents(status) };
  t.is(Object.keys(before.descriptors).length, 2 * HASHES.length);
  t.is(Object.keys(before.status).length, 2);

  const b = await as('agent-hostb', 'hostb');
  const attempts = [
    [`$KV.${DESCRIPTOR_BUCKET}.${descriptorKey('hostb', HASHES[0] as string)}`, 'all'],
    [`$KV.${DESCRIPTOR_BUCKET}.${descriptorKey('hostb', HASHES[0] as string)}`, 'sub'],
    [`$KV.${STATUS_BUCKET}.hostb`, 'all'],
    [`$KV.${STATUS_BUCKET}.hostb`, 'sub'],
  ] as const;
  for (const [subject, how] of attempts) {
    const answer = await rollup(b, subject, how);
    t.true(answer instanceof JetStreamApiError, `Nats-Rollup: ${how} on ${subject} is refused (got ${JSON.stringify(answer)})`);
    if (answer instanceof JetStreamApiError) t.is(answer.code, ROLLUP_NOT_PERMITTED, answer.message);
  }
  await b.close();
  t.deepEqual(await contents(descriptors), before.descriptors, 'every descriptor key, hosta\'s and hostb\'s, keeps its revision and value');
  t.deepEqual(await contents(status), before.status, 'every status key keeps its revision and value');
});

test.serial('an old bucket that allows rollups: a per-host agent warns once, the admin turns them off', async (t) => {
  const jsm = await jetstreamManager(admin);
  for (const bucket of [DESCRIPTOR_BUCKET, STATUS_BUCKET]) await jsm.streams.delete(bucketStream(bucket));
  // the buckets as rezolus made them before: Kvm.create's defaults, rollups allowed
  const old = await new Kvm(admin).create(DESCRIPTOR_BUCKET, { ttl: TTL.ttlMs, history: 1, replicas: 1 });
  await new Kvm(admin).create(STATUS_BUCKET, { ttl: TTL.ttlMs, history: 1, replicas: 1 });
  t.true((await jsm.streams.info(bucketStream(DESCRIPTOR_BUCKET))).config.allow_rollup_hdrs);
  await fill(['hosta']);

  // hostb's agent opens them (it may not change them): one warning per bucket naming the setting, however often it opens them
  const { log, lines } = capturingLogger();
  const b = await as('agent-hostb', 'hostb');
  for (let i = 0; i < 2; i++) {
    await descriptorBucket(b, TTL, log);
    await statusBucket(b, TTL, log);
  }
  const warnings = lines.filter((l) => l.level === 40);
  t.deepEqual(warnings.map((w) => w.bucket), [DESCRIPTOR_BUCKET, STATUS_BUCKET]);
  for (const w of warnings) t.regex(w.msg, /allow_rollup_hdrs: true\), so any host can empty it/);
  await b.close();

  // the admin's open turns rollups off, keeping what is in the bucket
  const before = await contents(old);
  const fixed = capturingLogger();
  await descriptorBucket(admin, TTL, fixed.log);
  await statusBucket(admin, TTL, fixed.log);
  t.deepEqual(fixed.lines.filter((l) => l.level === 40).map((l) => l.bucket), [DESCRIPTOR_BUCKET, STATUS_BUCKET]);
  for (const bucket of [DESCRIPTOR_BUCKET, STATUS_BUCKET]) t.false((await jsm.streams.info(bucketStream(bucket))).config.allow_rollup_hdrs, bucket);
  const b2 = await as('agent-hostb', 'hostb');
  const answer = await rollup(b2, `$KV.${DESCRIPTOR_BUCKET}.${descriptorKey('hostb', HASHES[0] as string)}`, 'all');
  t.true(answer instanceof JetStreamApiError && answer.code === ROLLUP_NOT_PERMITTED);
  await b2.close();
  t.deepEqual(await contents(old), before);
});

test.serial('the bucket streams are what Kvm.create makes, rollups aside', async (t) => {
  const jsm = await jetstreamManager(admin);
  await new Kvm(admin).create('kv_shape_reference', { ttl: TTL.ttlMs, history: 1, replicas: 1 });
  const reference = (await jsm.streams.info(bucketStream('kv_shape_reference'))).config;
  const ours = (await jsm.streams.add(bucketStreamConfig('kv_shape_ours', TTL))).config;
  const strip = (c: typeof ours): Record<string, unknown> => {
    const { name: _n, subjects: _s, allow_rollup_hdrs: _r, ...rest } = c;
    return rest;
  };
  t.deepEqual(strip(ours), strip(reference));
  t.deepEqual(ours.subjects, ['$KV.kv_shape_ours.>']);
  t.true(reference.allow_rollup_hdrs);
  t.false(ours.allow_rollup_hdrs);
  // and the KV client works on it
  const kv = await new Kvm(admin).create('kv_shape_ours', { ttl: TTL.ttlMs, history: 1, replicas: 1 });
  await kv.put('a.b', 'x');
  t.is((await kv.get('a.b'))?.string(), 'x');
});
