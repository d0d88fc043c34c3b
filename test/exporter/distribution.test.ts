import test from 'ava';
import { distributionLines } from '../../src/exporter/distribution.js';
import { formatOf } from '../../src/exporter/names.js';
import { fromValues } from '../../src/metrics/histogram.js';
import { h } from '../helpers/frames.js';

const ns = formatOf('nanoseconds');
const count = formatOf('count');

function lines(hist: Parameters<typeof distributionLines>[2], unit: 'nanoseconds' | 'count', g = 3): string[] {
  const r = distributionLines('lat', '{host="a"', hist, unit, (unit === 'count' ? count : ns)!, g);
  const text = r.text.trimEnd().split('\n');
  if (r.lines !== text.length) throw new Error(`returned ${r.lines} lines, wrote ${text.length}`);
  return text;
}

test('every bucket from 0 to the highest non-empty one, cumulative, then +Inf, _sum and _count', (t) => {
  // values 0, 3, 3, 17 (bucket 16 holds 16..17)
  t.deepEqual(lines(h([0, 1], [3, 2], [16, 1]), 'count'), [
    'lat_bucket{host="a",le="0"} 1',
    'lat_bucket{host="a",le="1"} 1',
    'lat_bucket{host="a",le="2"} 1',
    'lat_bucket{host="a",le="3"} 3',
    'lat_bucket{host="a",le="4"} 3',
    'lat_bucket{host="a",le="5"} 3',
    'lat_bucket{host="a",le="6"} 3',
    'lat_bucket{host="a",le="7"} 3',
    'lat_bucket{host="a",le="8"} 3',
    'lat_bucket{host="a",le="9"} 3',
    'lat_bucket{host="a",le="10"} 3',
    'lat_bucket{host="a",le="11"} 3',
    'lat_bucket{host="a",le="12"} 3',
    'lat_bucket{host="a",le="13"} 3',
    'lat_bucket{host="a",le="14"} 3',
    'lat_bucket{host="a",le="15"} 3',
    'lat_bucket{host="a",le="17"} 4',
    'lat_bucket{host="a",le="+Inf"} 4',
    'lat_sum{host="a"} 23', // 0 + 3 + 3 + 17 (upper bounds)
    'lat_count{host="a"} 4',
  ]);
});

test('le and _sum are in the base unit, exact', (t) => {
  // 1000 ns falls in bucket 63 = [960, 1023]
  const out = lines(fromValues([1000, 1000]), 'nanoseconds');
  t.is(out.length, 64 + 3);
  t.is(out[63], 'lat_bucket{host="a",le="0.000001023"} 2');
  t.is(out[62], 'lat_bucket{host="a",le="0.000000959"} 0');
  t.is(out[65], 'lat_sum{host="a"} 0.000002046');
});

test('an empty histogram is +Inf, _sum and _count at 0', (t) => {
  t.deepEqual(lines(h(), 'count'), ['lat_bucket{host="a",le="+Inf"} 0', 'lat_sum{host="a"} 0', 'lat_count{host="a"} 0']);
});

test('a lower grouping power merges buckets: fewer lines, same count, coarser bounds', (t) => {
  const values = [1, 5, 100, 1000, 50_000, 1_000_000];
  const full = lines(fromValues(values), 'count');
  const g0 = lines(fromValues(values), 'count', 0);
  t.true(g0.length < full.length / 4, `${g0.length} vs ${full.length}`);
  t.is(g0.at(-1), 'lat_count{host="a"} 6');
  t.is(g0.at(-3), 'lat_bucket{host="a",le="+Inf"} 6');
  // g=0 buckets are powers of two: 1_000_000 is in [2^19, 2^20 − 1]
  t.is(g0.at(-4), 'lat_bucket{host="a",le="1048575"} 6');
  // the counts below each le never decrease
  const counts = g0.filter((l) => l.includes('_bucket')).map((l) => Number(l.split(' ')[1]));
  t.deepEqual(counts, [...counts].sort((a, b) => a - b));
});
