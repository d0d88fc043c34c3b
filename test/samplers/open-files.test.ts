import test from 'ava';
import { closeSync, existsSync, mkdirSync, openSync, mkdtempSync, readdirSync, readlinkSync, renameSync, rmdirSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { keepBelowFd, OpenFiles, openFilesBudget, softOpenFilesLimit } from '../../src/samplers/open-files.js';
import { readText } from '../../src/samplers/read.js';

/**
 * This process's descriptors open on `prefix` or below it. Counting them all would take in
 * whatever else the worker opens or closes meanwhile (a CI run once saw one fd fewer than
 * the file's own two).
 */
const fdsOn = (prefix: string): number => {
  let n = 0;
  for (const fd of readdirSync('/proc/self/fd')) {
    try {
      const target = readlinkSync(`/proc/self/fd/${fd}`);
      if (target === prefix || target.startsWith(`${prefix}/`)) n++;
    } catch {
      // closed between the listing and the readlink (the listing's own fd)
    }
  }
  return n;
};

test('the soft limit on open files comes from /proc/<pid>/limits; the budget is a quarter of it at most', (t) => {
  const limits = [
    'Limit                     Soft Limit           Hard Limit           Units     ',
    'Max processes             95148                95148                processes ',
    'Max open files            1024                 524288               files     ',
  ].join('\n');
  t.is(softOpenFilesLimit(limits), 1024);
  t.is(softOpenFilesLimit(limits.replace('1024 ', 'unlimited ')), undefined);
  t.is(softOpenFilesLimit('Max processes 1 1 processes'), undefined);
  t.is(openFilesBudget(4096, 1024), 256);
  t.is(openFilesBudget(4096, 65536), 4096);
  t.is(openFilesBudget(4096, undefined), 4096);
  t.is(openFilesBudget(0, 65536), 0);
});

test.serial('files stay open up to the cap, are read from offset 0 each time, and a sweep closes those not read since the last', (t) => {
  const dir = mkdtempSync(join(tmpdir(), 'rezolus-open-files-'));
  t.teardown(() => rmSync(dir, { recursive: true, force: true }));
  const paths = ['a', 'b', 'c'].map((n) => join(dir, n));
  for (const [i, p] of paths.entries()) writeFileSync(p, `value ${i}\n`);
  const files = new OpenFiles(2);
  t.deepEqual(paths.map((p) => files.read(p)), ['value 0\n', 'value 1\n', 'value 2\n']);
  t.is(files.size, 2, 'the third is opened and closed');
  t.is(fdsOn(dir), 2);
  // rewritten in place (as the kernel regenerates a pseudo-file): the open fd reads the new text, longer or shorter
  writeFileSync(paths[0]!, `${'x'.repeat(40_000)}\n`);
  t.is(files.read(paths[0]!).length, 40_001);
  writeFileSync(paths[0]!, 'short\n');
  t.is(files.read(paths[0]!), 'short\n');
  files.sweep(); // a and b were read in this generation: both stay
  t.is(files.size, 2);
  files.read(paths[1]!);
  files.sweep(); // a was not read since the last sweep
  t.is(files.size, 1);
  t.is(fdsOn(dir), 1);
  t.throws(() => files.read(join(dir, 'missing')), { code: 'ENOENT' });
  t.is(files.size, 1);
  files.close();
  t.is(files.size, 0);
  t.is(fdsOn(dir), 0);
});

test.serial('a file whose descriptor is keepBelow or higher is read and closed, not kept: a quarter of the table stays free', (t) => {
  t.is(keepBelowFd(1024), 768);
  t.is(keepBelowFd(192), 144);
  t.is(keepBelowFd(undefined), Number.POSITIVE_INFINITY);
  const dir = mkdtempSync(join(tmpdir(), 'rezolus-open-files-'));
  t.teardown(() => rmSync(dir, { recursive: true, force: true }));
  const paths = ['a', 'b', 'c'].map((n) => join(dir, n));
  for (const [i, p] of paths.entries()) writeFileSync(p, `value ${i}\n`);
  // the kernel hands out the lowest free number: the next open gets `low`, the one after low + 1
  const low = openSync(paths[0]!, 'r');
  closeSync(low);
  const files = new OpenFiles(10, low + 1);
  t.deepEqual(paths.map((p) => files.read(p)), ['value 0\n', 'value 1\n', 'value 2\n']);
  t.is(files.size, 1, 'only the file that got descriptor ' + low + ' is kept');
  t.is(fdsOn(dir), 1);
  t.is(files.read(paths[1]!), 'value 1\n', 'the others are still read');
  t.is(files.size, 1);
  files.close();
  t.is(fdsOn(dir), 0);
});

// A real cgroupfs (kernfs): a kept fd of a removed cgroup fails, and the same name made
// again is read from its own files. Needs root and a v1 pids hierarchy or the v2 tree.
const PIDS_ROOT = ['/sys/fs/cgroup/pids', '/sys/fs/cgroup/unified', '/sys/fs/cgroup'].find((r) => existsSync(join(r, 'cgroup.procs')) && (r !== '/sys/fs/cgroup' || existsSync(join(r, 'cgroup.controllers'))));

test.serial('on cgroupfs a kept file shows writes, fails once its cgroup is removed, and a cgroup made again under the name is read afresh', (t) => {
  if (PIDS_ROOT === undefined || process.getuid?.() !== 0) {
    t.fail('needs root and a cgroupfs with pids files (this machine has both)');
    return;
  }
  const dir = join(PIDS_ROOT, `rezolus-open-files-${process.pid}`);
  mkdirSync(dir);
  t.teardown(() => {
    if (existsSync(dir)) rmdirSync(dir);
  });
  const file = join(dir, existsSync(join(dir, 'pids.max')) ? 'pids.max' : 'cgroup.max.depth');
  const files = new OpenFiles(8);
  t.is(files.read(file), 'max\n');
  writeFileSync(file, '100');
  t.is(files.read(file), '100\n', 'a read at offset 0 of a kept fd gives the current value');
  t.is(files.size, 1);
  rmdirSync(dir);
  t.throws(() => files.read(file), { code: 'ENOENT' }, 'the kept fd failed, and the path is gone');
  t.is(files.size, 0);
  mkdirSync(dir);
  t.is(files.read(file), 'max\n', 'the new cgroup of the same name, not the old one');
  files.close();
});

test.serial('readText keeps a procfs file open and reads fresh text from it; below a fixture root it keeps none', async (t) => {
  const before = fdsOn('/proc/uptime');
  const first = await readText('/proc', 'uptime');
  const kept = fdsOn('/proc/uptime');
  t.true(kept - before <= 1, `${kept - before} more fds`);
  await new Promise((r) => setTimeout(r, 50));
  const second = await readText('/proc', 'uptime');
  t.is(fdsOn('/proc/uptime'), kept, 'no further fd for the second read');
  t.not(second, first, 'the second read is the kernel text of now');
  t.true(Number(second.split(' ')[0]) > Number(first.split(' ')[0]));

  const dir = mkdtempSync(join(tmpdir(), 'rezolus-open-files-root-'));
  t.teardown(() => rmSync(dir, { recursive: true, force: true }));
  writeFileSync(join(dir, 'uptime'), '1.00 2.00\n');
  t.is(await readText(dir, 'uptime'), '1.00 2.00\n');
  // a fixture file replaced by another (rename) is read from the new one: nothing was kept open
  writeFileSync(join(dir, 'uptime.new'), '3.00 4.00\n');
  renameSync(join(dir, 'uptime.new'), join(dir, 'uptime'));
  t.is(await readText(dir, 'uptime'), '3.00 4.00\n');
  t.is(fdsOn(dir), 0, 'no file below the fixture root is kept');
});

test.serial('forgetDirs closes the kept files directly in the directories, not those of their subdirectories or of a sibling', (t) => {
  const dir = mkdtempSync(join(tmpdir(), 'rezolus-open-files-forget-'));
  t.teardown(() => rmSync(dir, { recursive: true, force: true }));
  for (const d of ['a', 'a/sub', 'ab']) mkdirSync(join(dir, d));
  const paths = ['a/x', 'a/y', 'a/sub/z', 'ab/w'].map((p) => join(dir, p));
  for (const p of paths) writeFileSync(p, 'v\n');
  const files = new OpenFiles(8);
  for (const p of paths) files.read(p);
  t.is(files.size, 4);
  files.forgetDirs(new Set([join(dir, 'a')]));
  t.is(files.size, 2, 'a/sub/z and ab/w stay');
  t.is(fdsOn(dir), 2);
  files.close();
});

test.serial('single-record reads: cgroupfs files and a regular file larger than the buffer read whole, as with the read to the end', (t) => {
  const dir = mkdtempSync(join(tmpdir(), 'rezolus-single-'));
  t.teardown(() => rmSync(dir, { recursive: true, force: true }));
  // larger than the shared 16 KiB buffer, and than twice it: a full buffer is never taken for the end
  const big = join(dir, 'big');
  const text = Array.from({ length: 5000 }, (_, i) => `line ${i} ${'x'.repeat(i % 7)}`).join('\n');
  t.true(text.length > 32_768);
  writeFileSync(big, text);
  const single = new OpenFiles(8, Number.POSITIVE_INFINITY, true);
  t.is(single.read(big), text);
  t.is(single.read(big), text, 'kept, read again from offset 0');
  single.close();
  const files = [
    '/sys/fs/cgroup/memory/memory.stat', '/sys/fs/cgroup/cpu/cpu.stat', '/sys/fs/cgroup/cpuacct/cpuacct.usage_percpu',
    '/sys/fs/cgroup/blkio/blkio.throttle.io_service_bytes', '/sys/fs/cgroup/memory.stat', '/sys/fs/cgroup/cpu.stat', '/sys/fs/cgroup/io.stat',
  ].filter((f) => existsSync(f));
  if (files.length === 0) {
    t.fail('no cgroupfs file here (this machine has v1 hierarchies)');
    return;
  }
  const whole = new OpenFiles(8);
  const once = new OpenFiles(8, Number.POSITIVE_INFINITY, true);
  for (const f of files) {
    // the figures move between two reads (cpuacct.usage_percpu is nothing but
    // figures): the same lines, and in each the same words with numbers as '#'
    const a = whole.read(f);
    const b = once.read(f);
    const shape = (s: string): string[] => s.split('\n').map((l) => l.replace(/\d+/g, '#'));
    t.deepEqual(shape(b), shape(a), f);
    t.true(b.endsWith('\n'), `${f}: read to its last line`);
  }
  whole.close();
  once.close();
});
