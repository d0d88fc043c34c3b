import test from 'ava';
import {
  decodeCgroupName,
  isUnlimited,
  parseKnownKeys,
  parseSingleValue,
} from '../../src/samplers/cgroup/parse.js';
import { parseCpuMax, parseCpuStatV2, parseIoStatV2, parsePressure } from '../../src/samplers/cgroup/parse-v2.js';
import {
  parseBlkioV1,
  parseCfsQuota,
  parseCpuacctStat,
  parseCpuacctUsage,
  parseCpuStatV1,
} from '../../src/samplers/cgroup/parse-v1.js';
import { parseU64 } from '../../src/metrics/u64.js';
import { splitFields } from '../../src/samplers/fields.js';
import { fixture } from '../helpers/fixtures.js';

// Fixtures: test/fixtures/cgroup/{v1,v2}/ hold real files copied from a 6.18
// kernel's root cgroups (v1 controllers and the cgroup2 root at /sys/fs/cgroup/unified);
// the docker-like child cgroups under them are hand-written in the kernel's documented formats.
const V2 = 'cgroup/v2/system.slice/docker-0123abcd.scope';
const V1CPU = 'cgroup/v1/cpu/docker/0123abcd';

const BIG = 9007199254740993n; // 2^53 + 1
const U64_MAX = 18446744073709551615n;

// ---------------------------------------------------------------- shared

test('parseSingleValue reads v2 values and "max"', (t) => {
  t.deepEqual(parseSingleValue(fixture(`${V2}/memory.current`)), { value: 268435456, unlimited: false, skipped: 0 });
  t.deepEqual(parseSingleValue(fixture(`${V2}/memory.high`)), { value: 1073741824, unlimited: false, skipped: 0 });
  t.deepEqual(parseSingleValue(fixture(`${V2}/memory.max`)), { value: undefined, unlimited: true, skipped: 0 });
  t.deepEqual(parseSingleValue(fixture(`${V2}/pids.current`)), { value: 17, unlimited: false, skipped: 0 });
  t.deepEqual(parseSingleValue(fixture(`${V2}/pids.max`)), { value: undefined, unlimited: true, skipped: 0 });
});

test('parseSingleValue reads v1 memory files; the huge v1 "unlimited" reads as unlimited', (t) => {
  t.deepEqual(parseSingleValue(fixture('cgroup/v1/memory/memory.usage_in_bytes')), {
    value: 674037760,
    unlimited: false,
    skipped: 0,
  });
  // real file: 9223372036854771712 = 2^63 - 4096
  t.deepEqual(parseSingleValue(fixture('cgroup/v1/memory/memory.limit_in_bytes')), {
    value: undefined,
    unlimited: true,
    skipped: 0,
  });
  t.deepEqual(parseSingleValue(fixture('cgroup/v1/memory/docker/0123abcd/memory.limit_in_bytes')), {
    value: 536870912,
    unlimited: false,
    skipped: 0,
  });
  t.deepEqual(parseSingleValue(fixture('cgroup/v1/cpu/cpu.cfs_period_us')), { value: 100000, unlimited: false, skipped: 0 });
});

