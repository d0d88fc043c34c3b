import test from 'ava';
import { DuckDBInstance } from '@duckdb/node-api';
import { jetstreamManager } from '@nats-io/jetstream';
import { Kvm } from '@nats-io/kv';
import { connect } from '@nats-io/transport-node';
import { unpack } from 'msgpackr';
import pino from 'pino';
import { spawn } from 'node:child_process';
import { existsSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { ROOT } from '../../scripts/gen-docs.js';
import { runAgent, type RunningAgent } from '../../src/agent/main.js';
import { loadAgentConfig } from '../../src/config/agent.js';
import { STATUS_BUCKET } from '../../src/bus/subjects.js';
import { decodeFrame } from '../../src/frame/codec.js';
import { silentLogger } from '../../src/log/logger.js';
import { SAMPLER_NAMES } from '../../src/samplers/registry.js';
import { NO_KERNEL, PROC, SYS } from '../helpers/fixtures.js';
import { startTestNats, type TestNats } from '../helpers/nats.js';
import { rezolusArgv, runRezolus } from '../helpers/rezolus-cli.js';
import { until } from '../helpers/until.js';
import { freePort } from '../../src/up/nats-server.js';

let server: TestNats;
let agent: RunningAgent;
let base: string;
let dir: string;

test.before(async () => {
  server = await startTestNats();
  dir = mkdtempSync(join(tmpdir(), 'rezolus-agent-http-test-'));
  const config = loadAgentConfig(undefined, SAMPLER_NAMES, { host: 'fixture', natsUrl: server.url });
  const on = ['cpu_usage', 'memory_meminfo'];
  const samplers = Object.fromEntries(SAMPLER_NAMES.map((n) => [n, { enabled: on.includes(n), intervalMs: 100 }]));
  agent = await runAgent({ ...config, procfs: PROC, sysfs: SYS, kernel: NO_KERNEL, samplers, http: { host: '127.0.0.1', port: 0 } }, silentLogger());
  base = `http://127.0.0.1:${agent.httpPort ?? 0}`;
  await agent.agent.tickOnce();
});

test.after.always(async () => {
  await agent?.stop();
  await server?.dispose();
  rmSync(dir, { recursive: true, force: true });
});

test('the agent serves its latest frames: msgpack with descriptors, and JSON', async (t) => {
  const bin = await fetch(`${base}/metrics/binary`);
  t.is(bin.headers.get('content-type'), 'application/msgpack');
  const snap = unpack(new Uint8Array(await bin.arrayBuffer())) as { v: number; host: string; frames: Uint8Array[]; descriptors: Record<string, string> };
  t.is(snap.v, 1);
  t.is(snap.host, 'fixture');
  const samplers = snap.frames.map((f) => decodeFrame(f).sampler).sort();
  t.deepEqual(samplers, ['cpu_usage', 'memory_meminfo']);
  for (const f of snap.frames) t.true(decodeFrame(f).descriptor in snap.descriptors, 'every frame comes with its descriptor');
  const json = (await (await fetch(`${base}/metrics/json`)).json()) as { frames: { sampler: string; end_ns: string; values: unknown[] }[] };
  t.deepEqual(json.frames.map((f) => f.sampler).sort(), samplers);
  t.regex(json.frames[0]?.end_ns ?? '', /^\d{19}$/, 'nanoseconds as a decimal string');
  t.is((await fetch(`${base}/nothing`)).status, 404);
});

test('rezolus record http://agent out.parquet (the seeds\' form) polls the agent without NATS', async (t) => {
  const out = join(dir, 'polled.parquet');
  const child = spawn(process.execPath, rezolusArgv('record', '--interval', '500ms', '--duration', '2500ms', '--log-level', 'warn', base, out), {
    cwd: ROOT,
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let stderr = '';
  child.stderr.on('data', (d: Buffer) => (stderr += d.toString()));
  const code = await new Promise<number | null>((r) => child.once('exit', (c) => r(c)));
  t.is(code, 0, stderr);
  const con = await (await DuckDBInstance.create(':memory:')).connect();
  const rows = (await con.runAndReadAll(`SELECT host, "cpu_usage/user/0" AS user0, memory_total FROM read_parquet('${out}')`)).getRowObjects();
  // the rows stamped within the 2.5 s: 5, never more (4 only if the agent skipped a whole row's ticks)
  t.true(rows.length >= 4 && rows.length <= 5, `${rows.length} rows in 2.5 s at 500 ms`);
  for (const row of rows) t.deepEqual(row, { host: 'fixture', user0: 20_230_000_000n, memory_total: 25_276_502_016 });
});

test('record http://agent where nothing answers: says why (refused, with the address) in the log and the last line, and nothing about NATS', async (t) => {
  const port = await freePort();
  const out = join(dir, 'refused.parquet');
  const child = spawn(process.execPath, [...rezolusArgv('record', '--duration', '1500ms', '--log-level', 'info', `http://localhost:${port}`, out)], {
    cwd: ROOT,
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let stderr = '';
  child.stderr.on('data', (d: Buffer) => (stderr += d.toString()));
  const code = await new Promise<number | null>((r) => child.once('exit', (c) => r(c)));
  t.is(code, 1, stderr);
  t.notRegex(stderr, /nats/i, 'an agent URL uses no NATS: none is looked for or named');
  const refused = `connect ECONNREFUSED (127\\.0\\.0\\.1|::1):${port}`;
  t.regex(stderr, new RegExp(`"msg":"polling http://localhost:${port}/metrics/binary failed: ${refused}`), 'the log says why');
  t.regex(stderr, new RegExp(`rezolus record: nothing recorded, .*refused\\.parquet not written: no frames came from http://localhost:${port} \\(last poll: ${refused}`), 'and the last line');
  t.false(existsSync(out));
  // an agent URL with --nats: refused, NATS is not used
  const both = await runRezolus('record', '--nats', 'nats://127.0.0.1:4222', `http://localhost:${port}`, out);
  t.is(both.code, 2);
  t.regex(both.stderr, /an agent URL records that agent live over HTTP, without NATS; it cannot be combined with .*--nats/);
});

test('the instance id is one form wherever people read it: 8 hex digits in the log, the status KV, /metrics/json and the Nats-Msg-Id; the frame carries the number', async (t) => {
  const lines: { msg: string; instance?: string }[] = [];
  const log = pino({ level: 'info' }, { write: (l: string) => void lines.push(JSON.parse(l) as { msg: string; instance?: string }) });
  const config = loadAgentConfig(undefined, SAMPLER_NAMES, { host: 'hexed', natsUrl: server.url });
  const samplers = Object.fromEntries(SAMPLER_NAMES.map((n) => [n, { enabled: n === 'memory_meminfo', intervalMs: 1000 }]));
  const own = await runAgent({ ...config, procfs: PROC, sysfs: SYS, kernel: NO_KERNEL, samplers, http: { host: '127.0.0.1', port: 0 } }, log);
  const nc = await connect({ servers: server.url });
  try {
    await own.agent.tickOnce();
    const url = `http://127.0.0.1:${own.httpPort ?? 0}`;
    const wire = decodeFrame((unpack(new Uint8Array(await (await fetch(`${url}/metrics/binary`)).arrayBuffer())) as { frames: Uint8Array[] }).frames[0] as Uint8Array).instance;
    t.is(typeof wire, 'number', 'the frame\'s i is the number');
    const hex = wire.toString(16).padStart(8, '0');
    const json = (await (await fetch(`${url}/metrics/json`)).json()) as { frames: { instance: unknown }[] };
    t.is(json.frames[0]?.instance, hex, '/metrics/json');
    t.is(lines.find((l) => l.msg === 'agent running')?.instance, hex, 'the log');
    t.true(await until(async () => (await (await new Kvm(nc).open(STATUS_BUCKET)).get('hexed')) !== null, 20_000));
    t.is((await (await new Kvm(nc).open(STATUS_BUCKET)).get('hexed'))?.json<{ instance: string }>().instance, hex, 'the status');
    const stored = await (await jetstreamManager(nc)).streams.getMessage('REZOLUS', { last_by_subj: 'rezolus.metrics.hexed._bundle' });
    t.true(stored?.header.get('Nats-Msg-Id').startsWith(`hexed._bundle.${hex}.`), 'the Nats-Msg-Id');
  } finally {
    await nc.close();
    await own.stop();
  }
});

test('a taken HTTP port does not stop the agent', async (t) => {
  const config = loadAgentConfig(undefined, SAMPLER_NAMES, { host: 'second', natsUrl: server.url });
  const samplers = Object.fromEntries(SAMPLER_NAMES.map((n) => [n, { enabled: n === 'cpu_usage', intervalMs: 1000 }]));
  const port = agent.httpPort ?? 0;
  const second = await runAgent({ ...config, procfs: PROC, sysfs: SYS, kernel: NO_KERNEL, samplers, http: { host: '127.0.0.1', port } }, silentLogger());
  try {
    t.is(second.httpPort, undefined);
    t.deepEqual(second.agent.status().filter((s) => s.status.state === 'active').map((s) => s.name), ['cpu_usage']);
  } finally {
    await second.stop();
  }
});
