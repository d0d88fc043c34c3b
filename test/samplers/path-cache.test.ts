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

test('a sweep forgets the paths not joined since the last mark, and keeps the rest', (t) => {
  const c = new PathCache();
  for (let i = 0; i < 100; i++) c.join('/sys/fs/cgroup/cpu', `pod${i}`);
  c.join('/sys/fs/cgroup/cpu/pod0', 'cpu.stat');
  c.sweep();
  t.is(c.size, 101, 'no mark since: all kept');
  c.mark();
  const pod1 = c.join('/sys/fs/cgroup/cpu', 'pod1');
  for (let i = 100; i < 110; i++) c.join('/sys/fs/cgroup/cpu', `pod${i}`);
  c.sweep();
  t.is(c.size, 11, 'pod1 and the ten new ones');
  t.is(c.join('/sys/fs/cgroup/cpu', 'pod1'), pod1, 'the same string');
  t.is(c.join('/sys/fs/cgroup/cpu', 'pod5'), '/sys/fs/cgroup/cpu/pod5', 'a forgotten one is joined again');
  c.mark();
  c.sweep();
  t.is(c.size, 0, 'nothing joined since the mark: nothing kept');
});

test('the cap holds between a mark and its sweep too, counting the paths kept from before the mark', (t) => {
  const c = new PathCache(100);
  for (let i = 0; i < 80; i++) c.join('/sys/fs/cgroup/cpu', `pod${i}`);
  c.mark();
  for (let i = 0; i < 40; i++) c.join('/sys/fs/cgroup/cpu', `pod${i}`);
  t.is(c.size, 80, 'a path joined again after the mark is moved, not counted twice');
  for (let i = 1000; i < 1100; i++) c.join('/sys/fs/cgroup/cpu', `pod${i}`);
  t.true(c.size <= 100, `${c.size} kept`);
  c.sweep();
  t.true(c.size <= 100);
  t.is(c.join('/sys/fs/cgroup/cpu', 'pod1099'), '/sys/fs/cgroup/cpu/pod1099');
});