test('parseSingleValue edge cases', (t) => {
  // no trailing newline, CRLF, surrounding blanks
  t.deepEqual(parseSingleValue('42'), { value: 42, unlimited: false, skipped: 0 });
  t.deepEqual(parseSingleValue('42\r\n'), { value: 42, unlimited: false, skipped: 0 });
  t.deepEqual(parseSingleValue('\n 42 \n\n'), { value: 42, unlimited: false, skipped: 0 });
  // past 2^53 but under 2^62: exact bigint
  t.deepEqual(parseSingleValue(`${BIG}\n`), { value: BIG, unlimited: false, skipped: 0 });
  t.deepEqual(parseSingleValue(`${2n ** 62n - 1n}\n`), { value: 2n ** 62n - 1n, unlimited: false, skipped: 0 });
  t.deepEqual(parseSingleValue(`${2n ** 62n}\n`), { value: undefined, unlimited: true, skipped: 0 });
  t.deepEqual(parseSingleValue(`${U64_MAX}\n`), { value: undefined, unlimited: true, skipped: 0 });
  // empty or malformed
  const bad = { value: undefined, unlimited: false, skipped: 1 };
  t.deepEqual(parseSingleValue(''), bad);
  t.deepEqual(parseSingleValue('\n'), bad);
  t.deepEqual(parseSingleValue('-1\n'), bad);
  t.deepEqual(parseSingleValue('12 34\n'), bad);
  t.deepEqual(parseSingleValue('12\n34\n'), bad);
  t.deepEqual(parseSingleValue('MAX\n'), bad);
  t.deepEqual(parseSingleValue(`${U64_MAX + 1n}\n`), bad);
});

test('parseKnownKeys reads v2 memory.events and memory.stat', (t) => {
  const events = parseKnownKeys(fixture(`${V2}/memory.events`), ['low', 'high', 'max', 'oom', 'oom_kill', 'oom_group_kill']);
  t.deepEqual(events, { values: [0, 0, 12, 1, 1, 0], skipped: 0 });
  const stat = parseKnownKeys(fixture(`${V2}/memory.stat`), ['anon', 'file', 'file_mapped', 'pgmajfault', 'thp_collapse_alloc']);
  t.deepEqual(stat, { values: [157286400, 104857600, 33554432, 17, 0], skipped: 0 });
});

test('parseKnownKeys reads the real v1 memory.stat and oom_control, and v2 cgroup.stat / cpu.stat', (t) => {
  const keys = ['cache', 'rss', 'mapped_file', 'total_rss', 'total_cache', 'total_pgmajfault', 'hierarchical_memory_limit'];
  const stat = parseKnownKeys(fixture('cgroup/v1/memory/memory.stat'), keys);
  t.deepEqual(stat, { values: [9420800, 4366336, 7671808, 166649856, 507580416, 6291, 9223372036854771712n], skipped: 0 });
  // limits in memory.stat stay exact bigints; isUnlimited tells them apart
  const limit = stat.values[6];
  t.true(limit !== undefined && isUnlimited(limit));
  t.false(isUnlimited(stat.values[1]!));
  t.false(isUnlimited(BIG));

  t.deepEqual(parseKnownKeys(fixture('cgroup/v1/memory/memory.oom_control'), ['oom_kill_disable', 'under_oom', 'oom_kill']), {
    values: [0, 0, 0],
    skipped: 0,
  });
  t.deepEqual(parseKnownKeys(fixture('cgroup/v1/memory/docker/0123abcd/memory.oom_control'), ['oom_kill']).values, [3]);
  t.deepEqual(parseKnownKeys(fixture('cgroup/v1/cpu/cpu.stat.local'), ['throttled_time']), { values: [0], skipped: 0 });
  t.deepEqual(parseKnownKeys(fixture('cgroup/v2/cgroup.stat'), ['nr_descendants', 'nr_dying_descendants']), { values: [0, 0], skipped: 0 });
  t.deepEqual(parseKnownKeys(fixture('cgroup/v2/cpu.stat'), ['usage_usec']).values, [1697719995]);
});

test('parseKnownKeys edge cases: blank lines, no trailing newline, bigints, malformed values, bare keys, extra fields, repeats, blanks around fields', (t) => {
  t.deepEqual(parseKnownKeys('', ['a']), { values: [undefined], skipped: 0 });
  t.deepEqual(parseKnownKeys('\n\n', ['a']), { values: [undefined], skipped: 0 });
  // the first of a repeated key is kept; neg, bare, c and the repeat are skipped
  const r = parseKnownKeys(`a 1\nbig ${U64_MAX}\nneg -3\nbare\nc 1 2\na 2\nd 4`, ['a', 'big', 'neg', 'bare', 'c', 'd']);
  t.deepEqual(r, { values: [1, U64_MAX, undefined, undefined, undefined, 4], skipped: 4 });
  // split on spaces, tabs and CRs as splitFields does, wherever they are
  t.deepEqual(parseKnownKeys('  a\t5\r\n\tb  6 \n', ['a', 'b']), { values: [5, 6], skipped: 0 });
  // a key is matched whole: neither a prefix nor an extension of it
  t.deepEqual(parseKnownKeys('rss 1\ntotal_rss 2\nrss_huge 3\n', ['total_rss', 'rss']), { values: [2, 1], skipped: 0 });
});

