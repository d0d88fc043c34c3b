/**
 * Host names that differ only in spelling (issue 14, part 5), against a real
 * nats-server with the users `rezolus nats-auth` makes: the user of host h5
 * may publish only under `rezolus.metrics.h5.>`, but a frame there naming
 * `H5` passed the subject check (which compared tokens) and was keyed,
 * labelled and recorded as another host `H5`, one its publisher invented.
 * The host a consumer uses is the one the subject proves: every other
 * spelling is wrong_subject at the exporter, a live and a replaying
 * recorder and a hindsight snapshot, and no such host appears in what they
 * serve or write.
 */
import test from 'ava';
import { spawn } from 'node:child_process';
import { jetstream } from '@nats-io/jetstream';
import type { NatsConnection } from '@nats-io/nats-core';
import { existsSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { connectBus } from '../../src/bus/connect.js';
import { descriptorBucket } from '../../src/bus/kv.js';
import { agentInboxPrefix, descriptorKey, hostToken, metricsSubject } from '../../src/bus/subjects.js';
import { emptySkipStats, totalSkipped } from '../../src/sources/checks.js';
import { loadAgentConfig } from '../../src/config/agent.js';
import { loadExporterConfig } from '../../src/config/exporter.js';
import { loadHindsightConfig } from '../../src/config/hindsight.js';
import type { NatsSecurity } from '../../src/config/nats.js';
import { runExporter, type RunningExporter } from '../../src/exporter/main.js';
import { encodeFrame } from '../../src/frame/codec.js';
import { runHindsight, type RunningHindsight } from '../../src/hindsight/main.js';
import { silentLogger } from '../../src/log/logger.js';
import { runRecord, type RunningRecord } from '../../src/record/main.js';
import { SAMPLER_NAMES } from '../../src/samplers/registry.js';
import { ROOT } from '../../scripts/gen-docs.js';
import { Duck } from '../helpers/duckdb.js';
import { goodValues, HOSTILE_DESCRIPTORS, TARGET_HASH, TARGET_SAMPLER } from '../helpers/hostile-frames.js';
import { startAuthNats, type AuthNats } from '../helpers/auth-nats.js';
import type { TestNats } from '../helpers/nats.js';
import { security } from '../helpers/security.js';
import { until } from '../helpers/until.js';
import { rezolusArgv } from '../helpers/rezolus-cli.js';

/** Each host as configured, and the other spellings of its token that its user sends. */
const HOSTS = [
  { name: 'h5', spellings: ['H5'] },
  {
    name: 'Web-1.example.com',
    spellings: ['Web-1.example.com', 'web-1.example.com', 'WEB-1_EXAMPLE_COM', 'Web-1.Example.Com', 'web-1 example com', 'web-1/example_com'],
  },
] as const;
const TOKENS = HOSTS.map((h) => hostToken(h.name)).sort();
/** a host whose user sends nothing but frames naming `H6` */
const SPOOF_ONLY = 'h6';
const GOOD_TICKS = 20;
const TICK_NS = 100_000_000n;
const RUN = 0x600d_0005;

let server: TestNats;
let dir: string;
let auth: AuthNats;
let exporter: RunningExporter;
let recorder: RunningRecord;
let hindsight: RunningHindsight;
const publishers: NatsConnection[] = [];

const user = (name: string, inboxPrefix = ''): NatsSecurity => security({ user: name, password: auth.password(name), inboxPrefix });

test.before(async () => {
  dir = mkdtempSync(join(tmpdir(), 'rezolus-host-spelling-test-'));
  auth = await startAuthNats(dir, [...HOSTS.map((h) => h.name), SPOOF_ONLY]);
  server = auth.server;
  await auth.provision();
  const defaults = loadAgentConfig(undefined, SAMPLER_NAMES);
  // each host's user puts its descriptors where a frame naming any spelling of its host would find them
  // in the order of HOSTS, then the spoofing host: publishers[i] is the user of HOSTS[i]
  for (const token of [...HOSTS.map((h) => hostToken(h.name)), SPOOF_ONLY]) {
    const nc = await connectBus({ url: server.url, name: `test-${token}`, log: silentLogger(), security: user(`agent-${token}`, agentInboxPrefix(token)) });
    publishers.push(nc);
    const kv = await descriptorBucket(nc, { ttlMs: defaults.descriptorTtlMs, replicas: 1 });
    for (const [hash, json] of HOSTILE_DESCRIPTORS) await kv.put(descriptorKey(token, hash), json);
  }
  const config = loadExporterConfig(undefined, { natsUrl: server.url, listen: { host: '127.0.0.1', port: 0 }, hosts: '*' });
  exporter = await runExporter({ ...config, intervalMs: 1000, nats: user('rezolus-exporter') }, silentLogger());
  await exporter.following;
  recorder = await runRecord({ natsUrl: server.url, nats: user('rezolus-recorder'), hosts: '*', intervalMs: 100, durationMs: undefined, output: join(dir, 'live.parquet') }, silentLogger());
  const h = loadHindsightConfig(undefined, { natsUrl: server.url, listen: { host: '127.0.0.1', port: 0 }, output: join(dir, 'hindsight.parquet'), hosts: '*', intervalMs: 100 });
  hindsight = await runHindsight({ ...h, durationMs: 5 * 60_000, nats: user('rezolus-hindsight') }, silentLogger());
});

test.after.always(async () => {
  await recorder?.abort().catch(() => undefined);
  await hindsight?.stop().catch(() => undefined);
  await exporter?.stop().catch(() => undefined);
  for (const nc of publishers) await nc.close().catch(() => undefined);
  await auth?.dispose();
  if (dir !== undefined) rmSync(dir, { recursive: true, force: true });
});

test.serial('a frame naming its host in another spelling of the subject token is wrong_subject everywhere', async (t) => {
  const baseNs = (BigInt(Date.now()) * 1_000_000n / TICK_NS) * TICK_NS - BigInt(GOOD_TICKS + 5) * TICK_NS;
  let good = 0;
  let impostors = 0;
  // through JetStream, as the agent publishes (each stored and acked)
  const send = async (nc: NatsConnection, token: string, host: string, instance: number, tick: number): Promise<void> => {
    const endNs = baseNs + BigInt(tick) * TICK_NS;
    const header = { host, sampler: TARGET_SAMPLER, instance, seq: tick, beginNs: endNs - 1_000_000n, endNs, descriptor: TARGET_HASH };
    await jetstream(nc).publish(metricsSubject(token, TARGET_SAMPLER), encodeFrame(header, goodValues(tick)));
  };
  // every tick: the host's own frame under its token, then one frame of each other spelling (each its own run, seq ahead)
  for (let tick = 1; tick <= GOOD_TICKS; tick++) {
    for (const [i, h] of HOSTS.entries()) {
      const nc = publishers[i] as NatsConnection;
      const token = hostToken(h.name);
      await send(nc, token, token, RUN, tick);
      good++;
      for (const [j, spelling] of h.spellings.entries()) {
        t.is(hostToken(spelling), token);
        await send(nc, token, spelling, 0xbad0_0000 + j, 1000 + tick);
        impostors++;
      }
    }
  }
  const want = { ...emptySkipStats(), wrongSubject: impostors };
  const handled = (): number => exporter.state.stats.ingested + totalSkipped(exporter.skipped);
  t.true(await until(() => handled() === good + impostors, 20_000), `the exporter handled ${handled()} of ${good + impostors}`);
  const body = (await exporter.app.inject({ method: 'GET', url: '/metrics' })).body;
  const served = [...new Set([...body.matchAll(/\bhost="([^"]*)"/g)].map((m) => m[1]))].sort();
  t.log(`exporter: ${exporter.state.stats.ingested} frames used, skipped ${JSON.stringify(exporter.skipped)}, hosts served ${JSON.stringify(served)}`);
  t.deepEqual(exporter.skipped, want, 'the exporter counts every other spelling as wrong_subject');
  t.is(exporter.state.stats.ingested, good);
  t.deepEqual(served, TOKENS, 'the exporter serves the subject tokens and no other host');
  t.true(body.includes(`rezolus_exporter_frames_skipped_total{reason="wrong_subject"} ${impostors}\n`));

  // the live recorder
  t.true(await until(() => recorder.progress().frames === good, 20_000), `the recorder took ${recorder.progress().frames} of ${good}`);
  await new Promise((r) => setTimeout(r, 300)); // the impostors are counted as they arrive; let the last ones in
  recorder.stop();
  const live = await recorder.done;
  t.deepEqual(live.skipped, want, 'the live recorder counts the same');
  t.deepEqual([...live.hosts], TOKENS);
  const duck = await Duck.open();
  const hostsIn = async (file: string): Promise<string[]> =>
    (await duck.rows(`SELECT DISTINCT host FROM read_parquet('${file}') ORDER BY host`)).map((r) => String(r.host));
  t.deepEqual(await hostsIn(join(dir, 'live.parquet')), TOKENS, 'the recording\'s host column');
  t.deepEqual(JSON.parse((await duck.fileMeta(join(dir, 'live.parquet'))).hosts ?? 'null'), TOKENS, 'the recording\'s hosts metadata');

  // a recorder replaying the window from the stream
  const replay = await runRecord({
    natsUrl: server.url, nats: user('rezolus-recorder'), hosts: '*', intervalMs: 100, durationMs: undefined, output: join(dir, 'replay.parquet'),
    replay: { stream: 'REZOLUS', sinceNs: baseNs - 60_000_000_000n, untilNs: BigInt(Date.now()) * 1_000_000n },
  }, silentLogger());
  const replayed = await replay.done;
  t.deepEqual(replayed.skipped, want, 'the replaying recorder counts the same');
  t.deepEqual([...replayed.hosts], TOKENS);

  // a hindsight snapshot of the window
  const dump = await hindsight.dump('test');
  t.deepEqual(dump.skipped, want, 'hindsight counts the same');
  t.deepEqual([...dump.hosts], TOKENS);
  t.is(dump.rows, good);
  t.deepEqual(await hostsIn(dump.output), TOKENS, 'the snapshot\'s host column');
  t.log(`${good} frames under the subject token used; ${impostors} frames naming ${HOSTS.flatMap((h) => h.spellings).join(', ')} counted wrong_subject by each consumer`);
});

test.serial('rezolus record of a host whose every frame names another spelling: nothing recorded, and it says how many it skipped and why', async (t) => {
  const nc = publishers[publishers.length - 1] as NatsConnection;
  const since = new Date(Date.now() - 1000).toISOString();
  for (let seq = 1; seq <= 3; seq++) {
    const endNs = BigInt(Date.now()) * 1_000_000n;
    const header = { host: 'H6', sampler: TARGET_SAMPLER, instance: 0xbad0_0006, seq, beginNs: endNs - 1_000_000n, endNs, descriptor: TARGET_HASH };
    await jetstream(nc).publish(metricsSubject(SPOOF_ONLY, TARGET_SAMPLER), encodeFrame(header, goodValues(seq)));
  }
  const output = join(dir, 'h6.parquet');
  const child = spawn(process.execPath, rezolusArgv('record', '--nats', server.url, '--host', SPOOF_ONLY, '--since', since, '-o', output), {
    cwd: ROOT,
    stdio: ['ignore', 'ignore', 'pipe'],
    env: { ...process.env, REZOLUS_NATS_USER: 'rezolus-recorder', REZOLUS_NATS_PASSWORD: auth.password('rezolus-recorder') },
  });
  let stderr = '';
  child.stderr.on('data', (d: Buffer) => (stderr += d.toString()));
  const code = await new Promise<number | null>((r) => child.once('close', r));
  t.is(code, 1, stderr);
  t.regex(stderr, /rezolus record: nothing recorded, .*h6\.parquet not written: no frames of hosts "h6" .*; 3 skipped \(wrong_subject 3\)\n/);
  t.false(existsSync(output));
});
