import test from 'ava';
import { DuckDBInstance } from '@duckdb/node-api';
import { unpack } from 'msgpackr';
import { spawn } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { ROOT } from '../../scripts/gen-docs.js';
import { runAgent, type RunningAgent } from '../../src/agent/main.js';
import { loadAgentConfig } from '../../src/config/agent.js';
import { decodeFrame } from '../../src/frame/codec.js';
import { silentLogger } from '../../src/log/logger.js';
import { SAMPLER_NAMES } from '../../src/samplers/registry.js';
import { NO_KERNEL, PROC, SYS } from '../helpers/fixtures.js';
import { startTestNats, type TestNats } from '../helpers/nats.js';
import { rezolusArgv } from '../helpers/rezolus-cli.js';

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
  t.true(rows.length >= 3 && rows.length <= 7, `${rows.length} rows in 2.5 s at 500 ms`);
  for (const row of rows) t.deepEqual(row, { host: 'fixture', user0: 20_230_000_000n, memory_total: 25_276_502_016 });
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