/** What parseKnownKeys must give: every line split, the keys looked up (the reader before it skipped unknown lines unsplit). */
function knownKeysBySplitting(text: string, keys: readonly string[]): { values: unknown[]; skipped: number } {
  const values: unknown[] = keys.map(() => undefined);
  let skipped = 0;
  for (const line of text.split('\n')) {
    const fields = splitFields(line);
    if (fields.length === 0) continue;
    const i = keys.indexOf(fields[0]!);
    if (i === -1) {
      if (fields.length < 2) skipped++;
      continue;
    }
    const v = fields.length === 2 ? parseU64(fields[1]!) : undefined;
    if (v === undefined || values[i] !== undefined) skipped++;
    else values[i] = v;
  }
  return { values, skipped };
}

test('parseKnownKeys gives what splitting every line gives, on random flat-keyed texts', (t) => {
  const words = ['a', 'ab', 'b', 'total_a', '', '7', '-1', `${U64_MAX}`, `${U64_MAX + 1n}`, 'x y'];
  const blanks = [' ', '  ', '\t', '\r', ''];
  let seed = 19;
  const pick = <T>(xs: readonly T[]): T => {
    seed = (seed * 1103515245 + 12345) % 2147483648;
    return xs[seed % xs.length]!;
  };
  for (let round = 0; round < 500; round++) {
    const lines: string[] = [];
    for (let l = 0; l < 1 + (round % 9); l++) lines.push([pick(blanks), pick(words), pick(blanks), pick(words), pick(blanks)].join(pick([' ', '\t'])));
    const text = lines.join('\n') + pick(['', '\n']);
    const keys = [pick(['a', 'ab', 'total_a']), pick(['b', 'a', 'x'])];
    t.deepEqual(parseKnownKeys(text, keys), knownKeysBySplitting(text, keys), JSON.stringify({ text, keys }));
  }
});

test('parseKnownKeys ignores unknown keys but counts lines without a value', (t) => {
  t.deepEqual(parseKnownKeys('x 1\ny oops\nz\nx 2\nw 3 4\n', ['x', 'w']), { values: [1, undefined], skipped: 3 });
});

test('parsePressure reads the cgroup pressure files', (t) => {
  t.deepEqual(parsePressure(fixture('cgroup/v2/cpu.pressure')), { some: 382031629, full: 0, skipped: 0 });
  t.deepEqual(parsePressure(fixture('cgroup/v2/io.pressure')), { some: 13154398, full: 11616743, skipped: 0 });
  t.deepEqual(parsePressure(fixture('cgroup/v2/memory.pressure')), { some: 0, full: 0, skipped: 0 });
  t.deepEqual(parsePressure(fixture(`${V2}/memory.pressure`)), { some: 48211, full: 40007, skipped: 0 });
  t.deepEqual(parsePressure(''), { some: undefined, full: undefined, skipped: 0 });
  t.deepEqual(parsePressure(`some avg10=0.00 avg60=0.00 avg300=0.00 total=${BIG}\nfull avg10=0.00 total=x`), {
    some: BIG,
    full: undefined,
    skipped: 1,
  });
});

