import test from 'ava';
import { DuckDBInstance, type DuckDBConnection } from '@duckdb/node-api';
import { existsSync, mkdtempSync, readdirSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { columnName, columnsOf } from '../../src/record/columns.js';
import { writeParquetFile, type RecordRow } from '../../src/record/parquet.js';
import { writeParquetInWorker } from '../../src/record/write.js';
import { bucketCount, fromValues, percentiles, toDense } from '../../src/metrics/histogram.js';
import { m, makeDescriptor } from '../helpers/frames.js';

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

let dir: string;
let con: DuckDBConnection;

test.before(async () => {
  dir = mkdtempSync(join(tmpdir(), 'rezolus-parquet-test-'));
  con = await (await DuckDBInstance.create(':memory:')).connect();
});
test.after.always(() => rmSync(dir, { recursive: true, force: true }));

/** A BLOB or VARCHAR cell as text. */
function text(v: unknown): string {
  if (typeof v === 'string') return v;
  const bytes = (v as { bytes?: Uint8Array }).bytes;
  return bytes === undefined ? String(v) : Buffer.from(bytes).toString();
}

async function rows(sql: string): Promise<Record<string, unknown>[]> {
  return (await con.runAndReadAll(sql)).getRowObjects() as Record<string, unknown>[];
}

test('column names: metric then label values in order, / and % escaped', (t) => {
  t.deepEqual(columnsOf(d).map((c) => c?.name), ['cpu_usage/user/3', 'load_average/1m', 'syscall_latency/read%2Fwrite']);
  t.is(columnName('memory_total', []), 'memory_total');
  t.is(columnName('x', ['50%']), 'x/50%25');
});

test('DuckDB reads back every value, the column types and metadata, and the file metadata', async (t) => {
  const columns = columnsOf(d).filter((c) => c !== undefined);
  const h1 = toDense(fromValues([100, 1000, 1000]));
  const h2 = toDense(fromValues([100, 1000, 1000, 50_000, 2n ** 63n]));
  const input: RecordRow[] = [];
  for (let i = 0; i < 1300; i++) {
    input.push({
      timestampNs: 1_735_689_600_000_000_000n + BigInt(i) * 1_000_000_000n,
      host: i % 2 === 0 ? 'web01' : 'db-7',
      cells: [i === 5 ? null : 2n ** 63n + BigInt(i), i * 0.25, i % 3 === 0 ? null : i % 2 === 0 ? h1 : h2],
    });
  }
  const path = join(dir, 'all.parquet');
  await writeParquetFile(path, columns, input, { source: 'rezolus-nats', version: '0.1.0', hosts: ['db-7', 'web01'], samplingIntervalMs: 1000, descriptions: { cpu_usage: 'CPU time' } });
  t.deepEqual(readdirSync(dir).filter((f) => f.includes('.tmp-')), [], 'no temporary file left');

  const types = await rows(`DESCRIBE SELECT * FROM read_parquet('${path}')`);
  t.deepEqual(
    types.map((r) => [r.column_name, r.column_type]),
    [['timestamp', 'UBIGINT'], ['host', 'VARCHAR'], ['cpu_usage/user/3', 'UBIGINT'], ['load_average/1m', 'DOUBLE'], ['syscall_latency/read%2Fwrite', 'UBIGINT[]']],
  );
  const back = await rows(`SELECT * FROM read_parquet('${path}')`);
  t.is(back.length, input.length);
  let mismatches = 0;
  back.forEach((r, i) => {
    const want = input[i] as RecordRow;
    const list = r['syscall_latency/read%2Fwrite'] as { items: bigint[] } | null;
    const wantList = want.cells[2] as number[] | null;
    const same =
      r.timestamp === want.timestampNs &&
      r.host === want.host &&
      r['cpu_usage/user/3'] === want.cells[0] &&
      r['load_average/1m'] === want.cells[1] &&
      (wantList === null ? list === null : list !== null && list.items.length === wantList.length && list.items.every((c, k) => c === BigInt(wantList[k] as number)));
    if (!same) mismatches++;
  });
  t.is(mismatches, 0);

  const groups = await rows(`SELECT DISTINCT row_group_id, row_group_num_rows FROM parquet_metadata('${path}') ORDER BY 1`);
  t.deepEqual(groups.map((g) => Number(g.row_group_num_rows)), [600, 600, 100]);
  const meta = await rows(`SELECT path_in_schema, key_value_metadata FROM parquet_metadata('${path}') WHERE row_group_id = 0`);
  const kv = (column: string): Record<string, string> => {
    const entry = meta.find((r) => String(r.path_in_schema).split(', ')[0] === column);
    const pairs = (entry?.key_value_metadata as { entries: { key: unknown; value: unknown }[] } | undefined)?.entries ?? [];
    return Object.fromEntries(pairs.map((p) => [text(p.key), text(p.value)]));
  };
  t.deepEqual(kv('cpu_usage/user/3'), { metric: 'cpu_usage', metric_type: 'counter', unit: 'nanoseconds', labels: '{"state":"user","id":"3"}' });
  t.deepEqual(kv('syscall_latency/read%2Fwrite'), {
    metric: 'syscall_latency', metric_type: 'histogram', unit: 'nanoseconds', labels: '{"op":"read/write"}', grouping_power: '3', max_value_power: '64',
  });
  t.deepEqual(kv('timestamp'), { metric_type: 'timestamp', unit: 'nanoseconds' });
  const file = Object.fromEntries(
    (await rows(`SELECT key, value FROM parquet_kv_metadata('${path}')`)).map((r) => [text(r.key), text(r.value)]),
  );
  t.like(file, { source: 'rezolus-nats', version: '0.1.0', hosts: '["db-7","web01"]', sampling_interval_ms: '1000', descriptions: '{"cpu_usage":"CPU time"}' });
  t.is(h2.length, bucketCount(3, 64));
});

test('a percentile computed in SQL from the bucket list equals ours', async (t) => {
  const values = [3, 17, 100, 100, 250, 1000, 1000, 1000, 40_000, 1_000_000, 2n ** 40n];
  const hist = fromValues(values);
  const columns = columnsOf(d).filter((c) => c !== undefined);
  const path = join(dir, 'pct.parquet');
  await writeParquetFile(path, columns, [{ timestampNs: 1n, host: 'a', cells: [1n, 1, toDense(hist)] }], { source: 's', version: 'v', hosts: ['a'], samplingIntervalMs: 1000, descriptions: {} });
  for (const q of [0.5, 0.9, 0.99, 1]) {
    // rank max(1, ceil(q·N)); the first bucket whose running count reaches it; its upper bound (g = 3)
    const [r] = await rows(`
      WITH b AS (SELECT unnest(l) AS c, generate_subscripts(l, 1) - 1 AS i FROM (SELECT "syscall_latency/read%2Fwrite" AS l FROM read_parquet('${path}'))),
      r AS (SELECT i, sum(c) OVER (ORDER BY i) AS cum, sum(c) OVER () AS n FROM b),
      hit AS (SELECT min(i) AS i FROM r WHERE cum >= greatest(1, ceil(${q} * n)))
      SELECT CASE WHEN i < 16 THEN i::UHUGEINT
        ELSE (1::UHUGEINT << (3 + i // 8 - 1)::UHUGEINT) + (i % 8)::UHUGEINT * (1::UHUGEINT << (i // 8 - 1)::UHUGEINT)
          + (1::UHUGEINT << (i // 8 - 1)::UHUGEINT) - 1 END AS upper
      FROM hit`);
    t.is(BigInt(r?.upper as bigint), percentiles(hist, [q])?.[0] ?? -1n, `q=${q}`);
  }
  t.false(existsSync(`${path}.tmp-${process.pid}`));
});

test('the worker writes the same file, and reports a failure as a rejection', async (t) => {
  const columns = columnsOf(d).filter((c) => c !== undefined);
  const path = join(dir, 'worker.parquet');
  const meta = { source: 's', version: 'v', hosts: ['a'], samplingIntervalMs: 1000, descriptions: {} };
  await writeParquetInWorker(path, columns, [{ timestampNs: 7n, host: 'a', cells: [3n, 0.5, null] }], meta);
  const [row] = await rows(`SELECT timestamp, "cpu_usage/user/3" AS c, "load_average/1m" AS g FROM read_parquet('${path}')`);
  t.deepEqual(row, { timestamp: 7n, c: 3n, g: 0.5 });
  const twice = [...columns, columns[0]!];
  await t.throwsAsync(writeParquetInWorker(join(dir, 'bad.parquet'), twice, [], meta), { message: /two columns named cpu_usage\/user\/3/ });
  t.false(existsSync(join(dir, 'bad.parquet')));
});
