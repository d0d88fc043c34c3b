import test from 'ava';
import { existsSync, mkdirSync, mkdtempSync, rmdirSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { isCgroupFs, listCgroups } from '../../src/samplers/cgroup/walk.js';

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
