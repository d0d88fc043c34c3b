/** One `rezolus up` per data directory: a live owner refuses the second, a stale lock is taken over. */
import test from 'ava';
import { spawn } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { processStartTime } from '../../src/files/lock.js';
import { silentLogger } from '../../src/log/logger.js';
import { runUp, UP_LOCK } from '../../src/up/main.js';
import { fixtureUpOptions } from '../helpers/up-options.js';

/** A process that stands for another `up`: alive until killed. */
function standIn(): { pid: number; kill: () => void } {
  const child = spawn('sleep', ['60'], { stdio: 'ignore' });
  return { pid: child.pid as number, kill: () => child.kill('SIGKILL') };
}

test('a data directory whose lock a live process holds is refused with its pid, and nothing is started', async (t) => {
  const dataDir = mkdtempSync(join(tmpdir(), 'rezolus-up-lock-'));
  const owner = standIn();
  try {
    writeFileSync(join(dataDir, UP_LOCK), `${owner.pid} ${processStartTime(owner.pid)}\n`);
    writeFileSync(join(dataDir, 'nats.url'), 'nats://127.0.0.1:4999\n');
    const error = await t.throwsAsync(runUp(fixtureUpOptions(dataDir, 'locked'), silentLogger()));
    t.is(error?.message, `${dataDir} is in use by another rezolus up (pid ${owner.pid}, NATS nats://127.0.0.1:4999): stop that one first, or give this one another --data-dir`);
    t.false(existsSync(join(dataDir, 'nats-server.pid')), 'no server was started');
    t.is(readFileSync(join(dataDir, UP_LOCK), 'utf8').split(' ')[0], String(owner.pid), 'the lock is still the owner\'s');
  } finally {
    owner.kill();
    rmSync(dataDir, { recursive: true, force: true });
  }
});

for (const [what, lock] of [
  ['whose process is gone', () => '999999999 1\n'],
  ['whose pid now belongs to another process (another start time)', () => `${process.ppid} 1\n`],
  ['of an empty file', () => ''],
] as const) {
  test(`a stale lock ${what} is taken over, and released by stop()`, async (t) => {
    const dataDir = mkdtempSync(join(tmpdir(), 'rezolus-up-stale-'));
    try {
      writeFileSync(join(dataDir, UP_LOCK), lock());
      const up = await runUp(fixtureUpOptions(dataDir, 'locked'), silentLogger());
      t.is(readFileSync(join(dataDir, UP_LOCK), 'utf8').trim(), `${process.pid} ${processStartTime(process.pid)}`);
      await up.stop();
      t.false(existsSync(join(dataDir, UP_LOCK)), 'released');
      t.false(existsSync(join(dataDir, 'nats-server.pid')), 'the server\'s pid file went with it');
    } finally {
      rmSync(dataDir, { recursive: true, force: true });
    }
  });
}
