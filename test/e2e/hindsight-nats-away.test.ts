/**
 * Hindsight dumps replay over the service's own connection. A dump asked for
 * while NATS is away fails at once (as when each dump opened a connection of
 * its own, which was refused), rather than after a request timeout on the
 * reconnecting connection, with dumps queued behind it waiting in turn; and
 * once NATS is back the service dumps again. (Found by a review.)
 */
import test, { type ExecutionContext } from 'ava';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { jetstreamManager } from '@nats-io/jetstream';
import { connectBus } from '../../src/bus/connect.js';
import { descriptorBucket } from '../../src/bus/kv.js';
import { ensureStream } from '../../src/bus/stream.js';
import { loadHindsightConfig } from '../../src/config/hindsight.js';
import { runHindsight } from '../../src/hindsight/main.js';
import { silentLogger } from '../../src/log/logger.js';
import { startTestNats, type TestNats } from '../helpers/nats.js';

type Run = typeof runHindsight;

async function scenario(t: ExecutionContext, run: Run): Promise<{ firstMs: number; threeMs: number; statuses: number[]; afterBack: number }> {
  let server: TestNats = await startTestNats();
  const dir = mkdtempSync(join(tmpdir(), 'rezolus-hindsight-away-'));
  const log = silentLogger();
  const admin = await connectBus({ url: server.url, name: 'admin', log });
  await ensureStream(await jetstreamManager(admin), { name: 'REZOLUS', maxAgeMs: 600_000, maxBytes: 64 << 20, maxMsgsPerSubject: 10_000, duplicateWindowMs: 60_000, replicas: 1 }, log);
  await descriptorBucket(admin, { ttlMs: 3_600_000, replicas: 1 });
  await admin.close();
  const config = loadHindsightConfig(undefined, { natsUrl: server.url, listen: { host: '127.0.0.1', port: 0 }, output: join(dir, 'w.parquet'), intervalMs: 250 });
  const hs = await run({ ...config, durationMs: 60_000 }, log);
  try {
    // NATS goes away
    server.process.kill('SIGKILL');
    await new Promise((r) => server.process.once('exit', r));
    await new Promise((r) => setTimeout(r, 300));
    let t0 = Date.now();
    const first = await hs.app.inject({ method: 'POST', url: '/dump' });
    const firstMs = Date.now() - t0;
    t.log(`first dump: ${first.statusCode} after ${firstMs} ms: ${first.body.slice(0, 160)}`);
    // three dumps to three files, queued one behind the other
    t0 = Date.now();
    const three = await Promise.all(['a', 'b', 'c'].map((n) => hs.app.inject({ method: 'POST', url: '/dump', payload: { output: `${n}.parquet` } })));
    const threeMs = Date.now() - t0;
    t.log(`three queued dumps: ${three.map((r) => r.statusCode).join(',')} after ${threeMs} ms`);
    // NATS is back: the service dumps again
    server = await startTestNats(server.port, server.dataDir);
    await new Promise((r) => setTimeout(r, 3000));
    const back = await hs.app.inject({ method: 'POST', url: '/dump' });
    t.log(`after NATS is back: ${back.statusCode} ${back.body.slice(0, 160)}`);
    return { firstMs, threeMs, statuses: [first.statusCode, ...three.map((r) => r.statusCode)], afterBack: back.statusCode };
  } finally {
    await hs.stop().catch(() => undefined);
    await server.dispose();
    rmSync(dir, { recursive: true, force: true });
  }
}

test.serial('a dump while NATS is away fails at once, queued ones too, and dumps work again once NATS is back', async (t) => {
  const r = await scenario(t, runHindsight);
  t.deepEqual(r.statuses, [500, 500, 500, 500]);
  // a request timeout is 5 s: three queued ones would take 15 s
  t.true(r.firstMs < 3000, `${r.firstMs} ms`);
  t.true(r.threeMs < 4500, `${r.threeMs} ms`);
  t.is(r.afterBack, 200);
});
