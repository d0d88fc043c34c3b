import test from 'ava';
import { DuckDBInstance } from '@duckdb/node-api';
import { connect } from '@nats-io/transport-node';
import { spawn } from 'node:child_process';
import { existsSync, mkdtempSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { ROOT } from '../../scripts/gen-docs.js';
import { runAgent, type RunningAgent } from '../../src/agent/main.js';
import { HINDSIGHT_CONTROL_SUBJECT } from '../../src/bus/subjects.js';
import { loadAgentConfig } from '../../src/config/agent.js';
import { loadHindsightConfig } from '../../src/config/hindsight.js';
import { runHindsight, type RunningHindsight } from '../../src/hindsight/main.js';
import { silentLogger } from '../../src/log/logger.js';
import { SAMPLER_NAMES } from '../../src/samplers/registry.js';
import { NO_KERNEL, PROC, SYS } from '../helpers/fixtures.js';
import { startTestNats, type TestNats } from '../helpers/nats.js';
import { rezolusArgv } from '../helpers/rezolus-cli.js';

let server: TestNats;
let agent: RunningAgent;
let hindsight: RunningHindsight;
let dir: string;
let output: string;

test.before(async () => {
  server = await startTestNats();
  dir = mkdtempSync(join(tmpdir(), 'rezolus-hindsight-test-'));
  output = join(dir, 'window.parquet');
  const base = loadAgentConfig(undefined, SAMPLER_NAMES, { host: 'fixture', natsUrl: server.url });
  const on = ['cpu_usage', 'memory_meminfo'];
  const samplers = Object.fromEntries(SAMPLER_NAMES.map((n) => [n, { enabled: on.includes(n), intervalMs: 100 }]));
  agent = await runAgent({ ...base, procfs: PROC, sysfs: SYS, kernel: NO_KERNEL, samplers }, silentLogger());
  const config = loadHindsightConfig(undefined, { natsUrl: server.url, listen: { host: '127.0.0.1', port: 0 }, output, hosts: 'fixture', intervalMs: 250 });
  hindsight = await runHindsight({ ...config, durationMs: 2000 }, silentLogger());
  await new Promise((r) => setTimeout(r, 1500));
});

test.after.always(async () => {
  await hindsight?.stop();
  await agent?.stop();
  await server?.dispose();
  rmSync(dir, { recursive: true, force: true });
});

test.serial('POST /dump writes the last window to the output file and the service keeps running', async (t) => {
  const r = await hindsight.app.inject({ method: 'POST', url: '/dump' });
  t.is(r.statusCode, 200, r.body);
  const body = r.json<{ rows: number; hosts: string[]; trigger: string; frames: number; bytes: number }>();
  t.is(body.trigger, 'http');
  t.is(body.bytes, statSync(output).size, 'the reply gives the size of the file written');
  t.true(body.frames >= body.rows, `${body.frames} frames for ${body.rows} rows (two samplers at 100 ms, rows every 250 ms)`);
  t.deepEqual(body.hosts, ['fixture']);
  const con = await (await DuckDBInstance.create(':memory:')).connect();
  const rows = (await con.runAndReadAll(`SELECT "cpu_usage/user/0" AS user0 FROM read_parquet('${output}')`)).getRowObjects();
  t.is(rows.length, body.rows);
  t.true(rows.length >= 4 && rows.length <= 10, `${rows.length} rows of 250 ms over a 2 s window`);
  t.true(rows.every((row) => row.user0 === 20_230_000_000n));
});

test.serial('triggers during a dump are queued, not lost: they share the next dump', async (t) => {
  const first = hindsight.dump('a');
  const second = hindsight.dump('b');
  const third = hindsight.dump('c');
  const [a, b, c] = await Promise.all([first, second, third]);
  t.is(a.trigger, 'a');
  t.is(b.trigger, 'b', 'a second dump ran after the first');
  t.is(c, b, 'the third trigger shares the queued dump');
  t.true(b.startedAt >= a.startedAt);
});

test.serial('a NATS request on the control subject dumps and replies with the result', async (t) => {
  const nc = await connect({ servers: server.url });
  try {
    const reply = await nc.request(HINDSIGHT_CONTROL_SUBJECT, '', { timeout: 20_000 });
    const r = reply.json<{ ok: boolean; trigger: string; rows: number; output: string }>();
    t.true(r.ok);
    t.is(r.trigger, 'nats');
    t.true(r.rows > 0);
    t.is(r.output, output);
  } finally {
    await nc.close();
  }
});

test.serial('GET /status reports the window the stream holds, per host', async (t) => {
  const r = await hindsight.app.inject({ method: 'GET', url: '/status' });
  const s = r.json<{ window: { max_age_s: number; bytes: number; hosts: Record<string, { messages: number; oldest: string; newest: string }> }; dumps: number }>();
  t.is(s.window.max_age_s, 900);
  t.true(s.window.bytes > 0);
  // a 100 ms agent sends five ticks a message (bundle_interval): two a second
  t.true((s.window.hosts.fixture?.messages ?? 0) > 3, `${s.window.hosts.fixture?.messages} messages`);
  t.true(Date.now() - Date.parse(s.window.hosts.fixture?.newest ?? '') < 5000, 'the newest frame is recent');
  const oldest = Date.parse(s.window.hosts.fixture?.oldest ?? '');
  t.true(oldest < Date.parse(s.window.hosts.fixture?.newest ?? '') - 1000, `the oldest frame (${s.window.hosts.fixture?.oldest}) is older than the newest by more than 1 s`);
  t.true(Date.now() - oldest < 120_000, 'and no older than this test');
  t.true(s.dumps >= 3);
});

test.serial('a duration beyond the stream max_age is refused with how to raise it', async (t) => {
  const config = loadHindsightConfig(undefined, { natsUrl: server.url, listen: { host: '127.0.0.1', port: 0 }, output });
  const err = await t.throwsAsync(runHindsight({ ...config, durationMs: 2 * 3600_000 }, silentLogger()));
  t.regex(err?.message ?? '', /keeps only the last 900 s \(max_age\).*Raise \[stream\] max_age/);
});

test.serial('rezolus hindsight (the CLI service) dumps on SIGHUP', async (t) => {
  const out = join(dir, 'sighup.parquet');
  const child = spawn(process.execPath, rezolusArgv('hindsight', '--nats', server.url, '--listen', '127.0.0.1:0', '--hosts', 'fixture', '-o', out), {
    cwd: ROOT,
    stdio: ['ignore', 'ignore', 'pipe'],
  });
  let stderr = '';
  child.stderr.on('data', (d: Buffer) => (stderr += d.toString()));
  const exited = new Promise<number | null>((r) => child.once('exit', (c) => r(c)));
  try {
    const deadline = Date.now() + 30_000;
    while (!stderr.includes('hindsight ready') && Date.now() < deadline && child.exitCode === null) await new Promise((r) => setTimeout(r, 50));
    t.true(stderr.includes('hindsight ready'), stderr);
    child.kill('SIGHUP');
    while (!existsSync(out) && Date.now() < deadline) await new Promise((r) => setTimeout(r, 100));
    t.true(existsSync(out), `the dump file appeared; stderr: ${stderr.slice(-1500)}`);
    t.is(child.exitCode, null, 'still running after the dump');
  } finally {
    child.kill('SIGTERM');
    t.is(await exited, 0);
  }
});
