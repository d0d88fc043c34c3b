import test from 'ava';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { parseLoadavg, parsePressure, parseSchedStat } from '../../src/samplers/scheduler/procs/parse.js';
import { schedulerProcsSampler } from '../../src/samplers/scheduler/procs/sampler.js';
import type { Point } from '../../src/samplers/types.js';
import { SamplerUnsupportedError } from '../../src/samplers/types.js';
import { silentLogger } from '../../src/log/logger.js';
import { FIXTURE_ROOT, fixture, PROC, SYS } from '../helpers/fixtures.js';

/** `name{label=value,...}` -> value */
const series = (points: readonly Point[]): Map<string, Point['value']> =>
  new Map(
    points.map((p) => {
      const labels = Object.entries(p.labels).map(([k, v]) => `${k}=${v}`);
      return [labels.length === 0 ? p.metric.name : `${p.metric.name}{${labels.join(',')}}`, p.value];
    }),
  );

test('parseSchedStat reads the fixture /proc/stat', (t) => {
  t.deepEqual(parseSchedStat(fixture('rootfs/proc/stat')), {
    contextSwitches: 905347,
    forks: 6820,
    interrupts: 297920,
    running: 2,
    blocked: 0,
    skipped: 0,
  });
});

test('parseSchedStat keeps u64 counters exact and tolerates a missing newline', (t) => {
  const s = parseSchedStat('ctxt 18446744073709551615\nintr 9007199254740993 1 2\nprocs_running 1');
  t.is(s.contextSwitches, 18446744073709551615n);
  t.is(s.interrupts, 9007199254740993n);
  t.is(s.running, 1);
  t.is(s.forks, undefined);
  t.is(s.skipped, 0);
});

test('parseSchedStat skips and counts malformed scheduler lines', (t) => {
  // ctxt garbage, processes without value
  t.deepEqual(parseSchedStat(fixture('bad/scheduler_procs/stat')), {
    contextSwitches: undefined,
    forks: undefined,
    interrupts: 291909,
    running: 3,
    blocked: 1,
    skipped: 2,
  });
});

test('parseLoadavg reads the three averages', (t) => {
  t.deepEqual(parseLoadavg(fixture('rootfs/proc/loadavg')), { values: [0.04, 0.11, 0.05], skipped: 0 });
  t.deepEqual(parseLoadavg('12.50 3.00 0.99 1/2 3\n'), { values: [12.5, 3, 0.99], skipped: 0 });
  t.deepEqual(parseLoadavg(fixture('bad/scheduler_procs/loadavg')), { values: [0.04, undefined, 0.05], skipped: 1 });
  t.deepEqual(parseLoadavg('0.5'), { values: [0.5, undefined, undefined], skipped: 2 });
});

test('parsePressure reads the total of some and full', (t) => {
  t.deepEqual(parsePressure(fixture('rootfs/proc/pressure/cpu')), { some: 8218067, full: 0, skipped: 0 });
  t.deepEqual(parsePressure(fixture('rootfs/proc/pressure/io')), { some: 3013239, full: 2766454, skipped: 0 });
  // older kernels print no full line for cpu
  t.deepEqual(parsePressure('some avg10=0.00 avg60=0.00 avg300=0.00 total=5\n'), {
    some: 5,
    full: undefined,
    skipped: 0,
  });
  t.deepEqual(parsePressure(fixture('bad/scheduler_procs/pressure/cpu')), {
    some: 8038879,
    full: undefined,
    skipped: 1,
  });
  t.deepEqual(parsePressure('some avg10=1.00\nnoise\n'), { some: undefined, full: undefined, skipped: 1 });
});

test('scheduler_procs refresh reads the fixture root', async (t) => {
  const s = await schedulerProcsSampler.init({ procRoot: PROC, sysRoot: SYS, log: silentLogger() });
  const r = await s.refresh();
  t.is(r.skipped, 0);
  // 5 from /proc/stat, 3 load averages, 3 resources x some/full
  t.is(r.points.length, 14);
  const v = series(r.points);
  t.is(v.get('scheduler_context_switches'), 905347);
  t.is(v.get('scheduler_forks'), 6820);
  t.is(v.get('scheduler_interrupts'), 297920);
  t.is(v.get('scheduler_processes_running'), 2);
  t.is(v.get('scheduler_processes_blocked'), 0);
  t.is(v.get('scheduler_load_average{period=1m}'), 0.04);
  t.is(v.get('scheduler_load_average{period=5m}'), 0.11);
  t.is(v.get('scheduler_load_average{period=15m}'), 0.05);
  t.is(v.get('scheduler_pressure{resource=cpu,kind=some}'), 8218067);
  t.is(v.get('scheduler_pressure{resource=io,kind=full}'), 2766454);
  t.is(v.get('scheduler_pressure{resource=memory,kind=some}'), 0);
  const again = await s.refresh();
  for (let i = 0; i < r.points.length; i++) t.is(again.points[i]?.labels, r.points[i]?.labels);
});

test('scheduler_procs refresh keeps the good values of bad input and works without io pressure', async (t) => {
  const root = join(FIXTURE_ROOT, 'bad', 'scheduler_procs');
  const s = await schedulerProcsSampler.init({ procRoot: root, sysRoot: SYS, log: silentLogger() });
  const r = await s.refresh();
  // ctxt, processes, load 5m, cpu full
  t.is(r.skipped, 4);
  t.deepEqual(
    [...series(r.points)],
    [
      ['scheduler_interrupts', 291909],
      ['scheduler_processes_running', 3],
      ['scheduler_processes_blocked', 1],
      ['scheduler_load_average{period=1m}', 0.04],
      ['scheduler_load_average{period=15m}', 0.05],
      ['scheduler_pressure{resource=cpu,kind=some}', 8038879],
      ['scheduler_pressure{resource=memory,kind=some}', 42],
      ['scheduler_pressure{resource=memory,kind=full}', 7],
    ],
  );
});

test('scheduler_procs works with /proc/stat alone (no PSI, no loadavg)', async (t) => {
  const root = mkdtempSync(join(tmpdir(), 'sched-procs-'));
  try {
    writeFileSync(join(root, 'stat'), readFileSync(join(PROC, 'stat')));
    const s = await schedulerProcsSampler.init({ procRoot: root, sysRoot: SYS, log: silentLogger() });
    const r = await s.refresh();
    t.is(r.skipped, 0);
    t.is(r.points.length, 5);
    t.true(r.points.every((p) => p.metric.name !== 'scheduler_pressure'));
  } finally {
    rmSync(root, { recursive: true, force: true });
  }
});

test('scheduler_procs is unsupported without /proc/stat', async (t) => {
  await t.throwsAsync(schedulerProcsSampler.init({ procRoot: '/nonexistent', sysRoot: SYS, log: silentLogger() }), {
    instanceOf: SamplerUnsupportedError,
  });
});

test('scheduler_procs reads the live /proc', async (t) => {
  const s = await schedulerProcsSampler.init({ procRoot: '/proc', sysRoot: '/sys', log: silentLogger() });
  const r = await s.refresh();
  t.is(r.skipped, 0);
  t.true(r.points.length >= 8);
  const v = series(r.points);
  t.truthy(v.get('scheduler_context_switches'));
  t.is(typeof v.get('scheduler_load_average{period=1m}'), 'number');
});
