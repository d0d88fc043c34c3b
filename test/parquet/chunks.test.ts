import test from 'ava';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { ColumnSpec } from '../../src/parquet/columns.js';
import type { ColumnarGroup } from '../../src/parquet/group.js';
import { ParquetStream } from '../../src/parquet/parquet.js';
import { fromDense, toDense, type SparseHistogram } from '../../src/metrics/histogram.js';
import { Duck } from '../helpers/duckdb.js';

const SPEC: ColumnSpec = { name: 'lat', metric: 'lat', kind: 'histogram', unit: 'nanoseconds', labels: {}, groupingPower: 3, maxValuePower: 64 };

let dir: string;
let duck: Duck;
test.before(async () => {
  dir = mkdtempSync(join(tmpdir(), 'rezolus-hchunk-test-'));
  duck = await Duck.open();
});
test.after.always(() => rmSync(dir, { recursive: true, force: true }));

/** A deterministic pseudo-random sequence (xorshift32). */
function rng(seed: number): () => number {
  let x = seed;
  return () => {
    x ^= x << 13;
    x ^= x >>> 17;
    x ^= x << 5;
    return (x >>> 0) / 2 ** 32;
  };
}

async function roundTrip(file: string, cells: (SparseHistogram | null)[]): Promise<(string[] | null)[]> {
  const path = join(dir, file);
  const s = new ParquetStream(path, 'test');
  s.write({ timestamps: cells.map((_, i) => BigInt(i)), hosts: cells.map(() => 'h'), columns: new Map([['lat', { spec: SPEC, cells }]]) } satisfies ColumnarGroup);
  await s.finish({ source: 's', version: 'v', hosts: ['h'], samplingIntervalMs: 1000, descriptions: {} });
  const rows = await duck.rows(`SELECT lat FROM read_parquet('${path}') ORDER BY timestamp`);
  return rows.map((r) => (r.lat === null ? null : (r.lat as { items: bigint[] }).items.map(String)));
}

const dense = (h: SparseHistogram | null): string[] | null => (h === null ? null : toDense(h).map(String));

test('random histograms with nulls between them read back bucket for bucket', async (t) => {
  const next = rng(42);
  const cells: (SparseHistogram | null)[] = [];
  for (let r = 0; r < 700; r++) {
    if (next() < 0.15) {
      cells.push(null);
      continue;
    }
    const buckets = new Array<number>(496).fill(0);
    const n = Math.floor(next() * 60);
    for (let k = 0; k < n; k++) buckets[Math.floor(next() * 496)] = Math.floor(next() * 2 ** 40) * (next() < 0.5 ? 1 : 2 ** 12);
    cells.push(fromDense(buckets));
  }
  cells.push(null, null);
  const back = await roundTrip('random.parquet', cells);
  t.is(back.length, cells.length);
  t.is(back.filter((b, i) => JSON.stringify(b) !== JSON.stringify(dense(cells[i] ?? null))).length, 0);
});

test('edge values: empty, the first and last bucket, counts up to 2^53 − 1, equal neighbours, zero counts kept sparse', async (t) => {
  const h = (index: number[], count: number[]): SparseHistogram => ({ groupingPower: 3, maxValuePower: 64, index, count });
  const cells = [
    h([], []),
    h([0, 495], [1, Number.MAX_SAFE_INTEGER]),
    h([10, 11, 12, 200], [7, 7, 7, 7]),
    h([3, 4], [0, 5]),
    null,
  ];
  t.deepEqual(await roundTrip('edges.parquet', cells), cells.map(dense));
});

test('only nulls, and a bad bucket index is refused rather than written', async (t) => {
  t.deepEqual(await roundTrip('nulls.parquet', [null, null, null]), [null, null, null]);
  const s = new ParquetStream(join(dir, 'bad.parquet'), 'test');
  const bad: SparseHistogram = { groupingPower: 3, maxValuePower: 64, index: [5, 5], count: [1, 1] };
  t.throws(() => s.write({ timestamps: [1n], hosts: ['h'], columns: new Map([['lat', { spec: SPEC, cells: [bad] }]]) }), { message: /out of order or range/ });
  s.abort();
});

test('counters and gauges: 32-bit boundaries, 2^53 − 1, bigints up to 2^64 − 1, negative and fractional gauges, runs of nulls', async (t) => {
  const counter: ColumnSpec = { name: 'c', metric: 'c', kind: 'counter', unit: 'count', labels: {} };
  const gauge: ColumnSpec = { name: 'g', metric: 'g', kind: 'gauge', unit: 'count', labels: {} };
  const counters = [0, 1, 2 ** 32 - 1, 2 ** 32, 2 ** 32 + 1, 2 ** 53 - 1, 2n ** 53n + 1n, 2n ** 64n - 1n, null, null, 7];
  const gauges = [-1.5, 0, 1e300, null, 3, -0, 2 ** 60, 0.1, null, null, null];
  const path = join(dir, 'scalars.parquet');
  const s = new ParquetStream(path, 'test');
  s.write({
    timestamps: counters.map((_, i) => BigInt(i)),
    hosts: counters.map(() => 'h'),
    columns: new Map([['c', { spec: counter, cells: counters }], ['g', { spec: gauge, cells: gauges }]]),
  });
  await s.finish({ source: 's', version: 'v', hosts: ['h'], samplingIntervalMs: 1000, descriptions: {} });
  const rows = await duck.rows(`SELECT c, g FROM read_parquet('${path}') ORDER BY timestamp`);
  t.deepEqual(rows.map((r) => r.c), counters.map((c) => (c === null ? null : BigInt(c))));
  t.deepEqual(rows.map((r) => r.g), gauges);
});