test('decodeCgroupName undoes systemd \\xNN escapes', (t) => {
  t.is(decodeCgroupName('system-getty.slice'), 'system-getty.slice');
  t.is(decodeCgroupName('dev-disk-by\\x2duuid-abc.device'), 'dev-disk-by-uuid-abc.device');
  t.is(decodeCgroupName('run-user-1000-gvfs\\x2dfuse\\x2ddaemon.mount'), 'run-user-1000-gvfs-fuse-daemon.mount');
  t.is(decodeCgroupName('a\\x2Fb\\x20c'), 'a/b c');
  // UTF-8 escaped byte by byte; unescaped non-ASCII kept
  t.is(decodeCgroupName('caf\\xc3\\xa9-é.service'), 'café-é.service');
  // not UTF-8: one character per escape
  t.is(decodeCgroupName('x\\xff.scope'), 'x\u00ff.scope');
  // not an escape
  t.is(decodeCgroupName('a\\xg1\\x2'), 'a\\xg1\\x2');
  t.is(decodeCgroupName(''), '');
});

// ---------------------------------------------------------------- v2

test('parseCpuStatV2 reads a child cgroup, converting usec to ns', (t) => {
  t.deepEqual(parseCpuStatV2(fixture(`${V2}/cpu.stat`)), {
    usageNs: 8123456000,
    userNs: 6000123000,
    systemNs: 2123333000,
    nrPeriods: 1200,
    nrThrottled: 37,
    throttledNs: 912345000,
    nrBursts: 2,
    burstNs: 15000000,
    niceNs: 0,
    skipped: 0,
  });
});

test('parseCpuStatV2 reads the real root cpu.stat (no bandwidth fields there)', (t) => {
  t.deepEqual(parseCpuStatV2(fixture('cgroup/v2/cpu.stat')), {
    usageNs: 1697719995000,
    userNs: 1278501229000,
    systemNs: 419218766000,
    nrPeriods: undefined,
    nrThrottled: undefined,
    throttledNs: undefined,
    nrBursts: undefined,
    burstNs: undefined,
    niceNs: 0,
    skipped: 0,
  });
});

test('parseCpuStatV2 edge cases', (t) => {
  const empty = parseCpuStatV2('');
  t.is(empty.usageNs, undefined);
  t.is(empty.skipped, 0);
  // usec * 1000 past 2^53 turns bigint, exactly
  const s = parseCpuStatV2('usage_usec 9007199254741\nuser_usec 9007199254740\nsystem_usec x\nnr_periods\nthrottled_usec 1');
  t.is(s.usageNs, 9007199254741000n);
  t.is(s.userNs, 9007199254740000);
  t.is(s.systemNs, undefined);
  t.is(s.nrPeriods, undefined);
  t.is(s.throttledNs, 1000);
  t.is(s.skipped, 2);
});

test('parseCpuMax reads quota and period in ns', (t) => {
  t.deepEqual(parseCpuMax(fixture(`${V2}/cpu.max`)), {
    quotaNs: 50000000,
    periodNs: 100000000,
    unlimited: false,
    skipped: 0,
  });
  t.deepEqual(parseCpuMax('max 100000\n'), { quotaNs: undefined, periodNs: 100000000, unlimited: true, skipped: 0 });
  t.deepEqual(parseCpuMax('max 100000'), { quotaNs: undefined, periodNs: 100000000, unlimited: true, skipped: 0 });
  const bad = { quotaNs: undefined, periodNs: undefined, unlimited: false, skipped: 1 };
  t.deepEqual(parseCpuMax(''), bad);
  t.deepEqual(parseCpuMax('max\n'), bad);
  t.deepEqual(parseCpuMax('-1 100000\n'), bad);
  t.deepEqual(parseCpuMax('50000 x\n'), bad);
  t.deepEqual(parseCpuMax('50000 100000 7\n'), bad);
});

test('parseIoStatV2 reads devices, ignoring bare devices and other keys', (t) => {
  t.deepEqual(parseIoStatV2(fixture(`${V2}/io.stat`)), {
    devices: [
      { major: 254, minor: 0, rbytes: 1459200, wbytes: 314773504, rios: 192, wios: 353, dbytes: 0, dios: 0 },
      { major: 8, minor: 16, rbytes: 4096, wbytes: 0, rios: 1, wios: 0, dbytes: 0, dios: 0 },
    ],
    skipped: 0,
  });
});

