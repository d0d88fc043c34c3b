import test from 'ava';
import { join } from 'node:path';
import { MEMINFO_FIELDS } from '../../src/samplers/memory/meminfo/metrics.js';
import { parseMeminfo } from '../../src/samplers/memory/meminfo/parse.js';
import { memoryMeminfoSampler } from '../../src/samplers/memory/meminfo/sampler.js';
import type { Point } from '../../src/samplers/types.js';
import { SamplerUnsupportedError } from '../../src/samplers/types.js';
import { silentLogger } from '../../src/log/logger.js';
import { FIXTURE_ROOT, fixture, PROC, SYS } from '../helpers/fixtures.js';

const byName = (points: readonly Point[]): Map<string, Point['value']> =>
  new Map(points.map((p) => [p.metric.name, p.value]));

const parsed = (text: string): Map<string, number> =>
  new Map(parseMeminfo(text).entries.map((e) => [e.field.metric.name, e.value]));

test('meminfo declarations are unique, gauges, bytes or pages', (t) => {
  const names = MEMINFO_FIELDS.map((f) => f.metric.name);
  t.is(new Set(names).size, names.length);
  t.is(new Set(MEMINFO_FIELDS.map((f) => f.field)).size, names.length);
  for (const f of MEMINFO_FIELDS) {
    t.is(f.metric.kind, 'gauge');
    t.is(f.metric.unit, f.kb ? 'bytes' : 'pages');
    t.true(f.metric.name.startsWith('memory_'));
    t.false(f.metric.name.endsWith('_bytes'));
  }
});

test('parseMeminfo reads the fixture /proc/meminfo', (t) => {
  const m = parseMeminfo(fixture('rootfs/proc/meminfo'));
  t.is(m.skipped, 0);
  // every field this machine prints is known
  t.is(m.entries.length, 54);
  const v = parsed(fixture('rootfs/proc/meminfo'));
  t.is(v.get('memory_total'), 24684084 * 1024);
  t.is(v.get('memory_available'), 23874800 * 1024);
  t.is(v.get('memory_active_anon'), 21284 * 1024);
  t.is(v.get('memory_committed_as'), 1208676 * 1024);
  t.is(v.get('memory_vmalloc_total'), 34359738367 * 1024);
  t.is(v.get('memory_hugepages_pool'), 0);
  t.is(v.get('memory_hugepage_size'), 2048 * 1024);
});

test('parseMeminfo ignores unknown fields without counting them', (t) => {
  const m = parseMeminfo('MemTotal: 10 kB\nFutureField: 3 kB\nFutureCount: 7\nFutureBroken:\n');
  t.is(m.skipped, 0);
  t.is(m.entries.length, 1);
  t.is(m.entries[0]?.value, 10240);
});

test('parseMeminfo skips and counts malformed lines of known fields', (t) => {
  const m = parseMeminfo(fixture('bad/memory_meminfo/meminfo'));
  // MemFree without value, Buffers garbage, Cached without kB, a line without
  // a colon, HugePages_Free with kB, MemTotal repeated
  t.is(m.skipped, 6);
  t.deepEqual(
    m.entries.map((e) => [e.field.field, e.value]),
    [
      ['MemTotal', 24684084 * 1024],
      ['MemAvailable', 24115712 * 1024],
      ['HugePages_Total', 4],
      ['Hugepagesize', 2048 * 1024],
    ],
  );
});

test('parseMeminfo reads values in place as the old substring parse did', (t) => {
  // the parse before values were read in place: digits up to a blank, then the unit trimmed
  const reference = (line: string, kb: boolean): number | undefined => {
    const rest = line.slice(line.indexOf(':') + 1);
    let i = 0;
    while (i < rest.length && rest[i] === ' ') i++;
    let j = i;
    while (j < rest.length && rest[j] !== ' ') j++;
    const digits = rest.slice(i, j);
    if (!/^\d{1,20}$/.test(digits) || BigInt(digits) > 2n ** 64n - 1n) return undefined;
    const unit = rest.slice(j).trim();
    if (kb ? unit !== 'kB' : unit !== '') return undefined;
    return kb ? Number(digits) * 1024 : Number(digits);
  };
  const values = ['0', '7', '0012', '999999999999999', '1000000000000000', '9007199254740993', '18446744073709551615',
    '18446744073709551616', '123456789012345678901', '', '-1', '1.5', '12a', '1\t', '\t1', '1e3'];
  const units = ['', ' kB', 'kB', ' kB ', '  kB', ' kB\t', ' kB\r', ' KB', ' kB x', ' \t', ' ', ' k', ' kBB', '\u00a0kB'];
  let checked = 0;
  for (const [key, kb] of [['MemTotal', true], ['HugePages_Total', false]] as const) {
    for (const v of values) {
      for (const u of units) {
        for (const lead of [' ', '      ', '']) {
          const line = `${key}:${lead}${v}${u}`;
          const m = parseMeminfo(`${line}\n`);
          const want = reference(line, kb);
          t.is(m.entries[0]?.value, want, JSON.stringify(line));
          t.is(m.skipped, want === undefined ? 1 : 0, JSON.stringify(line));
          checked++;
        }
      }
    }
  }
  t.is(checked, 2 * values.length * units.length * 3);
  t.is(parseMeminfo('MemTotal: 18446744073709551615 kB\n').entries[0]?.value, Number(2n ** 64n - 1n) * 1024);
});

test('parseMeminfo on empty text', (t) => {
  t.deepEqual(parseMeminfo(''), { entries: [], skipped: 0 });
  t.deepEqual(parseMeminfo('\n\n'), { entries: [], skipped: 0 });
});

test('memory_meminfo refresh reads the fixture root', async (t) => {
  const s = await memoryMeminfoSampler.init({ procRoot: PROC, sysRoot: SYS, log: silentLogger() });
  const r = await s.refresh();
  t.is(r.skipped, 0);
  t.is(r.points.length, 54);
  const v = byName(r.points);
  t.is(v.get('memory_total'), 24684084 * 1024);
  t.is(v.get('memory_cached'), 408536 * 1024);
  t.is(v.get('memory_hugepages_free'), 0);
  t.true(r.points.every((p) => typeof p.value === 'number' && Object.keys(p.labels).length === 0));
  const again = await s.refresh();
  t.is(again.points[0]?.labels, r.points[0]?.labels);
});

test('memory_meminfo refresh keeps the good lines of a bad meminfo', async (t) => {
  const root = join(FIXTURE_ROOT, 'bad', 'memory_meminfo');
  const s = await memoryMeminfoSampler.init({ procRoot: root, sysRoot: SYS, log: silentLogger() });
  const r = await s.refresh();
  t.is(r.skipped, 6);
  t.deepEqual([...byName(r.points).keys()], [
    'memory_total',
    'memory_available',
    'memory_hugepages_pool',
    'memory_hugepage_size',
  ]);
});

test('memory_meminfo is unsupported without procfs', async (t) => {
  await t.throwsAsync(memoryMeminfoSampler.init({ procRoot: '/nonexistent', sysRoot: SYS, log: silentLogger() }), {
    instanceOf: SamplerUnsupportedError,
  });
});

test('memory_meminfo reads the live /proc', async (t) => {
  const s = await memoryMeminfoSampler.init({ procRoot: '/proc', sysRoot: '/sys', log: silentLogger() });
  const r = await s.refresh();
  t.is(r.skipped, 0);
  t.true(r.points.length > 0);
  const total = byName(r.points).get('memory_total');
  t.true(typeof total === 'number' && total > 0);
});
