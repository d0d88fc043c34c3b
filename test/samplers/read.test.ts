import test from 'ava';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { readText } from '../../src/samplers/read.js';

test('readText re-reads a kept-open file from the start and sees new content', async (t) => {
  const dir = mkdtempSync(join(tmpdir(), 'rezolus-read-'));
  writeFileSync(join(dir, 'f'), 'first version, longer\n');
  t.is(await readText(dir, 'f'), 'first version, longer\n');
  writeFileSync(join(dir, 'f'), 'second\n');
  t.is(await readText(dir, 'f'), 'second\n', 'no stale tail from the longer first read');
  rmSync(dir, { recursive: true });
});

test('readText reads files larger than its buffer whole', async (t) => {
  const dir = mkdtempSync(join(tmpdir(), 'rezolus-read-'));
  const big = 'x'.repeat(200_000) + '\nend\n';
  writeFileSync(join(dir, 'big'), big);
  t.is(await readText(dir, 'big'), big);
  rmSync(dir, { recursive: true });
});

test('readText reads live procfs repeatedly with fresh content', async (t) => {
  const a = await readText('/proc', 'self/stat');
  await new Promise((r) => setTimeout(r, 20));
  const b = await readText('/proc', 'uptime');
  const c = await readText('/proc', 'uptime');
  t.regex(a, /^\d+ \(/);
  t.regex(b, /^\d+\.\d+ \d+\.\d+\n$/);
  t.regex(c, /^\d+\.\d+ \d+\.\d+\n$/);
});

test('readText throws ENOENT for a missing file', async (t) => {
  await t.throwsAsync(readText('/nonexistent-root', 'x'), { code: 'ENOENT' });
});

test('reads of one procfs file in one synchronous run share one read; the next run reads it afresh', async (t) => {
  // /proc/self/schedstat: the thread's CPU time in ns, different at every real read of a busy thread
  const spin = (): void => {
    const end = process.hrtime.bigint() + 2_000_000n;
    while (process.hrtime.bigint() < end) {}
  };
  const first = readText('/proc', 'self/schedstat');
  spin();
  const second = readText('/proc', 'self/schedstat');
  t.is(await first, await second, 'one read for both, taken in one run');
  spin();
  const later = await readText('/proc', 'self/schedstat');
  t.not(later, await first, 'read afresh once the run is over');
  // a fixture root is not shared: its files may be rewritten between two reads of one run
  const dir = mkdtempSync(join(tmpdir(), 'rezolus-read-'));
  writeFileSync(join(dir, 'f'), 'one\n');
  const a = readText(dir, 'f');
  writeFileSync(join(dir, 'f'), 'two\n');
  const b = readText(dir, 'f');
  t.deepEqual([await a, await b], ['one\n', 'two\n']);
  rmSync(dir, { recursive: true });
});
