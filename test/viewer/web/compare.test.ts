import test from 'ava';
import type { QuerySeries } from '../../../src/viewer/api.js';
import { binOnto, difference, offsetGrid, sourceRange } from '../../../src/viewer/web/compare-align.js';
import { compareLines } from '../../../src/viewer/web/compare-shape.js';

const s = (name: string, avg: (number | null)[]): QuerySeries => ({ id: name, name, labels: {}, avg, min: avg, max: avg });

test('two sources a day apart land on the same offsets', (t) => {
  const a = { origin: 1_000_000, t: [1_000_000, 1_001_000, 1_002_000], step: 1000 };
  const b = { origin: 87_400_000, t: [87_400_000, 87_401_000, 87_402_000, 87_403_000], step: 1000 };
  const grid = offsetGrid(a, b);
  t.deepEqual(grid.x, [0, 1, 2, 3]);
  t.is(grid.step, 1);
  t.deepEqual(binOnto(a, [10, 20, 30], grid, 'avg'), [10, 20, 30, null]);
  t.deepEqual(binOnto(b, [1, 2, 3, 4], grid, 'avg'), [1, 2, 3, 4]);
});

test('a finer source is binned onto the coarser step: mean, min or max of the steps in a column', (t) => {
  const a = { origin: 0, t: [0, 2000, 4000], step: 2000 };
  const b = { origin: 500, t: [500, 1500, 2500, 3500, 4500, 5500], step: 1000 };
  const grid = offsetGrid(a, b);
  t.is(grid.stepMs, 2000);
  t.deepEqual(grid.x, [0, 2, 4]);
  const vb = [1, 3, 5, null, 9, 11];
  t.deepEqual(binOnto(b, vb, grid, 'avg'), [2, 5, 10]);
  t.deepEqual(binOnto(b, vb, grid, 'max'), [3, 5, 11]);
  t.deepEqual(binOnto(b, vb, grid, 'min'), [1, 5, 9]);
});

test('a step that begins before its source\'s first sample pairs with the other\'s first step (by its middle)', (t) => {
  const a = { origin: 10_200, t: [10_000, 11_000], step: 1000 };
  const b = { origin: 0, t: [0, 1000], step: 1000 };
  const grid = offsetGrid(a, b);
  t.deepEqual(grid.x, [0, 1]);
  t.deepEqual(binOnto(a, [5, 6], grid, 'avg'), [5, 6]);
  t.deepEqual(binOnto(b, [7, 8], grid, 'avg'), [7, 8]);
  // one that begins 700 ms early is mostly before the start: a column of its own
  const early = { origin: 10_700, t: [10_000, 11_000], step: 1000 };
  const g2 = offsetGrid(early, b);
  t.deepEqual(g2.x, [-1, 0, 1]);
  t.deepEqual(binOnto(early, [5, 6], g2, 'avg'), [5, 6, null]);
  t.deepEqual(binOnto(b, [7, 8], g2, 'avg'), [null, 7, 8]);
});

test('difference is A − B where both have a value', (t) => {
  t.deepEqual(difference([5, null, 3, 1], [2, 1, null]), [3, null, null, null]);
  t.deepEqual(difference([], []), []);
});

test('a zoom in offsets asks each source for its own wall-clock range', (t) => {
  t.deepEqual(sourceRange(1_000_000, 30, 90), { start: 1_030_000, end: 1_090_000 });
});

test('compareLines: A and B per series name in one colour, and A − B', (t) => {
  const a = { t: [0, 1000, 2000], step: 1000, series: [s('p50', [1, 2, 3]), s('p99', [10, 20, 30])] };
  const b = { t: [5000, 6000], step: 1000, series: [s('p99', [15, 15]), s('max', [40, 50])] };
  const c = compareLines(a, 0, b, 5000);
  t.deepEqual(c.main.x, [0, 1, 2]);
  t.deepEqual(
    c.main.lines.map((l) => [l.label, l.role, l.series, l.values]),
    [
      ['A p50', 'main', 0, [1, 2, 3]],
      ['B p50', 'b', 0, [null, null, null]],
      ['A p99', 'main', 1, [10, 20, 30]],
      ['B p99', 'b', 1, [15, 15, null]],
      ['A max', 'main', 2, [null, null, null]],
      ['B max', 'b', 2, [40, 50, null]],
    ],
  );
  t.deepEqual(
    c.diff.lines.map((l) => [l.label, l.values]),
    [
      ['A − B p50', [null, null, null]],
      ['A − B p99', [-5, 5, null]],
      ['A − B max', [null, null, null]],
    ],
  );
});

test('compareLines: the sources as the user named them (before=, after=)', (t) => {
  const a = { metric: 'memory_available', t: [0], step: 1000, series: [{ ...s('total', [3]) }] };
  const b = { metric: 'memory_available', t: [0], step: 1000, series: [{ ...s('total', [1]) }] };
  const c = compareLines(a, 0, b, 0, { a: 'before', b: 'after' });
  t.deepEqual(
    c.main.lines.map((l) => l.label),
    ['before memory_available', 'after memory_available'],
  );
  t.deepEqual(
    c.diff.lines.map((l) => [l.label, l.values]),
    [['before − after memory_available', [2]]],
  );
});
