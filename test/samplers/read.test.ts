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
