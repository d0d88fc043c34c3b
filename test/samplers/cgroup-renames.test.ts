import test from 'ava';
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { RenameGuard } from '../../src/samplers/cgroup/renames.js';
import { OpenFiles } from '../../src/samplers/open-files.js';

test('a new name in a v1 listing drops the kept files of its siblings, and only theirs; a v2 tree or an unchanged listing drops none', (t) => {
  const mount = mkdtempSync(join(tmpdir(), 'rezolus-renames-'));
  t.teardown(() => rmSync(mount, { recursive: true, force: true }));
  for (const d of ['a', 'b', 'p', 'p/q']) mkdirSync(join(mount, d));
  const paths = ['a/f', 'b/f', 'p/f', 'p/q/f'].map((p) => join(mount, p));
  for (const p of paths) writeFileSync(p, '1\n');
  const files = new OpenFiles(16);
  const readAll = (): void => {
    for (const p of paths) files.read(p);
  };
  readAll();
  const guard = new RenameGuard(files, new Set([mount]));
  const first = new Set(['/', '/a', '/b', '/p', '/p/q']);
  guard.listed(mount, first);
  guard.listed(mount, new Set(first));
  t.is(files.size, 4, 'the same listing: nothing dropped');
  guard.listed('/another/tree', new Set(['/', '/new']));
  t.is(files.size, 4, 'not a v1 hierarchy of the guard');
  // `/a` renamed to `/c` and `/a` made again: `/c` is new under `/`, so `/a`, `/b` and `/p` (siblings) are dropped; `/p/q` is not
  guard.listed(mount, new Set(['/', '/a', '/b', '/c', '/p', '/p/q']));
  t.is(files.size, 1);
  readAll();
  t.is(files.size, 4);
  // a new child under `/p`: only `/p/q` is its sibling
  guard.listed(mount, new Set(['/', '/a', '/b', '/c', '/p', '/p/q', '/p/r']));
  t.is(files.size, 3);
  files.close();
});
