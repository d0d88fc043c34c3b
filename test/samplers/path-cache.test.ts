/** Paths joined once (src/samplers/path-cache.ts): the same string each time, and a bounded number of them. */
import test from 'ava';
import { join } from 'node:path';
import { PathCache } from '../../src/samplers/path-cache.js';

test('a path is joined once and is the same as join() gives', (t) => {
  const c = new PathCache();
  t.is(c.join('/sys/fs/cgroup/memory', 'docker/abc'), join('/sys/fs/cgroup/memory', 'docker/abc'));
  t.is(c.join('/proc', '../proc/stat'), '/proc/stat');
  t.is(c.join('/proc', 'stat'), c.join('/proc', 'stat'));
  t.is(c.size, 3);
});

test('paths under one directory do not pile up: cgroups that come and go are forgotten past the cap', (t) => {
  const c = new PathCache(100);
  // one mount, 10 000 transient cgroups (the key the cgroup reader uses is the mount)
  for (let i = 0; i < 10_000; i++) c.join('/sys/fs/cgroup/cpu', `kubepods/pod${i}`);
  t.true(c.size <= 100, `${c.size} kept`);
  t.is(c.join('/sys/fs/cgroup/cpu', 'kubepods/pod9999'), '/sys/fs/cgroup/cpu/kubepods/pod9999');
});