test('parseIoStatV2 edge cases', (t) => {
  t.deepEqual(parseIoStatV2(''), { devices: [], skipped: 0 });
  // older kernels: no dbytes/dios; no trailing newline; bigint counters
  t.deepEqual(parseIoStatV2(`8:0 rbytes=${BIG} wbytes=2 rios=3 wios=4`), {
    devices: [{ major: 8, minor: 0, rbytes: BIG, wbytes: 2, rios: 3, wios: 4 }],
    skipped: 0,
  });
  const r = parseIoStatV2(
    [
      'x:0 rbytes=1 wbytes=2 rios=3 wios=4', // bad device
      '8:1 rbytes=1 wbytes=2 rios=3', // wios missing
      '8:2 rbytes=1 wbytes=-2 rios=3 wios=4', // bad value
      '8:3 rbytes=1 rbytes=1 wbytes=2 rios=3 wios=4', // repeated
      '8:4 cost.vrate=100.00 cost.usage=0', // no I/O yet: left out, not skipped
      '8:5 rbytes=1 wbytes=2 rios=3 wios=4 dbytes=5 dios=6',
    ].join('\n'),
  );
  t.deepEqual(r.devices, [{ major: 8, minor: 5, rbytes: 1, wbytes: 2, rios: 3, wios: 4, dbytes: 5, dios: 6 }]);
  t.is(r.skipped, 4);
});

// ---------------------------------------------------------------- v1

test('parseCpuacctUsage reads the real cpuacct.usage files', (t) => {
  t.deepEqual(parseCpuacctUsage(fixture('cgroup/v1/cpuacct/cpuacct.usage')), { ns: 1746041485088, skipped: 0 });
  t.deepEqual(parseCpuacctUsage(fixture('cgroup/v1/cpuacct/cpuacct.usage_user')), { ns: 1278497229513, skipped: 0 });
  t.deepEqual(parseCpuacctUsage(fixture('cgroup/v1/cpuacct/cpuacct.usage_sys')), { ns: 419210766458, skipped: 0 });
  t.deepEqual(parseCpuacctUsage(`${BIG}`), { ns: BIG, skipped: 0 });
  t.deepEqual(parseCpuacctUsage(''), { ns: undefined, skipped: 1 });
  t.deepEqual(parseCpuacctUsage('1 2\n'), { ns: undefined, skipped: 1 });
});

test('parseCpuacctStat keeps USER_HZ ticks', (t) => {
  t.deepEqual(parseCpuacctStat(fixture('cgroup/v1/cpuacct/cpuacct.stat')), {
    userTicks: 131489,
    systemTicks: 43114,
    skipped: 0,
  });
  t.deepEqual(parseCpuacctStat('user 5'), { userTicks: 5, systemTicks: undefined, skipped: 0 });
  t.deepEqual(parseCpuacctStat('user x\nsystem 3\n'), { userTicks: undefined, systemTicks: 3, skipped: 1 });
  t.deepEqual(parseCpuacctStat(''), { userTicks: undefined, systemTicks: undefined, skipped: 0 });
});

test('parseCfsQuota: -1 is unlimited, else µs returned as ns', (t) => {
  t.deepEqual(parseCfsQuota(fixture('cgroup/v1/cpu/cpu.cfs_quota_us')), { quotaNs: undefined, unlimited: true, skipped: 0 });
  t.deepEqual(parseCfsQuota(fixture(`${V1CPU}/cpu.cfs_quota_us`)), { quotaNs: 50000000, unlimited: false, skipped: 0 });
  t.deepEqual(parseCfsQuota('-1'), { quotaNs: undefined, unlimited: true, skipped: 0 });
  const bad = { quotaNs: undefined, unlimited: false, skipped: 1 };
  t.deepEqual(parseCfsQuota(''), bad);
  t.deepEqual(parseCfsQuota('-2\n'), bad);
  t.deepEqual(parseCfsQuota('max\n'), bad);
});

