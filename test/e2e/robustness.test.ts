import test from 'ava';
import { spawn } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { connect } from '@nats-io/transport-node';
import { Kvm } from '@nats-io/kv';
import { runAgent } from '../../src/agent/main.js';
import { loadAgentConfig } from '../../src/config/agent.js';
import { loadExporterConfig } from '../../src/config/exporter.js';
import { hostsProblem, parseHosts, parseNatsUrls } from '../../src/config/units.js';
import { RezolusError } from '../../src/errors.js';
import { runExporter } from '../../src/exporter/main.js';
import { silentLogger } from '../../src/log/logger.js';
import { SAMPLER_NAMES } from '../../src/samplers/registry.js';
import { startNatsServer } from '../../src/up/nats-server.js';
import { NATS_SERVER_BIN, startTestNats } from '../helpers/nats.js';
import { rezolusArgv } from '../helpers/rezolus-cli.js';

test('an exporter whose port is taken fails at once with a one-line error naming the address', async (t) => {
  const blocker = createServer();
  await new Promise<void>((r) => blocker.listen(0, '127.0.0.1', r));
  const port = (blocker.address() as { port: number }).port;
  // nothing answers on port 1: the exporter must fail on its port before it tries NATS
  const config = loadExporterConfig(undefined, { natsUrl: 'nats://127.0.0.1:1', listen: { host: '127.0.0.1', port } });
  const error = await t.throwsAsync(runExporter(config, silentLogger()), { instanceOf: RezolusError });
  t.is(error.message, `cannot listen on 127.0.0.1:${port} (EADDRINUSE); choose another with --listen`);
  blocker.close();
});

test('host selections and NATS URLs are checked', (t) => {
  t.deepEqual(parseHosts('*'), ['*']);
  t.deepEqual(parseHosts('web01.example.com, db-7'), ['web01.example.com', 'db-7']);
  t.deepEqual(parseHosts('web-*, db1'), ['web-*', 'db1'], 'globs inside names');
  for (const bad of ['', '>', 'a,,b', '*,a', 'a b', 'web.>', 'web-0?', 'web-[0-9]*', 'web-*,', 'web-{1,2}']) t.is(parseHosts(bad), undefined, bad);
  // each refusal names what is wrong
  const said = (text: string): string | undefined => hostsProblem(text);
  t.regex(said('') ?? '', /empty/);
  t.regex(said('web-*,') ?? '', /empty entry/);
  t.regex(said('*,web-*') ?? '', /cannot be listed with other entries/);
  t.regex(said('web-01 db-01') ?? '', /has a space/);
  t.regex(said('web-0?') ?? '', /"\?": "\*" is the only wildcard/);
  t.regex(said('web-[0-9]*') ?? '', /"\[": "\*" is the only wildcard/);
  t.is(said('web-*,db-01.example.com'), undefined);
  t.deepEqual(parseNatsUrls('nats://a:4222,tls://b:4223'), ['nats://a:4222', 'tls://b:4223']);
  t.deepEqual(parseNatsUrls('127.0.0.1:4222'), ['127.0.0.1:4222']);
  for (const bad of ['', 'foo:bar', 'nats://a:1,,b', 'nats://a b']) t.is(parseNatsUrls(bad), undefined, bad);
});

test('a clean stop marks the agent stopped in rezolus_status; a missing procfs root is refused', async (t) => {
  const server = await startTestNats();
  try {
    const base = loadAgentConfig(undefined, SAMPLER_NAMES, { host: 'stopper', natsUrl: server.url });
    await t.throwsAsync(runAgent({ ...base, procfs: '/nonexistent-procfs' }, silentLogger()), {
      message: /procfs root \/nonexistent-procfs does not exist/,
    });
    const agent = await runAgent(base, silentLogger());
    await agent.agent.tickOnce();
    await agent.stop();
    const nc = await connect({ servers: server.url });
    const doc = (await (await new Kvm(nc).open('rezolus_status')).get('stopper'))?.json<{ state: string; instance: string }>();
    await nc.close();
    t.is(doc?.state, 'stopped');
    t.regex(doc?.instance ?? '', /^[0-9a-f]{8}$/);
  } finally {
    await server.dispose();
  }
});

test('a nats-server left running on a data dir by a killed run is stopped before a new one starts', async (t) => {
  const dataDir = mkdtempSync(join(tmpdir(), 'rezolus-nats-test-stale-'));
  try {
    // a "killed run": its server keeps running after its parent is gone
    const first = await startNatsServer({ binary: NATS_SERVER_BIN, port: 0, dataDir });
    const stalePid = Number(readFileSync(join(dataDir, 'nats-server.pid'), 'utf8'));
    t.is(stalePid, first.pid);
    const second = await startNatsServer({ binary: NATS_SERVER_BIN, port: 0, dataDir });
    t.false(existsSync(`/proc/${stalePid}`) && !readFileSync(`/proc/${stalePid}/stat`, 'utf8').includes(') Z'), 'stale server stopped');
    t.true(existsSync(join(dataDir, 'jetstream')), 'store directly under the data dir');
    await second.stop();
    await first.stop();
  } finally {
    rmSync(dataDir, { recursive: true, force: true });
  }
});

test('rezolus agent with a bad --nats exits 2 without connecting anywhere', async (t) => {
  const child = spawn(process.execPath, rezolusArgv('agent', '--nats', ''), { stdio: ['ignore', 'ignore', 'pipe'] });
  let stderr = '';
  child.stderr.on('data', (d: Buffer) => (stderr += d.toString()));
  const code = await new Promise((r) => child.once('close', r));
  t.is(code, 2);
  t.regex(stderr, /--nats must be a NATS URL/);
});
