import test from 'ava';
import {
  axisIncrs,
  axisLabel,
  formatDuration,
  formatOffset,
  formatPercent,
  formatTick,
  formatValue,
  OFFSET_INCRS,
  significant,
  unitScale,
} from '../../../src/viewer/web/units.js';

test('unitScale reads time, bytes, counts and rates', (t) => {
  t.deepEqual(unitScale('nanoseconds'), { kind: 'time', factor: 1, name: '', perSecond: false });
  t.deepEqual(unitScale('microseconds/s'), { kind: 'time', factor: 1000, name: '', perSecond: true });
  t.deepEqual(unitScale('bytes/s'), { kind: 'bytes', factor: 1, name: '', perSecond: true });
  t.deepEqual(unitScale('events'), { kind: 'count', factor: 1, name: 'events', perSecond: false });
  t.deepEqual(unitScale('count'), { kind: 'count', factor: 1, name: '', perSecond: false });
});

test('significant: three digits, trailing zeros dropped, no exponent', (t) => {
  t.is(significant(1.5), '1.5');
  t.is(significant(1.2345), '1.23');
  t.is(significant(120), '120');
  t.is(significant(0.000123456), '0.000123');
  t.is(significant(123456), '123456');
  t.is(significant(0), '0');
  t.is(significant(-2.5), '-2.5');
});

test('time: ns to µs, ms, s; other time units scaled to ns first', (t) => {
  t.is(formatValue(850, 'nanoseconds'), '850 ns');
  t.is(formatValue(1500, 'nanoseconds'), '1.5 µs');
  t.is(formatValue(350_000, 'nanoseconds'), '350 µs');
  t.is(formatValue(2_500_000, 'nanoseconds'), '2.5 ms');
  t.is(formatValue(3e9, 'nanoseconds'), '3 s');
  t.is(formatValue(1500, 'microseconds'), '1.5 ms');
  t.is(formatValue(250, 'milliseconds'), '250 ms');
  t.is(formatValue(0.5, 'nanoseconds'), '0.5 ns');
});

test('rates carry /s: CPU time per second, bytes per second, events per second', (t) => {
  // time per second is CPUs busy
  t.is(formatValue(350e6, 'nanoseconds/s'), '0.35 cores');
  t.is(formatValue(1.02e9, 'nanoseconds/s'), '1.02 cores');
  t.is(formatValue(1e9, 'nanoseconds/s'), '1 core');
  t.is(formatValue(2000, 'milliseconds/s'), '2 cores');
  t.is(formatValue(1.5 * 1024 * 1024, 'bytes/s'), '1.5 MiB/s');
  t.is(formatValue(12_345, 'events/s'), '12.3k events/s');
  t.is(formatValue(42, 'count/s'), '42/s');
});

test('bytes in powers of 1024', (t) => {
  t.is(formatValue(512, 'bytes'), '512 B');
  t.is(formatValue(1024, 'bytes'), '1 KiB');
  t.is(formatValue(1536, 'bytes'), '1.5 KiB');
  t.is(formatValue(8 * 1024 ** 3, 'bytes'), '8 GiB');
  t.is(formatValue(3 * 1024 ** 4, 'bytes'), '3 TiB');
});

test('counts get SI prefixes and their name; unknown values a dash', (t) => {
  t.is(formatValue(42, 'events'), '42 events');
  t.is(formatValue(2_500_000, 'packets'), '2.5M packets');
  t.is(formatValue(7, 'count'), '7');
  t.is(formatValue(null, 'bytes'), '—');
  t.is(formatValue(Number.NaN, 'bytes'), '—');
  t.is(formatValue(Number.POSITIVE_INFINITY, 'bytes'), '—');
});

test('ticks: null (a log axis minor tick) is empty, counts leave the name to the axis label', (t) => {
  t.is(formatTick(null, 'nanoseconds'), '');
  t.is(formatTick(undefined, 'bytes'), '');
  t.is(formatTick(1e6, 'nanoseconds'), '1 ms');
  t.is(formatTick(0, 'nanoseconds/s'), '0');
  t.is(formatTick(2500, 'events/s'), '2.5k');
  t.is(formatTick(4 * 1024 * 1024, 'bytes/s'), '4 MiB/s');
  t.is(axisLabel('events/s'), 'events/s');
  t.is(axisLabel('nanoseconds/s'), 'cores');
  t.is(formatTick(2e9, 'nanoseconds/s'), '2');
  t.is(formatTick(5e8, 'nanoseconds/s'), '0.5');
  t.is(axisLabel('count/s'), '/s');
  t.is(axisLabel('bytes'), 'bytes');
  t.is(axisLabel('count'), '');
});

test('percent, durations and offsets', (t) => {
  t.is(formatPercent(0.4567), '45.7%');
  t.is(formatPercent(1), '100%');
  t.is(formatPercent(null), '—');
  t.is(formatDuration(850), '850 ms');
  t.is(formatDuration(1234), '1.2 s');
  t.is(formatDuration(12_345), '12.3 s');
  t.is(formatDuration(184_000), '3 min 4 s');
  t.is(formatDuration(180_000), '3 min');
  t.is(formatDuration(2 * 3600_000 + 5 * 60_000), '2 h 5 min');
  t.is(formatDuration(3 * 86_400_000 + 4 * 3600_000), '3 d 4 h');
  t.is(formatOffset(5), '+0:05');
  t.is(formatOffset(750), '+12:30');
  t.is(formatOffset(3725), '+1:02:05');
  t.is(formatOffset(-65), '-1:05');
  t.is(formatOffset(null), '');
});

test('axis increments: powers of two for bytes, uPlot default otherwise; offsets in clock steps', (t) => {
  const incrs = axisIncrs('bytes/s');
  t.truthy(incrs);
  t.true(incrs?.includes(4 * 1024 * 1024));
  t.true(incrs?.every((v) => Math.log2(v) % 1 === 0));
  t.is(axisIncrs('nanoseconds'), undefined);
  t.true(OFFSET_INCRS.includes(60) && OFFSET_INCRS.includes(300) && OFFSET_INCRS.includes(3600));
  t.deepEqual([...OFFSET_INCRS], [...OFFSET_INCRS].sort((a, b) => a - b));
});
