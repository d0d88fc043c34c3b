/**
 * CgroupPaths names the kernfs ids the BPF programs record. A cgroup removed
 * and made again under its name before the kernel frees its css id leaves two
 * live slots, the old id and the new: only the new may have the name.
 */
import test from 'ava';
import { mkdirSync, mkdtempSync, renameSync, rmdirSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { CgroupPaths } from '../../src/samplers/cgroup/inodes.js';

function fixture(): { paths: CgroupPaths; tree: string } {
  const root = mkdtempSync(join(tmpdir(), 'rezolus-paths-'));
  const proc = join(root, 'proc');
  const sys = join(root, 'sys');
  const tree = join(sys, 'fs', 'cgroup');
  mkdirSync(join(proc, 'self'), { recursive: true });
  mkdirSync(tree, { recursive: true });
  writeFileSync(join(proc, 'self', 'mountinfo'), '28 25 0:26 / /sys/fs/cgroup rw,nosuid - cgroup2 cgroup2 rw\n');
  writeFileSync(join(tree, 'cgroup.controllers'), 'cpu memory\n');
  // a relisting interval longer than the test: only a miss lists again
  const paths = CgroupPaths.open(proc, sys, 4, 3_600_000);
  if (paths === undefined) throw new Error('no cpu hierarchy in the fixture');
  return { paths, tree };
}

const ino = (dir: string): bigint => statSync(dir, { bigint: true }).ino;

test('a cgroup made again under its name: the new id has the name, the old one none, whichever comes first', (t) => {
  const { paths, tree } = fixture();
  t.teardown(() => rmSync(join(tree, '..', '..', '..'), { recursive: true, force: true }));
  mkdirSync(join(tree, 'web'));
  mkdirSync(join(tree, 'db'));
  const old = ino(join(tree, 'web'));
  const db = ino(join(tree, 'db'));
  t.deepEqual(paths.pathsOf([old, db]), ['/web', '/db']);
  // the old directory goes only once the new one has an inode of its own (a filesystem may reuse one at once)
  renameSync(join(tree, 'web'), join(tree, 'gone'));
  mkdirSync(join(tree, 'web'));
  rmdirSync(join(tree, 'gone'));
  const fresh = ino(join(tree, 'web'));
  t.not(fresh, old);
  // the old id first: named from the kept listing, then the new one's miss lists again
  t.deepEqual(paths.pathsOf([old, db, fresh]), [undefined, '/db', '/web']);
  t.deepEqual(paths.pathsOf([fresh, old]), ['/web', undefined]);
});

test('ids named from one listing keep their names when nothing was listed again', (t) => {
  const { paths, tree } = fixture();
  t.teardown(() => rmSync(join(tree, '..', '..', '..'), { recursive: true, force: true }));
  mkdirSync(join(tree, 'a', 'b'), { recursive: true });
  const a = ino(join(tree, 'a'));
  const b = ino(join(tree, 'a', 'b'));
  t.deepEqual(paths.pathsOf([a, b, ino(tree)]), ['/a', '/a/b', '/']);
  t.deepEqual(paths.pathsOf([]), []);
});
