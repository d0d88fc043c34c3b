import test from 'ava';
import { parseCpuList } from '../../src/samplers/cpu/cores/parse.js';
import { cpuCoresSampler } from '../../src/samplers/cpu/cores/sampler.js';
import { SamplerUnsupportedError } from '../../src/samplers/types.js';
import { silentLogger } from '../../src/log/logger.js';
import { PROC, SYS } from '../helpers/fixtures.js';

test('parseCpuList reads ranges and singles', (t) => {
  t.deepEqual(parseCpuList('0-1\n'), [0, 1]);
  t.deepEqual(parseCpuList('0-3,8,10-11'), [0, 1, 2, 3, 8, 10, 11]);
  t.deepEqual(parseCpuList('5'), [5]);
  t.deepEqual(parseCpuList(''), []);
});

test('parseCpuList rejects garbage', (t) => {
  t.is(parseCpuList('0-'), undefined);
  t.is(parseCpuList('3-1'), undefined);
  t.is(parseCpuList('a,b'), undefined);
});

test('cpu_cores reads the fixture root', async (t) => {
  const s = await cpuCoresSampler.init({ procRoot: PROC, sysRoot: SYS, log: silentLogger() });
  const r = await s.refresh();
  t.is(r.skipped, 0);
  t.is(r.points.length, 1);
  t.is(r.points[0]?.metric.name, 'cpu_cores');
  t.is(r.points[0]?.value, 2);
});

test('cpu_cores is unsupported without sysfs', async (t) => {
  await t.throwsAsync(cpuCoresSampler.init({ procRoot: PROC, sysRoot: '/nonexistent', log: silentLogger() }), {
    instanceOf: SamplerUnsupportedError,
  });
});
