/**
 * A port picked for the private nats-server can be taken before the server
 * binds it (another process, or an outgoing connection's ephemeral port):
 * startNatsServer then picks another; a port the caller named is never changed.
 */
import test from 'ava';
import { mkdtempSync, rmSync } from 'node:fs';
import { createServer, type Server } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { spawnSync } from 'node:child_process';
import { pathToFileURL } from 'node:url';
import { freePort, natsAnswers, portTakenIn, startNatsServer } from '../../src/up/nats-server.js';
import { NATS_SERVER_BIN } from '../helpers/nats.js';
import { ROOT, rezolusArgv } from '../helpers/rezolus-cli.js';
import { until } from '../helpers/until.js';

async function squat(): Promise<{ server: Server; port: number }> {
  const server = createServer();
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  return { server, port: (server.address() as { port: number }).port };
}

test('portTakenIn knows nats-server\'s fatal line for a taken port, and nothing else', (t) => {
  t.true(portTakenIn('[4978] 2026/11/29 11:26:46.253756 [FTL] Error listening on port: 127.0.0.1:34177, "listen tcp 127.0.0.1:34177: bind: address already in use"'));
  t.false(portTakenIn('[4978] [FTL] Error listening on port: 127.0.0.1:80, "listen tcp 127.0.0.1:80: bind: permission denied"'));
  t.false(portTakenIn('[INF] Server is ready'));
});

test('a picked port taken before the server binds: the server starts on the next one picked', async (t) => {
  const dataDir = mkdtempSync(join(tmpdir(), 'rezolus-port-race-'));
  const taken = [await squat(), await squat()];
  const picks = [taken[0]?.port as number, taken[1]?.port as number];
  let picked = 0;
  const pickPort = async (): Promise<number> => picks[picked++] ?? freePort();
  try {
    const server = await startNatsServer({ binary: NATS_SERVER_BIN, port: 0, dataDir, pickPort });
    try {
      t.is(picked, 3, 'two taken ports, then a free one');
      t.false(picks.includes(server.port));
      t.true(await natsAnswers('127.0.0.1', server.port));
      t.is(server.url, `nats://127.0.0.1:${server.port}`);
    } finally {
      await server.stop();
    }
  } finally {
    for (const s of taken) s.server.close();
    rmSync(dataDir, { recursive: true, force: true });
  }
});

test('a named port that is taken is an error naming the log, not another port', async (t) => {
  const dataDir = mkdtempSync(join(tmpdir(), 'rezolus-port-named-'));
  const { server: squatter, port } = await squat();
  try {
    const error = await t.throwsAsync(startNatsServer({ binary: NATS_SERVER_BIN, port, dataDir }));
    t.regex(error?.message ?? '', /nats-server exited \(1\) at start; see .*nats-server\.log/);
  } finally {
    squatter.close();
    rmSync(dataDir, { recursive: true, force: true });
  }
});

test('when every pick is taken it gives up after a few tries with the server\'s own error', async (t) => {
  const dataDir = mkdtempSync(join(tmpdir(), 'rezolus-port-all-taken-'));
  const { server: squatter, port } = await squat();
  let picked = 0;
  try {
    const error = await t.throwsAsync(startNatsServer({ binary: NATS_SERVER_BIN, port: 0, dataDir, pickPort: async () => {
      picked++;
      return port;
    } }));
    t.is(picked, 5);
    t.regex(error?.message ?? '', /nats-server exited \(1\) at start/);
  } finally {
    squatter.close();
    rmSync(dataDir, { recursive: true, force: true });
  }
});

// serial: ava runs serial tests before the others, so no other test's server holds a listener meanwhile
test.serial('a dozen servers at once add one exit listener, removed when the last stops', async (t) => {
  const dirs = Array.from({ length: 12 }, (_, i) => mkdtempSync(join(tmpdir(), `rezolus-exit-${i}-`)));
  t.teardown(() => {
    for (const d of dirs) rmSync(d, { recursive: true, force: true });
  });
  const before = process.listenerCount('exit');
  const servers = await Promise.all(dirs.map((dataDir) => startNatsServer({ binary: NATS_SERVER_BIN, port: 0, dataDir })));
  try {
    t.is(process.listenerCount('exit'), before + 1);
  } finally {
    await Promise.all(servers.map((s) => s.stop()));
  }
  t.is(process.listenerCount('exit'), before);
});

test('servers left running are killed when their process exits', async (t) => {
  rezolusArgv(); // builds dist/ when src/ is newer
  const dirs = [0, 1, 2].map((i) => mkdtempSync(join(tmpdir(), `rezolus-orphan-${i}-`)));
  t.teardown(() => {
    for (const d of dirs) rmSync(d, { recursive: true, force: true });
  });
  const module = pathToFileURL(join(ROOT, 'dist', 'up', 'nats-server.js')).href;
  const script = `const { startNatsServer } = await import(${JSON.stringify(module)});
const servers = await Promise.all(${JSON.stringify(dirs)}.map((dataDir) => startNatsServer({ binary: ${JSON.stringify(NATS_SERVER_BIN)}, port: 0, dataDir })));
process.stdout.write(servers.map((s) => s.process.pid).join(' '));
process.exit(0);`;
  const r = spawnSync(process.execPath, ['--input-type=module', '-e', script], { encoding: 'utf8', timeout: 60_000 });
  t.is(r.status, 0, r.stderr);
  const pids = r.stdout.trim().split(' ').map(Number);
  t.is(pids.length, 3);
  const alive = (pid: number): boolean => {
    try {
      process.kill(pid, 0);
      return true;
    } catch {
      return false;
    }
  };
  t.true(await until(() => pids.every((p) => !alive(p)), 10_000), `servers ${pids.join(', ')} outlived their process`);
});
