import test from 'ava';
import { join } from 'node:path';
import { METRICS, VMSTAT_SOURCES } from '../../src/samplers/memory/vmstat/metrics.js';
import { addU64, indexSources, parseVmstat } from '../../src/samplers/memory/vmstat/parse.js';
import { memoryVmstatSampler } from '../../src/samplers/memory/vmstat/sampler.js';
import type { Point } from '../../src/samplers/types.js';
import { SamplerUnsupportedError } from '../../src/samplers/types.js';
import { silentLogger } from '../../src/log/logger.js';
import { FIXTURE_ROOT, fixture, PROC, SYS } from '../helpers/fixtures.js';

const byName = (points: readonly Point[]): Map<string, Point['value']> =>
  new Map(points.map((p) => [p.metric.name, p.value]));

const parsed = (text: string): Map<string, number | bigint | undefined> => {
  const { values } = parseVmstat(text);
  return new Map(VMSTAT_SOURCES.map((s, i) => [s.metric.name, values[i]]));
};

test('vmstat declarations are unique counters', (t) => {
  const names = METRICS.map((m) => m.name);
  t.is(new Set(names).size, names.length);
  t.true(METRICS.every((m) => m.kind === 'counter' && m.labels.length === 0));
  t.throws(() => indexSources([VMSTAT_SOURCES[0]!, VMSTAT_SOURCES[0]!]));
});

test('addU64 stays exact past 2^53', (t) => {
  t.is(addU64(1, 2), 3);
  t.is(addU64(Number.MAX_SAFE_INTEGER, 1), 9007199254740992n);
  t.is(addU64(2n ** 60n, 1), 2n ** 60n + 1n);
  t.is(addU64(1n, 2n), 3);
});

test('parseVmstat reads the fixture /proc/vmstat', (t) => {
  const r = parseVmstat(fixture('rootfs/proc/vmstat'));
  t.is(r.skipped, 0);
  const v = parsed(fixture('rootfs/proc/vmstat'));
  t.is(v.get('memory_numa_hit'), 2090486);
  t.is(v.get('memory_numa_interleave'), 1121);
  t.is(v.get('memory_page_faults'), 2452573);
  t.is(v.get('memory_major_page_faults'), 815);
  t.is(v.get('memory_paged_in'), 799405 * 1024);
  t.is(v.get('memory_paged_out'), 1006680 * 1024);
  t.is(v.get('memory_swapped_in'), 0);
  t.is(v.get('memory_workingset_refaults'), 25051);
  t.is(v.get('memory_oom_kills'), 0);
  // this kernel prints every curated field
  t.true([...v.values()].every((x) => x !== undefined));
});

test('parseVmstat sums the components present', (t) => {
  const v = parsed('pgscan_kswapd 10\npgscan_direct 5\npgsteal_kswapd 7\nworkingset_refault 9\nallocstall 3\n');
  t.is(v.get('memory_pages_scanned'), 15);
  t.is(v.get('memory_pages_reclaimed'), 7);
  t.is(v.get('memory_workingset_refaults'), 9);
  t.is(v.get('memory_allocation_stalls'), 3);
  t.is(v.get('memory_numa_hit'), undefined);
});

test('parseVmstat skips and counts malformed lines, drops a sum with a bad component', (t) => {
  const r = parseVmstat(fixture('bad/memory_vmstat/vmstat'));
  // numa_miss negative, a line without value, pgscan_direct garbage, pswpin repeated
  t.is(r.skipped, 4);
  const v = parsed(fixture('bad/memory_vmstat/vmstat'));
  t.is(v.get('memory_numa_hit'), 1982085);
  t.is(v.get('memory_numa_miss'), undefined);
  t.is(v.get('memory_numa_local'), 1982085);
  t.is(v.get('memory_page_faults'), 2335642);
  t.is(v.get('memory_paged_in'), 2n ** 64n);
  t.is(v.get('memory_pages_scanned'), undefined);
  t.is(v.get('memory_pages_reclaimed'), 105);
  t.is(v.get('memory_swapped_in'), undefined);
  t.is(v.get('memory_oom_kills'), 2);
});

test('memory_vmstat refresh reads the fixture root', async (t) => {
  const s = await memoryVmstatSampler.init({ procRoot: PROC, sysRoot: SYS, log: silentLogger() });
  const r = await s.refresh();
  t.is(r.skipped, 0);
  t.is(r.points.length, VMSTAT_SOURCES.length);
  const v = byName(r.points);
  t.is(v.get('memory_numa_local'), 2090486);
  t.is(v.get('memory_paged_out'), 1006680 * 1024);
  t.is(v.get('memory_compaction_stalls'), 0);
});

test('memory_vmstat refresh keeps the good lines of a bad vmstat', async (t) => {
  const root = join(FIXTURE_ROOT, 'bad', 'memory_vmstat');
  const s = await memoryVmstatSampler.init({ procRoot: root, sysRoot: SYS, log: silentLogger() });
  const r = await s.refresh();
  t.is(r.skipped, 4);
  t.deepEqual([...byName(r.points).keys()], [
    'memory_numa_hit',
    'memory_numa_local',
    'memory_page_faults',
    'memory_major_page_faults',
    'memory_paged_in',
    'memory_pages_reclaimed',
    'memory_oom_kills',
  ]);
});

test('memory_vmstat is unsupported without procfs', async (t) => {
  await t.throwsAsync(memoryVmstatSampler.init({ procRoot: '/nonexistent', sysRoot: SYS, log: silentLogger() }), {
    instanceOf: SamplerUnsupportedError,
  });
});

test('memory_vmstat reads the live /proc', async (t) => {
  const s = await memoryVmstatSampler.init({ procRoot: '/proc', sysRoot: '/sys', log: silentLogger() });
  const r = await s.refresh();
  t.is(r.skipped, 0);
  t.true(r.points.length > 0);
  t.truthy(byName(r.points).get('memory_page_faults'));
});
