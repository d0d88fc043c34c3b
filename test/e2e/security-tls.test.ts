/**
 * TLS to NATS with a CA and certificates this test makes with openssl: the
 * server's certificate is trusted through [nats] tls_ca, refused in one line
 * without it, and a server that demands client certificates accepts
 * tls_cert/tls_key.
 */
import test from 'ava';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { runAgent } from '../../src/agent/main.js';
import { connectBus } from '../../src/bus/connect.js';
import { loadAgentConfig } from '../../src/config/agent.js';
import { RezolusError } from '../../src/errors.js';
import { silentLogger } from '../../src/log/logger.js';
import { SAMPLER_NAMES } from '../../src/samplers/registry.js';
import { NO_KERNEL, PROC, SYS } from '../helpers/fixtures.js';
import { startTestNats, type TestNats } from '../helpers/nats.js';
import { makeCerts, security, type TestCerts } from '../helpers/security.js';
import { until } from '../helpers/until.js';

let dir: string;
let certs: TestCerts;
let tlsServer: TestNats;
let verifyServer: TestNats;

test.before(async () => {
  dir = mkdtempSync(join(tmpdir(), 'rezolus-tls-test-'));
  certs = makeCerts(dir);
  const plain = join(dir, 'tls.conf');
  writeFileSync(plain, `tls { cert_file: ${JSON.stringify(certs.serverCert)}, key_file: ${JSON.stringify(certs.serverKey)}, timeout: 2 }\n`);
  const verify = join(dir, 'verify.conf');
  writeFileSync(verify, `tls { cert_file: ${JSON.stringify(certs.serverCert)}, key_file: ${JSON.stringify(certs.serverKey)}, ca_file: ${JSON.stringify(certs.ca)}, verify: true, timeout: 2 }\n`);
  tlsServer = await startTestNats(0, undefined, plain);
  verifyServer = await startTestNats(0, undefined, verify);
});

test.after.always(async () => {
  await tlsServer?.dispose();
  await verifyServer?.dispose();
  rmSync(dir, { recursive: true, force: true });
});

test('with tls_ca the server certificate is trusted, and an agent publishes over TLS', async (t) => {
  const nc = await connectBus({ url: tlsServer.url, name: 'test', log: silentLogger(), security: security({ tlsCa: certs.ca }) });
  t.is(nc.info?.tls_required, true);
  await nc.close();
  const base = loadAgentConfig(undefined, SAMPLER_NAMES, { host: 'tlshost', natsUrl: `tls://127.0.0.1:${tlsServer.port}` });
  const samplers = Object.fromEntries(SAMPLER_NAMES.map((n) => [n, { enabled: n === 'cpu_usage', intervalMs: 100 }]));
  const agent = await runAgent({ ...base, procfs: PROC, sysfs: SYS, kernel: NO_KERNEL, samplers, http: undefined, nats: security({ tlsCa: certs.ca }) }, silentLogger());
  try {
    // frames go out in bundles of up to [stream] bundle_interval: wait for five acked, not for a fixed time
    const five = await until(() => agent.publisher.stats.published >= 5, 20_000);
    t.true(five, `published ${agent.publisher.stats.published}`);
  } finally {
    await agent.stop();
  }
});

test('without tls_ca the connection fails at once, in one line that names tls_ca', async (t) => {
  const started = Date.now();
  // an agent waits for a server that is not up yet, but never for one it cannot trust
  const err = await t.throwsAsync(connectBus({ url: tlsServer.url, name: 'test', log: silentLogger(), waitOnFirstConnect: true }));
  t.true(err instanceof RezolusError);
  t.regex(err?.message ?? '', /^cannot connect to NATS at nats:\/\/127\.0\.0\.1:\d+: the server's TLS certificate is not trusted \(.*unable to verify the first certificate\): set \[nats\] tls_ca/);
  t.false((err?.message ?? '').includes('\n'));
  t.true(Date.now() - started < 10_000);
});

test('a server that verifies clients accepts tls_cert and tls_key', async (t) => {
  const nc = await connectBus({
    url: verifyServer.url, name: 'test', log: silentLogger(),
    security: security({ tlsCa: certs.ca, tlsCert: certs.clientCert, tlsKey: certs.clientKey }),
  });
  t.is(nc.info?.tls_verify, true);
  const sub = nc.subscribe('t.x', { max: 1 });
  nc.publish('t.x', 'hello');
  for await (const m of sub) t.is(m.string(), 'hello');
  await nc.close();
});

test('tls_ca for a server without TLS is refused in one line', async (t) => {
  const plain = await startTestNats();
  try {
    const err = await t.throwsAsync(connectBus({ url: plain.url, name: 'test', log: silentLogger(), security: security({ tlsCa: certs.ca }) }));
    t.regex(err?.message ?? '', /server does not support 'tls'.*remove \[nats\] tls_ca/);
  } finally {
    await plain.dispose();
  }
});
