import test from 'ava';
import { existsSync, mkdirSync, mkdtempSync, renameSync, rmdirSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { isCgroupFs, listCgroups, TreeListing } from '../../src/samplers/cgroup/walk.js';

// The pids hierarchy of this machine (v1), or the v2 tree: a real cgroupfs, where a
// directory's link count is 2 + its subdirectories and leaves need not be listed.
const ROOT = ['/sys/fs/cgroup/pids', '/sys/fs/cgroup/unified', '/sys/fs/cgroup'].find((r) => isCgroupFs(r));

test('on cgroupfs, skipping the leaves by their link count lists the same cgroups as listing every directory', (t) => {
  if (ROOT === undefined || process.getuid?.() !== 0) {
    t.fail('needs root and a cgroupfs (this machine has both)');
    return;
  }
  const base = `rezolus-walk-${process.pid}`;
  const made = ['', '/a', '/b', '/b/c', '/b/d', '/b/d/e'].map((p) => join(ROOT, base + p));
  for (const d of made) mkdirSync(d);
  t.teardown(() => {
    for (const d of [...made].reverse()) if (existsSync(d)) rmdirSync(d);
  });
  const ours = (paths: string[]): string[] => paths.filter((p) => p.startsWith(`/${base}`));
  for (const depth of [1, 2, 3, 6]) {
    const plain = ours(listCgroups(ROOT, depth, false));
    t.deepEqual(ours(listCgroups(ROOT, depth, true)), plain, `depth ${depth}`);
  }
  t.deepEqual(ours(listCgroups(ROOT, 6, true)), [`/${base}`, `/${base}/a`, `/${base}/b`, `/${base}/b/c`, `/${base}/b/d`, `/${base}/b/d/e`]);
  // a leaf that gains a child is listed again at once; one that loses its last child is a leaf again
  mkdirSync(join(ROOT, base, 'a', 'f'));
  made.splice(2, 0, join(ROOT, base, 'a', 'f'));
  t.true(ours(listCgroups(ROOT, 6, true)).includes(`/${base}/a/f`));
  rmdirSync(join(ROOT, base, 'b', 'd', 'e'));
  t.false(ours(listCgroups(ROOT, 6, true)).includes(`/${base}/b/d/e`));
});

test('a fixture tree is not cgroupfs', (t) => {
  const dir = mkdtempSync(join(tmpdir(), 'rezolus-walk-'));
  t.teardown(() => rmSync(dir, { recursive: true, force: true }));
  t.false(isCgroupFs(dir));
  t.false(isCgroupFs(join(dir, 'missing')));
});

test('with an inode map, every listed directory gets the inode stat gives it, the deepest level and the root included, on cgroupfs and in a plain tree', (t) => {
  const dir = mkdtempSync(join(tmpdir(), 'rezolus-walk-ino-'));
  t.teardown(() => rmSync(dir, { recursive: true, force: true }));
  for (const p of ['a', 'a/b', 'a/b/c', 'd']) mkdirSync(join(dir, p));
  const roots: [string, boolean][] = [[dir, false]];
  if (ROOT !== undefined && process.getuid?.() === 0) {
    const base = join(ROOT, `rezolus-walk-ino-${process.pid}`);
    for (const p of ['', '/x', '/x/y']) mkdirSync(base + p);
    t.teardown(() => {
      for (const p of ['/x/y', '/x', '']) if (existsSync(base + p)) rmdirSync(base + p);
    });
    roots.push([ROOT, true]);
  } else t.fail('needs root and a cgroupfs (this machine has both)');
  for (const [root, leafByLinks] of roots) {
    for (const depth of [0, 1, 2, 3, 6]) {
      const inodes = new Map<string, bigint>();
      const paths = listCgroups(root, depth, leafByLinks, inodes);
      t.deepEqual(paths, listCgroups(root, depth, leafByLinks), `${root} depth ${depth}: the same listing`);
      t.deepEqual([...inodes.keys()].sort(), [...paths].sort(), `${root} depth ${depth}: an inode for each`);
      for (const p of paths) t.is(inodes.get(p), statSync(join(root, p), { bigint: true }).ino, `${root}${p}`);
    }
  }
});

test('TreeListing on cgroupfs: the kept listing is used while nothing changed; a cgroup made, removed, renamed or made again shows at the next list', (t) => {
  if (ROOT === undefined || process.getuid?.() !== 0) {
    t.fail('needs root and a cgroupfs (this machine has both)');
    return;
  }
  const base = `rezolus-listing-${process.pid}`;
  const dir = (p: string): string => join(ROOT, base + p);
  t.teardown(() => {
    for (const p of ['/a/deep', '/a', '/b', '/c', '']) if (existsSync(dir(p))) rmdirSync(dir(p));
  });
  mkdirSync(dir(''));
  mkdirSync(dir('/a'));
  const listing = new TreeListing(ROOT, 6, true);
  const ours = (paths: readonly string[]): string[] => paths.filter((p) => p.startsWith(`/${base}`));
  const first = listing.list();
  t.true(first.changed, 'the first listing');
  t.deepEqual(ours(first.paths), [`/${base}`, `/${base}/a`]);
  const again = listing.list();
  t.false(again.changed, 'nothing changed: the kept listing');
  t.is(again.paths, first.paths);

  mkdirSync(dir('/b'));
  const made = listing.list();
  t.true(made.changed, 'a cgroup made');
  t.deepEqual(ours(made.paths), [`/${base}`, `/${base}/a`, `/${base}/b`]);
  t.false(listing.list().changed);

  mkdirSync(dir('/a/deep'));
  t.deepEqual(ours(listing.list().paths), [`/${base}`, `/${base}/a`, `/${base}/b`, `/${base}/a/deep`], 'a leaf that gains a child');

  rmdirSync(dir('/b'));
  t.deepEqual(ours(listing.list().paths), [`/${base}`, `/${base}/a`, `/${base}/a/deep`], 'a cgroup removed');

  // removed and another made in one interval: the parent's link count is the same, the removed one's stat fails
  rmdirSync(dir('/a/deep'));
  mkdirSync(dir('/c'));
  t.deepEqual(ours(listing.list().paths), [`/${base}`, `/${base}/a`, `/${base}/c`], 'one removed, one made');

  // removed and made again under its name: the same cgroups, seen as a change by the new inode
  const before = new Map<string, bigint>();
  listing.list(before);
  rmdirSync(dir('/c'));
  mkdirSync(dir('/c'));
  const inodes = new Map<string, bigint>();
  const remade = listing.list(inodes);
  t.true(remade.changed, 'a new inode under the same name');
  t.deepEqual(ours(remade.paths), [`/${base}`, `/${base}/a`, `/${base}/c`]);
  t.is(inodes.get(`/${base}/c`), statSync(dir('/c'), { bigint: true }).ino, 'the new inode');
  t.deepEqual([...inodes.keys()].sort(), [...remade.paths].sort(), 'an inode for every cgroup, listed again or not');

  let renamed = false;
  try {
    renameSync(dir('/c'), dir('/b'));
    renamed = true;
  } catch {
    t.log('this hierarchy does not rename cgroups');
  }
  if (renamed) t.deepEqual(ours(listing.list().paths), [`/${base}`, `/${base}/a`, `/${base}/b`], 'a cgroup renamed');
});

test('TreeListing in a fixture tree lists every time', (t) => {
  const dir = mkdtempSync(join(tmpdir(), 'rezolus-listing-'));
  t.teardown(() => rmSync(dir, { recursive: true, force: true }));
  mkdirSync(join(dir, 'a'));
  const listing = new TreeListing(dir, 6, false);
  t.true(listing.list().changed);
  t.true(listing.list().changed);
  mkdirSync(join(dir, 'b'));
  t.deepEqual(listing.list().paths, ['/', '/a', '/b']);
});
