import test from 'ava';
import { join } from 'node:path';
import { NS_PER_TICK, parseCpuStat, ticksToNs } from '../../src/samplers/cpu/usage/parse.js';
import { cpuUsageSampler } from '../../src/samplers/cpu/usage/sampler.js';
import type { Point } from '../../src/samplers/types.js';
import { SamplerUnsupportedError } from '../../src/samplers/types.js';
import { silentLogger } from '../../src/log/logger.js';
import { FIXTURE_ROOT, fixture, PROC, SYS } from '../helpers/fixtures.js';

const find = (points: Point[], name: string, state: string, id?: string): Point | undefined =>
  points.find((p) => p.metric.name === name && p.labels['state'] === state && p.labels['id'] === id);

test('parseCpuStat reads the fixture /proc/stat', (t) => {
  const stat = parseCpuStat(fixture('rootfs/proc/stat'));
  t.is(stat.skipped, 0);
  t.deepEqual(stat.all, { id: -1, ticks: [4474, 0, 2860, 49585, 340, 0, 63, 13, 0, 0] });
  t.is(stat.cpus.length, 2);
  t.deepEqual(
    stat.cpus.map((c) => c.id),
    [0, 1],
  );
  // cpu1 system
  t.is(stat.cpus[1]?.ticks[2], 1714);
  t.is(ticksToNs(1714), 1714 * 10 ** 7);
});

test('USER_HZ ticks scale to exact nanoseconds', (t) => {
  t.is(NS_PER_TICK, 10_000_000);
  t.is(ticksToNs(0), 0);
  // 10^12 ticks = 10^19 ns, past 2^53: bigint, exact
  t.is(ticksToNs(1_000_000_000_000), 10_000_000_000_000_000_000n);
  t.is(ticksToNs(123_456_789_012_345_678n), 1_234_567_890_123_456_780_000_000n);
});

test('parseCpuStat emits only the columns an older kernel prints', (t) => {
  const stat = parseCpuStat('cpu  10 1 20 30 4 5 6\ncpu0 10 1 20 30 4 5 6\nintr 1 2\n');
  t.is(stat.skipped, 0);
  t.is(stat.all?.ticks.length, 7);
  t.deepEqual(stat.cpus[0]?.ticks, [10, 1, 20, 30, 4, 5, 6]);
});

test('parseCpuStat ignores columns past guest_nice and stops at the first non-cpu line', (t) => {
  const stat = parseCpuStat('cpu  1 2 3 4 5 6 7 8 9 10 11\ncpu0 1 2 3 4 5 6 7 8 9 10 11\nintr 5\ncpu1 1 2 3 4\n');
  t.is(stat.all?.ticks.length, 10);
  t.is(stat.cpus.length, 1);
  t.is(stat.skipped, 0);
});

test('parseCpuStat skips and counts truncated and garbage lines', (t) => {
  const stat = parseCpuStat(fixture('bad/cpu_usage/stat'));
  // cpu1 truncated, cpu2 garbage value, cpuX bad cpu number
  t.is(stat.skipped, 3);
  t.deepEqual(
    stat.cpus.map((c) => c.id),
    [0, 3],
  );
  t.deepEqual(stat.cpus[1]?.ticks, [100, 1, 200, 300, 4, 5, 6, 7, 8, 9]);
  t.is(stat.all?.ticks[0], 4259);
});

test('parseCpuStat on empty or non-stat text', (t) => {
  t.deepEqual(parseCpuStat(''), { all: undefined, cpus: [], skipped: 0 });
  t.deepEqual(parseCpuStat('cpu\n'), { all: undefined, cpus: [], skipped: 1 });
  t.deepEqual(parseCpuStat('cpu  1 2 3\n').skipped, 1);
});

test('cpu_usage refresh reads the fixture root', async (t) => {
  const s = await cpuUsageSampler.init({ procRoot: PROC, sysRoot: SYS, log: silentLogger() });
  const r = await s.refresh();
  t.is(r.skipped, 0);
  // 10 states for the aggregate line + 10 states x 2 CPUs
  t.is(r.points.length, 30);
  t.is(find(r.points, 'cpu_usage', 'system', '1')?.value, 1714 * 10 ** 7);
  t.is(find(r.points, 'cpu_usage', 'idle', '0')?.value, 25408 * 10 ** 7);
  t.is(find(r.points, 'cpu_usage', 'guest_nice', '1')?.value, 0);
  t.is(find(r.points, 'cpu_usage_all', 'user')?.value, 4474 * 10 ** 7);
  t.true(r.points.every((p) => p.metric.kind === 'counter'));
});

test('cpu_usage labels a per-CPU series with its state and CPU id', async (t) => {
  const s = await cpuUsageSampler.init({ procRoot: PROC, sysRoot: SYS, log: silentLogger() });
  const a = await s.refresh();
  t.deepEqual(a.points.find((p) => p.metric.name === 'cpu_usage')?.labels, { state: 'user', id: '0' });
});

test('cpu_usage refresh keeps the good lines of a bad /proc/stat', async (t) => {
  const root = join(FIXTURE_ROOT, 'bad', 'cpu_usage');
  const s = await cpuUsageSampler.init({ procRoot: root, sysRoot: SYS, log: silentLogger() });
  const r = await s.refresh();
  t.is(r.skipped, 3);
  t.is(r.points.length, 30);
  t.is(find(r.points, 'cpu_usage', 'system', '3')?.value, 200 * 10 ** 7);
  t.is(find(r.points, 'cpu_usage', 'system', '1'), undefined);
  t.is(find(r.points, 'cpu_usage', 'iowait', '2'), undefined);
});

test('cpu_usage is unsupported without procfs', async (t) => {
  await t.throwsAsync(cpuUsageSampler.init({ procRoot: '/nonexistent', sysRoot: SYS, log: silentLogger() }), {
    instanceOf: SamplerUnsupportedError,
  });
});

test('cpu_usage reads the live /proc', async (t) => {
  const s = await cpuUsageSampler.init({ procRoot: '/proc', sysRoot: '/sys', log: silentLogger() });
  const r = await s.refresh();
  t.is(r.skipped, 0);
  t.true(r.points.length > 0);
  t.truthy(find(r.points, 'cpu_usage', 'user', '0'));
});
