/**
 * `rezolus up` keeps its private nats-server: killed, it is started again on
 * the same store and port and nothing the agent sampled meanwhile is lost;
 * when it cannot be kept up, up is told (and exits non-zero).
 */
import test from 'ava';
import { mkdtempSync, rmSync } from 'node:fs';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { connectBus } from '../../src/bus/connect.js';
import { processAlive } from '../../src/files/lock.js';
import { silentLogger } from '../../src/log/logger.js';
import { runUp } from '../../src/up/main.js';
import { natsAnswers, startNatsServer } from '../../src/up/nats-server.js';
import { superviseNatsServer } from '../../src/up/supervise.js';
import { NATS_SERVER_BIN } from '../helpers/nats.js';
import { auditSeqs, readStoredFrames } from '../helpers/stream.js';
import { until } from '../helpers/until.js';
import { fixtureUpOptions } from '../helpers/up-options.js';

const sleep = (ms: number): Promise<void> => new Promise((r) => setTimeout(r, ms));

test('the private nats-server killed with SIGKILL runs again on the same port and store; every frame is stored once', async (t) => {
  t.timeout(120_000);
  const dataDir = mkdtempSync(join(tmpdir(), 'rezolus-up-supervise-'));
  const up = await runUp(fixtureUpOptions(dataDir, 'supervised', 200), silentLogger());
  let failedWith: string | undefined;
  void up.failed.then((e) => (failedWith = e.message));
  const first = up.server;
  try {
    if (first === undefined) throw new Error('no private server');
    await sleep(2000);
    first.process.kill('SIGKILL');
    t.true(await until(() => up.server !== undefined && up.server.pid !== first.pid, 30_000), 'a new server process');
    const second = up.server as NonNullable<typeof up.server>;
    t.is(second.port, first.port, 'on the same port: the clients know only that URL');
    t.is(second.storeDir, first.storeDir);
    t.true(await natsAnswers('127.0.0.1', second.port), 'it answers');
    const stats = up.agent.publisher.stats;
    const publishedAtRestart = stats.published;
    t.true(await until(() => up.agent.publisher.stats.published > publishedAtRestart + 10 && up.agent.publisher.stats.buffered === 0, 30_000), 'publishing again, buffer drained');
    await up.agent.agent.stop();
    t.true(await up.agent.publisher.flush(10_000));
    const nc = await connectBus({ url: up.natsUrl, name: 'audit', log: silentLogger() });
    const frames = await readStoredFrames(nc);
    await nc.close();
    const instance = frames[0]?.instance ?? -1;
    const audit = auditSeqs(frames, instance);
    t.true(frames.length > 20, `${frames.length} frames stored`);
    t.is(audit.totalMissing, 0, `missing: ${JSON.stringify([...audit.missing].filter(([, v]) => v.length > 0))}`);
    t.is(audit.totalDuplicates, 0, `duplicated: ${JSON.stringify([...audit.duplicates].filter(([, v]) => v.length > 0))}`);
    t.is(up.agent.publisher.stats.dropped, 0);
    t.is(failedWith, undefined, 'up was not told to give up');
  } finally {
    const last = up.server;
    await up.stop();
    t.false(last !== undefined && processAlive(last.pid) && last.process.exitCode === null, 'stop() stopped the restarted server');
    rmSync(dataDir, { recursive: true, force: true });
  }
});

test('a server that keeps dying: up is told why after the allowed restarts, and nothing is left running', async (t) => {
  const dataDir = mkdtempSync(join(tmpdir(), 'rezolus-up-crashloop-'));
  const nats = await superviseNatsServer(startNatsServer, { binary: NATS_SERVER_BIN, port: 0, dataDir }, silentLogger(), { maxRestarts: 2, windowMs: 60_000, backoffMs: 20 });
  let failed: Error | undefined;
  void nats.failed.then((e) => (failed = e));
  const pids: number[] = [];
  try {
    for (let i = 0; i < 3; i++) {
      const s = nats.server;
      pids.push(s.pid);
      s.process.kill('SIGKILL');
      if (i < 2) t.true(await until(() => nats.server.pid !== s.pid, 20_000), `restart ${i + 1}`);
    }
    t.true(await until(() => failed !== undefined, 20_000), 'told to give up');
    t.regex(failed?.message ?? '', /exited 3 times within 60 s \(last: killed by SIGKILL\); giving up\. See .*nats-server\.log/);
    t.is(nats.restarts, 2);
    t.true(pids.every((p) => !processAlive(p) || p === 0), 'no server left running');
  } finally {
    await nats.stop();
    rmSync(dataDir, { recursive: true, force: true });
  }
});

test('a server that cannot start again (its port taken meanwhile): up is told, with the reason', async (t) => {
  const dataDir = mkdtempSync(join(tmpdir(), 'rezolus-up-portgone-'));
  const nats = await superviseNatsServer(startNatsServer, { binary: NATS_SERVER_BIN, port: 0, dataDir, startTimeoutMs: 2000 }, silentLogger(), { maxRestarts: 5, windowMs: 60_000, backoffMs: 200 });
  let failed: Error | undefined;
  void nats.failed.then((e) => (failed = e));
  const squatter = createServer();
  try {
    const { port } = nats.server;
    nats.server.process.kill('SIGKILL');
    await new Promise((r) => nats.server.process.once('exit', r));
    await new Promise<void>((resolve, reject) => {
      squatter.once('error', reject);
      squatter.listen(port, '127.0.0.1', () => resolve());
    });
    t.true(await until(() => failed !== undefined, 40_000), 'told to give up');
    t.regex(failed?.message ?? '', /exited \(killed by SIGKILL\) and could not be started again: nats-server (exited|did not answer)/);
  } finally {
    squatter.close();
    await nats.stop();
    rmSync(dataDir, { recursive: true, force: true });
  }
});
