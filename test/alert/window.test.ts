/** SampleWindow's windowed percentiles and counts against the histogram module's subtract + percentiles, on random cumulative histograms. */
import test from 'ava';
import { percentiles, subtract, totalCount, type SparseHistogram } from '../../src/metrics/histogram.js';
import { SampleWindow } from '../../src/alert/window.js';

/** A small deterministic PRNG (mulberry32). */
function rng(seed: number): () => number {
  let a = seed;
  return () => {
    a = (a + 0x6d2b79f5) | 0;
    let t = Math.imul(a ^ (a >>> 15), 1 | a);
    t = (t + Math.imul(t ^ (t >>> 7), 61 | t)) ^ t;
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

function randomHistogram(r: () => number, buckets: number): SparseHistogram {
  const index = [...new Set(Array.from({ length: buckets }, () => Math.floor(r() * 496)))].sort((a, b) => a - b);
  return { groupingPower: 3, maxValuePower: 64, index, count: index.map(() => 1 + Math.floor(r() * 1000)) };
}

/** base + more events (some in new buckets): a later cumulative snapshot. */
function grown(r: () => number, base: SparseHistogram): SparseHistogram {
  const extra = randomHistogram(r, Math.floor(r() * 6));
  const counts = new Map<number, number>();
  base.index.forEach((i, k) => counts.set(i, base.count[k] as number));
  extra.index.forEach((i, k) => counts.set(i, (counts.get(i) ?? 0) + (r() < 0.3 ? 0 : (extra.count[k] as number))));
  const index = [...counts.keys()].sort((a, b) => a - b);
  return { groupingPower: 3, maxValuePower: 64, index, count: index.map((i) => counts.get(i) as number) };
}

test('windowed quantiles and counts equal subtract + percentiles on 20 000 random pairs, resets included', (t) => {
  const r = rng(17);
  const qs = [0.5, 0.9, 0.99, 0.999, 0.9999, 1, 0.07];
  let checked = 0;
  let resets = 0;
  for (let i = 0; i < 20_000; i++) {
    const base = randomHistogram(r, 1 + Math.floor(r() * 40));
    // one case in ten: a counter reset (the later snapshot is an unrelated, smaller one)
    const last = r() < 0.1 ? randomHistogram(r, 1 + Math.floor(r() * 5)) : grown(r, base);
    const diff = subtract(last, base);
    if (diff === undefined) resets++;
    for (const q of qs) {
      const w = new SampleWindow(10_000);
      w.push(0, base, 1, false);
      w.push(1000, last, 1, false);
      const want = diff === undefined ? undefined : (percentiles(diff, [q])?.map(Number)[0] ?? null);
      const got = w.value({ kind: 'quantile', q });
      if (got !== want) return t.fail(`case ${i} q ${q}: ${got} vs ${want}`);
      checked++;
    }
    const w = new SampleWindow(10_000);
    w.push(0, base, 1, false);
    w.push(1000, last, 1, false);
    t.is(w.value({ kind: 'count' }), diff === undefined ? undefined : totalCount(diff));
  }
  t.true(resets > 1000, `resets covered: ${resets}`);
  t.is(checked, 20_000 * qs.length);
});
