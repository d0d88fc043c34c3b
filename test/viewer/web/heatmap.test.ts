import test from 'ava';
import { colorLevel, gridMax, LEVELS, palette, rampColor } from '../../../src/viewer/web/heatmap-colors.js';
import { cellRects, colAt, type Grid, logFloor, rowAt, rowRange } from '../../../src/viewer/web/heatmap-geometry.js';

test('the ramp runs from pale yellow to dark violet through its stops', (t) => {
  t.is(rampColor(0), 'rgb(255,245,214)');
  t.is(rampColor(1), 'rgb(59,15,112)');
  t.is(rampColor(0.5), 'rgb(242,115,75)');
  // halfway between the first two stops
  t.is(rampColor(0.125), `rgb(${Math.round((255 + 253) / 2)},${Math.round((245 + 196) / 2)},${Math.round((214 + 107) / 2)})`);
  t.is(rampColor(-1), rampColor(0));
  t.is(rampColor(7), rampColor(1));
  const p = palette();
  t.is(p.length, LEVELS);
  t.is(p[0], rampColor(0));
  t.is(p[LEVELS - 1], rampColor(1));
});

test('log colours: empty buckets blank, one event still visible, the maximum at the top', (t) => {
  t.is(colorLevel(0, 1000, 'log'), -1);
  t.is(colorLevel(null, 1000, 'log'), -1);
  t.is(colorLevel(Number.NaN, 1000, 'log'), -1);
  t.true(colorLevel(1, 1_000_000, 'log') >= 1);
  t.is(colorLevel(1_000_000, 1_000_000, 'log'), LEVELS - 1);
  // log scale: sqrt(max) sits about halfway
  const mid = colorLevel(1000, 1_000_000, 'log');
  t.true(Math.abs(mid - (LEVELS - 1) / 2) <= 1, `level ${mid}`);
  // monotonic
  let prev = -1;
  for (let v = 1; v <= 1e6; v *= 3) {
    const l = colorLevel(v, 1e6, 'log');
    t.true(l >= prev);
    prev = l;
  }
});

test('linear colours: zero is a drawn cell (an idle CPU), values proportional', (t) => {
  t.is(colorLevel(0, 10, 'linear'), 0);
  t.is(colorLevel(10, 10, 'linear'), LEVELS - 1);
  t.is(colorLevel(5, 10, 'linear'), Math.round(0.5 * (LEVELS - 1)));
  t.is(colorLevel(20, 10, 'linear'), LEVELS - 1);
  t.is(colorLevel(null, 10, 'linear'), -1);
  t.is(gridMax([[1, null, 3], [Number.NaN, 2]]), 3);
  t.is(gridMax([]), 0);
});

const identity = { xPos: (v: number) => v, yPos: (v: number) => 100 - v, left: 0, width: 100 };

test('cells: one rectangle per value, snapped to pixels, at least 1 px', (t) => {
  const grid: Grid = { x: [0, 10, 20], step: 10, lower: [0, 50], upper: [50, 80], values: [[1, null], [2, 3], [null, 0]] };
  const cells = cellRects(grid, identity);
  t.deepEqual(
    cells.map((c) => [c.col, c.row, c.x, c.y, c.w, c.h, c.value]),
    [
      [0, 0, 0, 50, 10, 50, 1],
      [1, 0, 10, 50, 10, 50, 2],
      [1, 1, 10, 20, 10, 30, 3],
      [2, 1, 20, 20, 10, 30, 0],
    ],
  );
  // a column far narrower than a pixel still gets one
  const thin = cellRects({ x: [0], step: 0.01, lower: [0], upper: [0.001], values: [[5]] }, identity);
  t.is(thin[0]?.w, 1);
  t.is(thin[0]?.h, 1);
  // a sliver of a row grows about its middle to the least height
  const grown = cellRects({ x: [0], step: 10, lower: [40], upper: [40.5], values: [[5]] }, { ...identity, minHeight: 3 });
  t.deepEqual([grown[0]?.y, grown[0]?.h], [Math.round(59.75 - 1.5), 3]);
  const tall = cellRects({ x: [0], step: 10, lower: [0], upper: [50], values: [[5]] }, { ...identity, minHeight: 3 });
  t.deepEqual([tall[0]?.y, tall[0]?.h], [50, 50]);
});

test('cells: columns outside the plotting area are left out', (t) => {
  const grid: Grid = { x: [-50, 0, 90, 200], step: 10, lower: [0], upper: [1], values: [[1], [1], [1], [1]] };
  const cols = cellRects(grid, identity).map((c) => c.col);
  t.deepEqual(cols, [1, 2]);
});

test('cells on a log axis: a bucket from 0 is drawn from the floor, rows span their bounds', (t) => {
  const log = { xPos: (v: number) => v, yPos: (v: number) => 100 - 20 * Math.log10(v), left: 0, width: 100, yFloor: 0.5 };
  const grid: Grid = { x: [0], step: 10, lower: [0, 1, 10], upper: [1, 10, 100], values: [[1, 1, 1]] };
  const cells = cellRects(grid, log);
  // rows: [0.5 → 1], [1 → 10], [10 → 100]: 100 − 20·log10
  t.deepEqual(
    cells.map((c) => [c.y, c.h]),
    [
      [100, Math.round(100 - 20 * Math.log10(0.5)) - 100],
      [80, 20],
      [60, 20],
    ],
  );
});

test('log floor and ranges', (t) => {
  t.is(logFloor([1024, 2048], [2047, 4095]), 1024);
  t.is(logFloor([0, 1, 2], [0.99, 1.99, 2.99]), 0.495);
  t.is(logFloor([0], [1]), 0.5);
  t.is(logFloor([], []), 1);
  t.deepEqual(rowRange([1024, 2048], [2047, 4095], true), [1024, 4095]);
  t.deepEqual(rowRange([0, 1, 2], [1, 2, 3], false), [0, 3]);
  t.deepEqual(rowRange([], [], true), [1, 10]);
  t.deepEqual(rowRange([5], [5], true), [5, 50]);
});

test('hover: the row and the column under the cursor', (t) => {
  const lower = [0, 1024, 2048];
  const upper = [1023, 2047, 4095];
  t.is(rowAt(1500, lower, upper), 1);
  t.is(rowAt(0.3, lower, upper), 0);
  t.is(rowAt(5000, lower, upper), -1);
  const x = [100, 102, 104, 106];
  t.is(colAt(100, x, 2), 0);
  t.is(colAt(103.9, x, 2), 1);
  t.is(colAt(107.99, x, 2), 3);
  t.is(colAt(108, x, 2), -1);
  t.is(colAt(99, x, 2), -1);
});
test('cells: neighbouring columns share an edge when sample times jitter or the scale is fractional (no seams)', (t) => {
  const grid: Grid = { x: [0, 10.3, 19.8, 30.4], step: 10, lower: [0], upper: [1], values: [[1], [1], [1], [1]] };
  const scaled = { ...identity, xPos: (v: number) => v * 1.37 + 0.4, width: 200 };
  const cells = cellRects(grid, scaled);
  for (let i = 1; i < cells.length; i++) t.is((cells[i - 1]?.x ?? 0) + (cells[i - 1]?.w ?? 0), cells[i]?.x ?? Number.NaN);
  // a gap of missing columns stays a gap
  const gap = cellRects({ x: [0, 40], step: 10, lower: [0], upper: [1], values: [[1], [1]] }, identity);
  t.deepEqual(gap.map((c) => [c.x, c.w]), [[0, 10], [40, 10]]);
});
