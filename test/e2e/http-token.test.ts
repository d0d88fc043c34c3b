/**
 * The agent's snapshot endpoint and hindsight's HTTP trigger: loopback by
 * default, a bearer token when configured (required off loopback).
 */
import test from 'ava';
import { spawn } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { ROOT } from '../../scripts/gen-docs.js';
import { runAgent, type RunningAgent } from '../../src/agent/main.js';
import { loadAgentConfig } from '../../src/config/agent.js';
import { loadHindsightConfig } from '../../src/config/hindsight.js';
import { runHindsight, type RunningHindsight } from '../../src/hindsight/main.js';
import { silentLogger } from '../../src/log/logger.js';
import { SAMPLER_NAMES } from '../../src/samplers/registry.js';
import { NO_KERNEL, PROC, SYS } from '../helpers/fixtures.js';
import { startTestNats, type TestNats } from '../helpers/nats.js';
import { rezolusArgv } from '../helpers/rezolus-cli.js';

const TOKEN = 'test-token-0123456789abcdef';
let server: TestNats;
let agent: RunningAgent;
let hindsight: RunningHindsight;
let dir: string;

test.before(async () => {
  server = await startTestNats();
  dir = mkdtempSync(join(tmpdir(), 'rezolus-http-token-test-'));
  const base = loadAgentConfig(undefined, SAMPLER_NAMES, { host: 'tokenhost', natsUrl: server.url });
  const samplers = Object.fromEntries(SAMPLER_NAMES.map((n) => [n, { enabled: n === 'cpu_usage', intervalMs: 100 }]));
  agent = await runAgent({ ...base, procfs: PROC, sysfs: SYS, kernel: NO_KERNEL, samplers, http: { host: '127.0.0.1', port: 0, token: TOKEN } }, silentLogger());
  await agent.agent.tickOnce();
  const hc = loadHindsightConfig(undefined, { natsUrl: server.url, listen: { host: '127.0.0.1', port: 0 }, output: join(dir, 'h.parquet') });
  hindsight = await runHindsight({ ...hc, token: TOKEN }, silentLogger());
});

test.after.always(async () => {
  await hindsight?.stop();
  await agent?.stop();
  await server?.dispose();
  rmSync(dir, { recursive: true, force: true });
});

test('the agent snapshot needs the bearer token when one is set', async (t) => {
  const url = `http://127.0.0.1:${agent.httpPort ?? 0}/metrics/json`;
  const none = await fetch(url);
  t.is(none.status, 401);
  t.is(none.headers.get('www-authenticate'), 'Bearer');
  t.is((await fetch(url, { headers: { authorization: 'Bearer wrong-token-0123456789ab' } })).status, 401);
  const ok = await fetch(url, { headers: { authorization: `Bearer ${TOKEN}` } });
  t.is(ok.status, 200);
  t.is(((await ok.json()) as { host: string }).host, 'tokenhost');
});

test('hindsight POST /dump and GET /status need the bearer token when one is set', async (t) => {
  t.is((await hindsight.app.inject({ method: 'POST', url: '/dump' })).statusCode, 401);
  t.is((await hindsight.app.inject({ method: 'GET', url: '/status' })).statusCode, 401);
  const status = await hindsight.app.inject({ method: 'GET', url: '/status', headers: { authorization: `Bearer ${TOKEN}` } });
  t.is(status.statusCode, 200);
  // authorised but asking for a path outside the directory: 400, nothing dumped
  const bad = await hindsight.app.inject({ method: 'POST', url: '/dump', headers: { authorization: `Bearer ${TOKEN}` }, payload: { output: '../../x.parquet' } });
  t.is(bad.statusCode, 400);
});

async function cli(args: string[], env: Record<string, string> = {}): Promise<{ code: number | null; stderr: string }> {
  const child = spawn(process.execPath, rezolusArgv(...args), { cwd: ROOT, stdio: ['ignore', 'ignore', 'pipe'], env: { ...process.env, ...env } });
  let stderr = '';
  child.stderr.on('data', (d: Buffer) => (stderr += d.toString()));
  const code = await new Promise<number | null>((r) => child.once('close', r));
  return { code, stderr };
}

test('rezolus hindsight --listen on a non-loopback address without a token exits 2 with one line naming the flag', async (t) => {
  const r = await cli(['hindsight', '--listen', '0.0.0.0:0', '--nats', server.url, '-o', join(dir, 'x.parquet')], { REZOLUS_HTTP_TOKEN: '' });
  t.is(r.code, 2);
  t.regex(r.stderr, /^rezolus hindsight: --listen 0\.0\.0\.0:0 is reachable from other hosts: set REZOLUS_HTTP_TOKEN \(or token in .*hindsight\.toml: \[http\]\), or listen on 127\.0\.0\.1\n$/);
});

test('rezolus hindsight with a non-loopback [http] listen in its config and no token names the file', async (t) => {
  const file = join(dir, 'open-hindsight.toml');
  writeFileSync(file, '[http]\nlisten = "0.0.0.0:0"\n');
  const r = await cli(['hindsight', '--config', file, '--nats', server.url, '-o', join(dir, 'x.parquet')], { REZOLUS_HTTP_TOKEN: '' });
  t.is(r.code, 2);
  t.regex(r.stderr, /^rezolus hindsight: .*open-hindsight\.toml: \[http\] listen 0\.0\.0\.0:0 is reachable from other hosts: set \[http\] token \(or REZOLUS_HTTP_TOKEN\), or listen on 127\.0\.0\.1\n$/);
});

test('rezolus record http://agent sends REZOLUS_HTTP_TOKEN, and says so when it is missing', async (t) => {
  const url = `http://127.0.0.1:${agent.httpPort ?? 0}`;
  const out = join(dir, 'polled.parquet');
  const ok = await cli(['record', '--interval', '500ms', '--duration', '1500ms', '--log-level', 'warn', url, out], { REZOLUS_HTTP_TOKEN: TOKEN });
  t.is(ok.code, 0, ok.stderr);
  const { existsSync } = await import('node:fs');
  t.true(existsSync(out));
  const refused = await cli(['record', '--interval', '500ms', '--duration', '1500ms', '--log-level', 'warn', url, join(dir, 'no.parquet')], { REZOLUS_HTTP_TOKEN: '' });
  t.not(refused.code, 0);
  t.regex(refused.stderr, /answered 401: set REZOLUS_HTTP_TOKEN/);
  t.regex(refused.stderr, /rezolus record: nothing recorded, .* \(last poll: .*answered 401: set REZOLUS_HTTP_TOKEN/, 'the final line gives the cause');
});