test('parseCpuStatV1 reads the real root and a throttled child', (t) => {
  t.deepEqual(parseCpuStatV1(fixture('cgroup/v1/cpu/cpu.stat')), {
    nrPeriods: 0,
    nrThrottled: 0,
    throttledNs: 0,
    nrBursts: 0,
    burstNs: 0,
    skipped: 0,
  });
  t.deepEqual(parseCpuStatV1(fixture(`${V1CPU}/cpu.stat`)), {
    nrPeriods: 3461,
    nrThrottled: 512,
    throttledNs: 40912387153,
    nrBursts: 0,
    burstNs: 0,
    skipped: 0,
  });
  // older kernels: no burst fields
  t.deepEqual(parseCpuStatV1(`nr_periods 1\nnr_throttled 0\nthrottled_time ${BIG}`), {
    nrPeriods: 1,
    nrThrottled: 0,
    throttledNs: BIG,
    nrBursts: undefined,
    burstNs: undefined,
    skipped: 0,
  });
  t.is(parseCpuStatV1('nr_periods 1.5\n').skipped, 1);
});

test('parseBlkioV1 reads per-device bytes and operations', (t) => {
  t.deepEqual(parseBlkioV1(fixture('cgroup/v1/blkio/docker/0123abcd/blkio.throttle.io_service_bytes')), {
    devices: [
      { major: 8, minor: 16, read: 1458176, write: 314773504, discard: 0 },
      { major: 8, minor: 0, read: 4096, write: 0, discard: 0 },
    ],
    total: 316235776,
    skipped: 0,
  });
  t.deepEqual(parseBlkioV1(fixture('cgroup/v1/blkio/docker/0123abcd/blkio.throttle.io_serviced')), {
    devices: [
      { major: 8, minor: 16, read: 192, write: 353, discard: 0 },
      { major: 8, minor: 0, read: 1, write: 0, discard: 0 },
    ],
    total: 546,
    skipped: 0,
  });
});

test('parseBlkioV1 reads the real root files (only "Total 0")', (t) => {
  t.deepEqual(parseBlkioV1(fixture('cgroup/v1/blkio/blkio.throttle.io_service_bytes')), { devices: [], total: 0, skipped: 0 });
  t.deepEqual(parseBlkioV1(fixture('cgroup/v1/blkio/blkio.throttle.io_serviced')), { devices: [], total: 0, skipped: 0 });
});

test('parseBlkioV1 edge cases', (t) => {
  t.deepEqual(parseBlkioV1(''), { devices: [], total: undefined, skipped: 0 });
  // pre-4.19 (no Discard), no trailing newline, bigint, an unknown op
  t.deepEqual(parseBlkioV1(`8:0 Read ${BIG}\n8:0 Write 1\n8:0 Sync 1\n8:0 Async 0\n8:0 Frob 9\n8:0 Total 1\nTotal ${BIG}`), {
    devices: [{ major: 8, minor: 0, read: BIG, write: 1 }],
    total: BIG,
    skipped: 0,
  });
  const r = parseBlkioV1(
    [
      '8:0 Read 1',
      '8:0 Write x', // bad value -> 8:0 lacks Write
      '8:16 Read 2',
      '8:16 Write 3',
      '8:16 Write 4', // repeated
      '8:16 Sync', // no value
      'sda Read 5', // bad device
      '8:32 Async y', // bad value of a known op
      'Total',
    ].join('\n'),
  );
  t.deepEqual(r.devices, [{ major: 8, minor: 16, read: 2, write: 3 }]);
  t.is(r.total, undefined);
  // Write x, repeat, bare Sync, sda, Async y, bare Total, and 8:0 without Write
  t.is(r.skipped, 7);
});
