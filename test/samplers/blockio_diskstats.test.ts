import test from 'ava';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { isWholeDisk, parseDiskstats } from '../../src/samplers/blockio/diskstats/parse.js';
import { blockioDiskstatsSampler } from '../../src/samplers/blockio/diskstats/sampler.js';
import type { Point } from '../../src/samplers/types.js';
import { SamplerUnsupportedError } from '../../src/samplers/types.js';
import { silentLogger } from '../../src/log/logger.js';
import { FIXTURE_ROOT, fixture, PROC, SYS } from '../helpers/fixtures.js';

const BAD = join(FIXTURE_ROOT, 'bad', 'blockio_diskstats');

function value(points: readonly Point[], name: string, device: string, op?: string): Point['value'] | undefined {
  return points.find(
    (p) => p.metric.name === name && p.labels['device'] === device && p.labels['op'] === op,
  )?.value;
}

const LINE_14 = '   8       0 sda 100 2 800 30 50 5 400 60 1 70 90';
const LINE_18 = '   8       0 sda 100 2 800 30 50 5 400 60 1 70 90 4 0 64 8';
const LINE_20 = '   8       0 sda 100 2 800 30 50 5 400 60 1 70 90 4 0 64 8 3 9';

test('parseDiskstats reads the fixture (20 fields, Linux 5.5+)', (t) => {
  const { disks, skipped } = parseDiskstats(fixture('rootfs/proc/diskstats'));
  t.is(skipped, 0);
  t.is(disks.length, 10);
  const vda = disks.find((d) => d.device === 'vda');
  t.deepEqual(vda, {
    major: 254,
    minor: 0,
    device: 'vda',
    read: { ios: 51812, merges: 8459, sectors: 2004594, ms: 13518 },
    write: { ios: 26451, merges: 19389, sectors: 2392624, ms: 13780 },
    inFlight: 0,
    ioTicksMs: 8756,
    weightedMs: 28103,
    discard: { ios: 9588, merges: 68, sectors: 764840, ms: 601 },
    flush: { ios: 5012, ms: 203 },
  });
});

test('parseDiskstats handles 14, 18 and 20 fields', (t) => {
  const [d14] = parseDiskstats(LINE_14).disks;
  t.deepEqual(d14?.write, { ios: 50, merges: 5, sectors: 400, ms: 60 });
  t.is(d14?.inFlight, 1);
  t.is(d14?.ioTicksMs, 70);
  t.is(d14?.weightedMs, 90);
  t.false(d14 !== undefined && 'discard' in d14);
  t.false(d14 !== undefined && 'flush' in d14);

  const [d18] = parseDiskstats(LINE_18).disks;
  t.deepEqual(d18?.discard, { ios: 4, merges: 0, sectors: 64, ms: 8 });
  t.false(d18 !== undefined && 'flush' in d18);

  const [d20] = parseDiskstats(LINE_20).disks;
  t.deepEqual(d20?.discard, { ios: 4, merges: 0, sectors: 64, ms: 8 });
  t.deepEqual(d20?.flush, { ios: 3, ms: 9 });

  // a later kernel appending fields still parses; counts in between do not
  t.is(parseDiskstats(`${LINE_20} 11 12`).disks[0]?.flush?.ms, 9);
  t.deepEqual(parseDiskstats(`${LINE_14} 4 0`), { disks: [], skipped: 1 });
  t.deepEqual(parseDiskstats(`${LINE_18} 3`), { disks: [], skipped: 1 });
});

test('parseDiskstats skips and counts short and garbage lines, never throws', (t) => {
  const { disks, skipped } = parseDiskstats(fixture('bad/blockio_diskstats/diskstats'));
  t.is(skipped, 2); // sdb too short, dm-1 garbage
  t.deepEqual(
    disks.map((d) => d.device),
    ['loop0', 'sda', 'sda1', 'nvme0n1', 'nvme0n1p1', 'dm-0'],
  );
  t.deepEqual(parseDiskstats('\n  \n'), { disks: [], skipped: 0 });
  t.is(parseDiskstats('8 0').skipped, 1);
  t.notThrows(() => parseDiskstats('\u0000 x y z'));
});

test('parseDiskstats filters by name before parsing', (t) => {
  const { disks, skipped } = parseDiskstats(fixture('bad/blockio_diskstats/diskstats'), isWholeDisk);
  t.is(skipped, 2);
  t.deepEqual(
    disks.map((d) => d.device),
    ['sda', 'nvme0n1', 'dm-0'],
  );
});

test('isWholeDisk drops partitions and virtual devices', (t) => {
  const whole = ['sda', 'sdaa', 'vda', 'xvdb', 'hda', 'nvme0n1', 'nvme10n2', 'mmcblk0', 'dm-0', 'dm-12', 'md0', 'sr0'];
  for (const d of whole) t.true(isWholeDisk(d), d);
  for (const d of ['sda1', 'sdaa12', 'vda1', 'xvda1', 'hda2', 'nvme0n1p1', 'nvme0n1p12', 'mmcblk0p1', 'md0p1']) {
    t.false(isWholeDisk(d), d);
  }
  for (const d of ['ram0', 'zram0', 'loop0', 'loop12', 'fd0']) t.false(isWholeDisk(d), d);
});

