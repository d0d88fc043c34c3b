import test from 'ava';
import { join } from 'node:path';
import { parseNetDev } from '../../src/samplers/network/interfaces/parse.js';
import { networkInterfacesSampler } from '../../src/samplers/network/interfaces/sampler.js';
import type { Point } from '../../src/samplers/types.js';
import { SamplerUnsupportedError } from '../../src/samplers/types.js';
import { silentLogger } from '../../src/log/logger.js';
import { FIXTURE_ROOT, fixture, PROC, SYS } from '../helpers/fixtures.js';

const BAD = join(FIXTURE_ROOT, 'bad', 'network_interfaces');

/** The point of `name` whose labels are exactly `labels`. */
function find(points: readonly Point[], name: string, labels: Record<string, string>): Point | undefined {
  const keys = Object.keys(labels);
  return points.find(
    (p) =>
      p.metric.name === name &&
      Object.keys(p.labels).length === keys.length &&
      keys.every((k) => p.labels[k] === labels[k]),
  );
}

test('parseNetDev reads every interface of the fixture, lo included', (t) => {
  const { devices, skipped } = parseNetDev(fixture('rootfs/proc/net/dev'));
  t.is(skipped, 0);
  t.deepEqual(
    devices.map((d) => d.device),
    ['lo', 'ifb0', 'ifb1', 'eth0'],
  );
  const lo = devices[0];
  t.is(lo?.receive.bytes, 39604);
  t.is(lo?.receive.packets, 541);
  t.is(lo?.transmit.bytes, 39604);
  const eth0 = devices[3];
  t.is(eth0?.receive.bytes, 86630212);
  t.is(eth0?.receive.packets, 3119);
  t.is(eth0?.transmit.bytes, 400852);
  t.is(eth0?.transmit.packets, 2312);
});

test('parseNetDev maps all 16 columns in kernel order', (t) => {
  const { devices } = parseNetDev(fixture('bad/network_interfaces/net/dev'));
  const eth0 = devices.find((d) => d.device === 'eth0');
  t.deepEqual(eth0?.receive, {
    bytes: 86387227, packets: 3098, errs: 1, drop: 2, fifo: 3, frame: 4, compressed: 5, multicast: 6,
  });
  t.deepEqual(eth0?.transmit, {
    bytes: 398611, packets: 2288, errs: 7, drop: 8, fifo: 9, colls: 10, carrier: 11, compressed: 12,
  });
});

test('parseNetDev skips and counts truncated, garbage and colon-less lines', (t) => {
  const { devices, skipped } = parseNetDev(fixture('bad/network_interfaces/net/dev'));
  t.is(skipped, 3);
  t.deepEqual(
    devices.map((d) => d.device),
    ['lo', 'eth0', 'wlan0'],
  );
  // no space after the colon, and a u64 beyond 2^53 stays exact
  const wlan0 = devices[2];
  t.is(wlan0?.receive.bytes, 123456789012);
  t.is(wlan0?.transmit.bytes, 18446744073709551615n);
  t.is(wlan0?.transmit.packets, 77);
});

test('parseNetDev ignores headers and blank lines and never throws', (t) => {
  const header = fixture('rootfs/proc/net/dev').split('\n').slice(0, 2).join('\n');
  t.deepEqual(parseNetDev(header), { devices: [], skipped: 0 });
  t.deepEqual(parseNetDev(''), { devices: [], skipped: 0 });
  t.is(parseNetDev(':  1 2 3 4 5 6 7 8 9 10 11 12 13 14 15 16').skipped, 1); // empty name
  t.notThrows(() => parseNetDev('\u0000|||:::\n\n  x:'));
});

test('network_interfaces refresh reads the fixture root', async (t) => {
  const s = await networkInterfacesSampler.init({ procRoot: PROC, sysRoot: SYS, log: silentLogger() });
  const r = await s.refresh();
  t.is(r.skipped, 0);
  t.is(r.points.length, 4 * 16);
  t.is(find(r.points, 'network_device_bytes', { device: 'lo', direction: 'receive' })?.value, 39604);
  t.is(find(r.points, 'network_device_bytes', { device: 'eth0', direction: 'receive' })?.value, 86630212);
  t.is(find(r.points, 'network_device_packets', { device: 'eth0', direction: 'transmit' })?.value, 2312);
  t.is(find(r.points, 'network_device_collisions', { device: 'eth0' })?.value, 0);
  for (const p of r.points) t.true(s.metrics.includes(p.metric));
});

test('network_interfaces refresh on bad input keeps the good series', async (t) => {
  const s = await networkInterfacesSampler.init({ procRoot: BAD, sysRoot: SYS, log: silentLogger() });
  const r = await s.refresh();
  t.is(r.skipped, 3);
  t.is(r.points.length, 3 * 16);
  const devices = new Set(r.points.map((p) => p.labels['device']));
  t.deepEqual([...devices], ['lo', 'eth0', 'wlan0']);
  t.is(find(r.points, 'network_device_bytes', { device: 'lo', direction: 'transmit' })?.value, 38460);
  t.is(find(r.points, 'network_device_frame_errors', { device: 'eth0' })?.value, 4);
  t.is(find(r.points, 'network_device_multicast', { device: 'eth0' })?.value, 6);
  t.is(find(r.points, 'network_device_collisions', { device: 'eth0' })?.value, 10);
  t.is(find(r.points, 'network_device_carrier_errors', { device: 'eth0' })?.value, 11);
  t.is(find(r.points, 'network_device_fifo_errors', { device: 'eth0', direction: 'transmit' })?.value, 9);
  t.is(find(r.points, 'network_device_compressed', { device: 'eth0', direction: 'receive' })?.value, 5);
  const wlan0 = find(r.points, 'network_device_bytes', { device: 'wlan0', direction: 'transmit' });
  t.is(wlan0?.value, 18446744073709551615n);
});

test('network_interfaces is unsupported without /proc/net/dev', async (t) => {
  await t.throwsAsync(networkInterfacesSampler.init({ procRoot: '/nonexistent', sysRoot: SYS, log: silentLogger() }), {
    instanceOf: SamplerUnsupportedError,
  });
});

test('network_interfaces reads the live /proc', async (t) => {
  const s = await networkInterfacesSampler.init({ procRoot: '/proc', sysRoot: '/sys', log: silentLogger() });
  const r = await s.refresh();
  t.is(r.skipped, 0);
  t.true(r.points.length > 0);
  t.truthy(find(r.points, 'network_device_bytes', { device: 'lo', direction: 'receive' }));
});
