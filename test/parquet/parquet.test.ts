import test from 'ava';
import { existsSync, mkdtempSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { columnName, columnsOf, type ColumnSpec } from '../../src/parquet/columns.js';
import type { Cell, ColumnarGroup } from '../../src/parquet/group.js';
import { ParquetStream, type FileMetadata } from '../../src/parquet/parquet.js';
import { bucketCount, fromValues, percentiles, toDense, type SparseHistogram } from '../../src/metrics/histogram.js';
import { m, makeDescriptor } from '../helpers/frames.js';
import { Duck } from '../helpers/duckdb.js';

const d = makeDescriptor(
  'mixed',
  {
    cpu_usage: m('counter', 'nanoseconds', ['state', 'id'], 'CPU time'),
    load_average: m('gauge', 'count', ['period'], 'Load average'),
    syscall_latency: m('histogram', 'nanoseconds', ['op'], 'Syscall latency'),
  },
  [
    ['cpu_usage', ['user', '3']],
    ['load_average', ['1m']],
    ['syscall_latency', ['read/write']],
  ],
);
const [CPU, LOAD, LAT] = columnsOf(d) as [ColumnSpec, ColumnSpec, ColumnSpec];
const META: FileMetadata = { source: 'rezolus-nats', version: '0.1.0', hosts: ['db-7', 'web01'], samplingIntervalMs: 1000, descriptions: { cpu_usage: 'CPU time' } };
const T = 1_735_689_600_000_000_000n;

let dir: string;
let duck: Duck;

test.before(async () => {
  dir = mkdtempSync(join(tmpdir(), 'rezolus-parquet-test-'));
  duck = await Duck.open();
});
test.after.always(() => rmSync(dir, { recursive: true, force: true }));

/** A group of rows `from`..`to`-1: `cells(i)` gives each column's cell of row i. */
function group(from: number, to: number, specs: readonly ColumnSpec[], cells: (i: number) => readonly Cell[]): ColumnarGroup {
  const g: ColumnarGroup = { timestamps: [], hosts: [], columns: new Map(specs.map((s) => [s.name, { spec: s, cells: [] }])) };
  for (let i = from; i < to; i++) {
    g.timestamps.push(T + BigInt(i) * 1_000_000_000n);
    g.hosts.push(i % 2 === 0 ? 'web01' : 'db-7');
    cells(i).forEach((c, k) => g.columns.get((specs[k] as ColumnSpec).name)?.cells.push(c));
  }
  return g;
}

function sameList(got: unknown, want: SparseHistogram | null): boolean {
  const items = (got as { items: bigint[] } | null)?.items;
  if (want === null) return got === null;
  const dense = toDense(want);
  return items !== undefined && items.length === dense.length && items.every((c, k) => c === BigInt(dense[k] as number));
}

test('column names: metric then label values in order, / and % escaped', (t) => {
  t.deepEqual(columnsOf(d).map((c) => c?.name), ['cpu_usage/user/3', 'load_average/1m', 'syscall_latency/read%2Fwrite']);
  t.is(columnName('memory_total', []), 'memory_total');
  t.is(columnName('x', ['50%']), 'x/50%25');
});

test('DuckDB reads back every value, the column types and metadata, and the file metadata; row groups as written', async (t) => {
  const h1 = fromValues([100, 1000, 1000]);
  const h2 = fromValues([100, 1000, 1000, 50_000, 2n ** 63n]);
  const cells = (i: number): Cell[] => [i === 5 ? null : 2n ** 63n + BigInt(i), i * 0.25, i % 3 === 0 ? null : i % 2 === 0 ? h1 : h2];
  const path = join(dir, 'all.parquet');
  const file = new ParquetStream(path, 'test');
  file.write(group(0, 600, [CPU, LOAD, LAT], cells));
  const afterOne = file.bytes;
  t.true(afterOne > 4, 'the first group is written before the next arrives');
  file.write(group(600, 1200, [CPU, LOAD, LAT], cells));
  file.write(group(1200, 1300, [CPU, LOAD, LAT], cells));
  t.false(existsSync(path), 'not under its name before finish');
  await file.finish(META);
  t.deepEqual(readdirSync(dir).filter((f) => f.startsWith('all.parquet.tmp-')), [], 'no temporary file left');

  const types = await duck.rows(`DESCRIBE SELECT * FROM read_parquet('${path}')`);
  t.deepEqual(
    types.map((r) => [r.column_name, r.column_type]),
    [['timestamp', 'UBIGINT'], ['host', 'VARCHAR'], ['cpu_usage/user/3', 'UBIGINT'], ['load_average/1m', 'DOUBLE'], ['syscall_latency/read%2Fwrite', 'UBIGINT[]']],
  );
  const back = await duck.rows(`SELECT * FROM read_parquet('${path}')`);
  t.is(back.length, 1300);
  const bad = back.filter((r, i) => {
    const [c, g, hist] = cells(i) as [bigint | null, number, SparseHistogram | null];
    return !(r.timestamp === T + BigInt(i) * 1_000_000_000n && r.host === (i % 2 === 0 ? 'web01' : 'db-7') && r['cpu_usage/user/3'] === c &&
      r['load_average/1m'] === g && sameList(r['syscall_latency/read%2Fwrite'], hist));
  });
  t.is(bad.length, 0);
  t.deepEqual(await duck.groupSizes(path), [600, 600, 100]);
  for (const g of [0, 2]) {
    t.deepEqual(await duck.columnMeta(path, 'cpu_usage/user/3', g), { metric: 'cpu_usage', metric_type: 'counter', unit: 'nanoseconds', labels: '{"state":"user","id":"3"}' });
    t.deepEqual(await duck.columnMeta(path, 'syscall_latency/read%2Fwrite', g), {
      metric: 'syscall_latency', metric_type: 'histogram', unit: 'nanoseconds', labels: '{"op":"read/write"}', grouping_power: '3', max_value_power: '64',
    });
    t.deepEqual(await duck.columnMeta(path, 'timestamp', g), { metric_type: 'timestamp', unit: 'nanoseconds' });
  }
  t.like(await duck.fileMeta(path), { source: 'rezolus-nats', version: '0.1.0', hosts: '["db-7","web01"]', sampling_interval_ms: '1000', descriptions: '{"cpu_usage":"CPU time"}' });
  t.is(toDense(h2).length, bucketCount(3, 64));
});

test('a column that first appears in a later group is null in the earlier ones; one that disappears is null after', async (t) => {
  const path = join(dir, 'late.parquet');
  const file = new ParquetStream(path, 'test');
  const h1 = fromValues([7, 7, 900]);
  file.write(group(0, 3, [LOAD], (i) => [i]));
  file.write(group(3, 5, [LOAD, CPU], (i) => [i, BigInt(i * 10)]));
  file.write(group(5, 7, [LAT, CPU], (i) => [h1, BigInt(i * 10)]));
  await file.finish(META);
  const types = await duck.rows(`DESCRIBE SELECT * FROM read_parquet('${path}')`);
  t.deepEqual(types.map((r) => r.column_name), ['timestamp', 'host', 'cpu_usage/user/3', 'load_average/1m', 'syscall_latency/read%2Fwrite'], 'sorted by name');
  const back = await duck.rows(`SELECT "cpu_usage/user/3" AS c, "load_average/1m" AS g, "syscall_latency/read%2Fwrite" AS h FROM read_parquet('${path}')`);
  t.deepEqual(back.map((r) => [r.c, r.g]), [[null, 0], [null, 1], [null, 2], [30n, 3], [40n, 4], [50n, null], [60n, null]]);
  t.deepEqual(back.map((r) => sameList(r.h, r.h === null ? null : h1)), [true, true, true, true, true, true, true]);
  t.deepEqual(back.map((r) => r.h === null), [true, true, true, true, true, false, false]);
  t.deepEqual(await duck.groupSizes(path), [3, 2, 2]);
  t.deepEqual(await duck.columnMeta(path, 'cpu_usage/user/3', 0), { metric: 'cpu_usage', metric_type: 'counter', unit: 'nanoseconds', labels: '{"state":"user","id":"3"}' }, 'metadata on an added chunk too');
});

test('an empty recording is a valid file with no rows; abort leaves nothing', async (t) => {
  const path = join(dir, 'empty.parquet');
  await new ParquetStream(path, 'test').finish({ ...META, hosts: [] });
  const [row] = await duck.rows(`SELECT count(*) AS n FROM read_parquet('${path}')`);
  t.is(row?.n, 0n);
  const aborted = join(dir, 'aborted.parquet');
  const file = new ParquetStream(aborted, 'test');
  file.write(group(0, 3, [LOAD], (i) => [i]));
  file.abort();
  t.false(existsSync(aborted));
  t.deepEqual(readdirSync(dir).filter((f) => f.startsWith('aborted')), []);
  t.throws(() => file.write(group(0, 1, [LOAD], () => [1])), { message: /already finished/ });
});

test("a killed recorder's temporary file is removed by the next recording of the same file; a live one's is kept", async (t) => {
  const path = join(dir, 'stale.parquet');
  const dead = join(dir, 'stale.parquet.tmp-999999999-0-0');
  const mine = join(dir, `stale.parquet.tmp-${process.pid}-9-9`);
  writeFileSync(dead, 'partial');
  writeFileSync(mine, 'in use');
  await new ParquetStream(path, 'test').finish(META);
  t.false(existsSync(dead));
  t.true(existsSync(mine));
  rmSync(mine);
});

test('a series column may not take the name of timestamp or host', (t) => {
  const file = new ParquetStream(join(dir, 'reserved.parquet'), 'test');
  t.throws(() => file.write(group(0, 1, [{ ...LOAD, name: 'host' }], () => [1])), { message: /may not be named host/ });
  file.abort();
});

test('a percentile computed in SQL from the bucket list equals ours', async (t) => {
  const values = [3, 17, 100, 100, 250, 1000, 1000, 1000, 40_000, 1_000_000, 2n ** 40n];
  const hist = fromValues(values);
  const path = join(dir, 'pct.parquet');
  const file = new ParquetStream(path, 'test');
  file.write(group(0, 1, [LAT], () => [hist]));
  await file.finish(META);
  for (const q of [0.5, 0.9, 0.99, 1]) {
    // rank max(1, ceil(q·N)); the first bucket whose running count reaches it; its upper bound (g = 3)
    const [r] = await duck.rows(`
      WITH b AS (SELECT unnest(l) AS c, generate_subscripts(l, 1) - 1 AS i FROM (SELECT "syscall_latency/read%2Fwrite" AS l FROM read_parquet('${path}'))),
      r AS (SELECT i, sum(c) OVER (ORDER BY i) AS cum, sum(c) OVER () AS n FROM b),
      hit AS (SELECT min(i) AS i FROM r WHERE cum >= greatest(1, ceil(${q} * n)))
      SELECT CASE WHEN i < 16 THEN i::UHUGEINT
        ELSE (1::UHUGEINT << (3 + i // 8 - 1)::UHUGEINT) + (i % 8)::UHUGEINT * (1::UHUGEINT << (i // 8 - 1)::UHUGEINT)
          + (1::UHUGEINT << (i // 8 - 1)::UHUGEINT) - 1 END AS upper
      FROM hit`);
    t.is(BigInt(r?.upper as bigint), percentiles(hist, [q])?.[0] ?? -1n, `q=${q}`);
  }
});