test('blockio_diskstats refresh reads the fixture root', async (t) => {
  const s = await blockioDiskstatsSampler.init({ procRoot: PROC, sysRoot: SYS, log: silentLogger() });
  const r = await s.refresh();
  t.is(r.skipped, 0);
  t.is(r.points.length, 17); // vda only: loop0-7 and zram0 are filtered
  t.true(r.points.every((p) => p.labels['device'] === 'vda'));
  t.is(value(r.points, 'blockio_device_operations', 'vda', 'read'), 51812);
  t.is(value(r.points, 'blockio_device_operations', 'vda', 'flush'), 5012);
  t.is(value(r.points, 'blockio_device_merged', 'vda', 'write'), 19389);
  t.is(value(r.points, 'blockio_device_merged', 'vda', 'flush'), undefined);
  t.is(value(r.points, 'blockio_device_bytes', 'vda', 'read'), 2004594 * 512);
  t.is(value(r.points, 'blockio_device_bytes', 'vda', 'discard'), 764840 * 512);
  t.is(value(r.points, 'blockio_device_bytes', 'vda', 'flush'), undefined);
  t.is(value(r.points, 'blockio_device_time', 'vda', 'read'), 13518 * 1_000_000);
  t.is(value(r.points, 'blockio_device_time', 'vda', 'flush'), 203 * 1_000_000);
  t.is(value(r.points, 'blockio_device_in_flight', 'vda'), 0);
  t.is(value(r.points, 'blockio_device_busy_time', 'vda'), 8756 * 1_000_000);
  t.is(value(r.points, 'blockio_device_weighted_time', 'vda'), 28103 * 1_000_000);
  for (const p of r.points) t.true(s.metrics.includes(p.metric));
});

test('blockio_diskstats refresh on bad input keeps the good devices', async (t) => {
  const s = await blockioDiskstatsSampler.init({ procRoot: BAD, sysRoot: SYS, log: silentLogger() });
  const r = await s.refresh();
  t.is(r.skipped, 2);
  t.is(r.points.length, 3 * 17);
  t.deepEqual([...new Set(r.points.map((p) => p.labels['device']))], ['sda', 'nvme0n1', 'dm-0']);
  t.is(value(r.points, 'blockio_device_operations', 'sda', 'read'), 100);
  t.is(value(r.points, 'blockio_device_bytes', 'sda', 'write'), 400 * 512);
  t.is(value(r.points, 'blockio_device_time', 'sda', 'discard'), 8_000_000);
  t.is(value(r.points, 'blockio_device_in_flight', 'sda'), 1);
  t.is(value(r.points, 'blockio_device_operations', 'nvme0n1', 'flush'), 7);
  t.is(value(r.points, 'blockio_device_time', 'dm-0', 'write'), 2_000_000);
});

test('blockio_diskstats emits per-format op sets and exact bigints', async (t) => {
  const root = await mkdtemp(join(tmpdir(), 'diskstats-'));
  t.teardown(() => rm(root, { recursive: true, force: true }));
  const huge = '8 32 sdc 1 0 18446744073709551615 18446744073709 0 0 0 0 0 0 0';
  await writeFile(join(root, 'diskstats'), [LINE_14, LINE_18.replace('sda', 'sdb'), huge, ''].join('\n'));
  const s = await blockioDiskstatsSampler.init({ procRoot: root, sysRoot: SYS, log: silentLogger() });
  const r = await s.refresh();
  t.is(r.skipped, 0);
  t.is(r.points.length, 11 + 15 + 11);
  const ops = (device: string): (string | undefined)[] =>
    r.points
      .filter((p) => p.metric.name === 'blockio_device_operations' && p.labels['device'] === device)
      .map((p) => p.labels['op']);
  t.deepEqual(ops('sda'), ['read', 'write']);
  t.deepEqual(ops('sdb'), ['read', 'write', 'discard']);
  t.is(value(r.points, 'blockio_device_bytes', 'sdc', 'read'), 18446744073709551615n * 512n);
  t.is(value(r.points, 'blockio_device_time', 'sdc', 'read'), 18446744073709000000n);
});

test('blockio_diskstats is unsupported without /proc/diskstats', async (t) => {
  await t.throwsAsync(blockioDiskstatsSampler.init({ procRoot: '/nonexistent', sysRoot: SYS, log: silentLogger() }), {
    instanceOf: SamplerUnsupportedError,
  });
});

test('blockio_diskstats reads the live /proc', async (t) => {
  const s = await blockioDiskstatsSampler.init({ procRoot: '/proc', sysRoot: '/sys', log: silentLogger() });
  const r = await s.refresh();
  t.is(r.skipped, 0);
  t.true(r.points.length > 0);
});
