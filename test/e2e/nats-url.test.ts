import test from 'ava';
import { spawn } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { DuckDBInstance } from '@duckdb/node-api';
import { jetstreamManager } from '@nats-io/jetstream';
import { connect } from '@nats-io/transport-node';
import { runAgent } from '../../src/agent/main.js';
import { loadAgentConfig } from '../../src/config/agent.js';
import { silentLogger } from '../../src/log/logger.js';
import { SAMPLER_NAMES } from '../../src/samplers/registry.js';
import { freePort, privateServerUrl, startNatsServer, URL_FILE } from '../../src/up/nats-server.js';
import { NO_KERNEL, PROC, SYS } from '../helpers/fixtures.js';
import { NATS_SERVER_BIN } from '../helpers/nats.js';
import { rezolusArgv } from '../helpers/rezolus-cli.js';
import { until } from '../helpers/until.js';

test('a private server leaves its URL in the data dir while it runs; record started there finds it without --nats', async (t) => {
  const cwd = mkdtempSync(join(tmpdir(), 'rezolus-nats-url-'));
  const dataDir = join(cwd, 'data');
  const server = await startNatsServer({ binary: NATS_SERVER_BIN, port: 0, dataDir });
  try {
    t.is(await privateServerUrl(dataDir), server.url);
    const base = loadAgentConfig(undefined, SAMPLER_NAMES, { host: 'found', natsUrl: server.url });
    const samplers = Object.fromEntries(SAMPLER_NAMES.map((n) => [n, { enabled: n === 'cpu_usage', intervalMs: 100 }]));
    const agent = await runAgent({ ...base, procfs: PROC, sysfs: SYS, kernel: NO_KERNEL, samplers, http: undefined }, silentLogger());
    try {
      const out = join(cwd, 'found.parquet');
      // REZOLUS_NATS_URL unset, no --nats: ./data/nats.url of the current directory (a directory without node_modules)
      const env = { ...process.env };
      delete env.REZOLUS_NATS_URL;
      const child = spawn(process.execPath, rezolusArgv('record', '--host', 'found', '--duration', '2s', '-o', out), { cwd, env, stdio: ['ignore', 'ignore', 'pipe'] });
      let stderr = '';
      child.stderr.on('data', (d: Buffer) => (stderr += d.toString()));
      const code = await new Promise<number | null>((r) => child.once('exit', (c) => r(c)));
      t.is(code, 0, stderr);
      t.regex(stderr, /using the private NATS server of rezolus up/);
      const con = await (await DuckDBInstance.create(':memory:')).connect();
      const [row] = (await con.runAndReadAll(`SELECT count(*) AS n FROM read_parquet('${out}') WHERE host = 'found'`)).getRowObjects();
      t.true(Number(row?.n) >= 1, `${String(row?.n)} rows from the found server`);
    } finally {
      await agent.stop();
    }
  } finally {
    await server.stop();
  }
  await new Promise((r) => setTimeout(r, 100));
  t.false(existsSync(join(dataDir, URL_FILE)), 'the URL file goes with the server');
  t.is(await privateServerUrl(dataDir), undefined);
  rmSync(cwd, { recursive: true, force: true });
});

test('a URL file without its server (a killed run) is not used, even when something answers on that port', async (t) => {
  const dir = mkdtempSync(join(tmpdir(), 'rezolus-nats-url-stale-'));
  const other = await startNatsServer({ binary: NATS_SERVER_BIN, port: 0, dataDir: join(dir, 'other') });
  try {
    const stale = join(dir, 'data');
    mkdirSync(stale);
    writeFileSync(join(stale, URL_FILE), `${other.url}\n`);
    writeFileSync(join(stale, 'nats-server.pid'), `${other.pid}\n`);
    t.is(await privateServerUrl(stale), undefined, 'the server on that port keeps its store elsewhere');
    writeFileSync(join(stale, URL_FILE), `nats://127.0.0.1:${await freePort()}\n`);
    t.is(await privateServerUrl(stale), undefined);
  } finally {
    await other.stop();
    rmSync(dir, { recursive: true, force: true });
  }
});

test('an agent and an exporter started beside a running up, with no NATS given, use its private server, not 4222', async (t) => {
  t.timeout(90_000);
  const cwd = mkdtempSync(join(tmpdir(), 'rezolus-nats-url-services-'));
  const server = await startNatsServer({ binary: NATS_SERVER_BIN, port: 0, dataDir: join(cwd, 'data') });
  const env = { ...process.env };
  delete env.REZOLUS_NATS_URL;
  const children = [
    spawn(process.execPath, rezolusArgv('agent', '--host', 'beside-up', '--procfs', PROC, '--sysfs', SYS, '--log-level', 'info'), { cwd, env, stdio: ['ignore', 'ignore', 'pipe'] }),
    spawn(process.execPath, rezolusArgv('exporter', '--listen', '127.0.0.1:0', '--hosts', 'beside-up', '--log-level', 'info'), { cwd, env, stdio: ['ignore', 'ignore', 'pipe'] }),
  ];
  const logs = ['', ''];
  children.forEach((c, i) => c.stderr.on('data', (d: Buffer) => (logs[i] += d.toString())));
  try {
    const nc = await connect({ servers: server.url });
    const jsm = await jetstreamManager(nc);
    t.true(await until(async () => ((await jsm.streams.info('REZOLUS').catch(() => undefined))?.state.messages ?? 0) > 0, 60_000), `the agent's frames on the private server: ${logs[0]}`);
    await nc.close();
    for (const log of logs) t.regex(log, new RegExp(`using the private NATS server of rezolus up in this directory.*${server.url}|${server.url}.*using the private NATS server`));
    t.true(await until(() => logs[1]?.includes('following frames') === true, 30_000), logs[1]);
    t.false(logs.some((l) => l.includes('127.0.0.1:4222')), 'nothing about 4222');
  } finally {
    for (const c of children) c.kill('SIGTERM');
    await Promise.all(children.map((c) => new Promise((r) => (c.exitCode === null ? c.once('exit', r) : r(undefined)))));
    await server.stop();
    rmSync(cwd, { recursive: true, force: true });
  }
});
