import test from 'ava';
import type { QueryResult, QuerySeries } from '../../../src/viewer/api.js';
import { alignToOffset, difference } from '../../../src/viewer/query/align.js';

const series = (avg: (number | null)[], name = 'read'): QuerySeries => ({
  id: `m/${name}`,
  name,
  labels: { op: name },
  avg,
  min: avg.map((x) => (x === null ? null : x - 1)),
  max: avg.map((x) => (x === null ? null : x + 1)),
});

test('alignToOffset: times since the source start, nothing else changed', (t) => {
  const r: QueryResult = { metric: 'm', fn: 'value', unit: 'bytes', start: 10_500, end: 13_000, step: 1000, t: [10_000, 11_000, 12_000, 13_000], series: [series([1, 2, 3, 4])] };
  const a = alignToOffset(r, 10_200);
  t.deepEqual(a.t, [-200, 800, 1800, 2800]);
  t.is(a.start, 300);
  t.is(a.end, 2800);
  t.is(a.step, 1000);
  t.is(a.series, r.series);
  t.deepEqual(r.t, [10_000, 11_000, 12_000, 13_000]);
});

test('difference: b at the nearest step within half a step, else null', (t) => {
  const aT = [0, 1000, 2000, 3000, 4000];
  const bT = [400, 1400, 2600, 4000];
  const a = series([10, 20, 30, 40, null]);
  const b = series([1, 2, 3, 4]);
  const d = difference(a, b, aT, bT);
  // 0 ↔ 400 (b 1), 1000 ↔ 1400 (b 2), 2000: 1400 and 2600 are 600 away → null,
  // 3000 ↔ 2600 (b 3), 4000 ↔ 4000 but a is null → null
  t.deepEqual(d.avg, [9, 18, null, 37, null]);
  // min: (a − 1) − (b − 1), max: (a + 1) − (b + 1)
  t.deepEqual(d.min, [9, 18, null, 37, null]);
  t.deepEqual(d.max, [9, 18, null, 37, null]);
  t.is(d.id, a.id);
  t.is(d.name, 'read');
  t.deepEqual(d.labels, { op: 'read' });
});

test('difference: nulls in b, other names, an explicit step', (t) => {
  const a = series([5, 5, 5], 'p99');
  const b = series([null, 2, 7], 'p90');
  const d = difference(a, b, [0, 10, 20], [1, 11, 21]);
  t.deepEqual(d.avg, [null, 3, -2]);
  t.is(d.name, 'p99 − p90');
  // with a 1 ms step, 1 ms away is more than half a step
  t.deepEqual(difference(a, b, [0, 10, 20], [1, 11, 21], 1).avg, [null, null, null]);
  // b with no steps
  t.deepEqual(difference(a, series([]), [0, 10, 20], []).avg, [null, null, null]);
});
