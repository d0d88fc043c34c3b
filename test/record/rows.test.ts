import test from 'ava';
import { DuckDBInstance } from '@duckdb/node-api';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { writeParquetFile } from '../../src/record/parquet.js';
import { RowBuilder, toRecordRows, type Row } from '../../src/record/rows.js';
import { toDense } from '../../src/metrics/histogram.js';
import { SECOND, T0, h, m, makeDescriptor, makeFrame } from '../helpers/frames.js';

const MS = 1_000_000n;
const cpu = makeDescriptor('cpu_usage', { cpu_usage: m('counter', 'nanoseconds', ['state'], 'CPU time') }, [['cpu_usage', ['user']]]);
const mem = makeDescriptor('memory', { memory_free: m('gauge', 'bytes', [], 'Free memory') }, [['memory_free', []]]);
const lat = makeDescriptor('latency', { syscall_latency: m('histogram', 'nanoseconds', [], 'Syscall latency') }, [['syscall_latency', []]]);

/** cpu every 100 ms (value = ms since T0), memory every 1 s, latency every 500 ms, for host from t0 to t1 ms. */
function frames(host: string, fromMs: number, toMs: number) {
  const out = [];
  for (let t = fromMs; t <= toMs; t += 100) {
    const endNs = T0 + BigInt(t) * MS;
    out.push(makeFrame({ host, descriptor: cpu, seq: t / 100 + 1, endNs, values: [t] }));
    if ((t - fromMs) % 1000 === 0) out.push(makeFrame({ host, descriptor: mem, seq: t / 1000 + 1, endNs, values: [1e9 - t] }));
    if ((t - fromMs) % 500 === 0) out.push(makeFrame({ host, descriptor: lat, seq: t / 500 + 1, endNs, values: [h([36, t / 500 + 1])] }));
  }
  return out;
}

function summary(rows: Row[]): [number, string, unknown, unknown][] {
  return rows.map((r) => [Number((r.timestampNs - T0) / MS), r.host, r.values.get('cpu_usage/user'), r.values.get('memory_free')]);
}

test('100 ms frames at a 1 s interval: one row per second per host, values as of the row time', (t) => {
  const b = new RowBuilder(SECOND);
  const rows: Row[] = [];
  // frames start 50 ms after a whole second; two hosts interleaved
  const all = [...frames('a', 50, 3050), ...frames('b', 50, 3050)].sort((x, y) => (x.endNs < y.endNs ? -1 : 1));
  for (const f of all) rows.push(...b.add(f));
  rows.push(...b.flush());
  t.deepEqual(summary(rows), [
    [1000, 'a', 950, 1e9 - 50],
    [1000, 'b', 950, 1e9 - 50],
    [2000, 'a', 1950, 1e9 - 1050],
    [2000, 'b', 1950, 1e9 - 1050],
    [3000, 'a', 2950, 1e9 - 2050],
    [3000, 'b', 2950, 1e9 - 2050],
    [4000, 'a', 3050, 1e9 - 3050],
    [4000, 'b', 3050, 1e9 - 3050],
  ]);
  t.deepEqual(b.columns().map((c) => c.name), ['cpu_usage/user', 'memory_free', 'syscall_latency']);
});

test('rows come out once the lag has passed; out-of-order samplers within the lag are placed right', (t) => {
  const b = new RowBuilder(SECOND, 500n * MS);
  const f = (sampler: 'cpu' | 'mem', ms: number, v: number) =>
    makeFrame({ host: 'a', descriptor: sampler === 'cpu' ? cpu : mem, seq: ms, endNs: T0 + BigInt(ms) * MS, values: [v] });
  t.deepEqual(b.add(f('cpu', 900, 1)), []);
  t.deepEqual(b.add(f('cpu', 1400, 2)), [], 'the 1 s row waits for the lag');
  t.deepEqual(b.add(f('mem', 950, 7)), [], 'a late frame of another sampler');
  const rows = b.add(f('cpu', 1600, 3));
  t.deepEqual(summary(rows), [[1000, 'a', 1, 7]]);
});

test('a host that stops leaves a gap, not repeated rows; it comes back at the next boundary', (t) => {
  const b = new RowBuilder(SECOND);
  const rows: Row[] = [];
  for (const f of [...frames('a', 0, 2000), ...frames('a', 6000, 7000)]) rows.push(...b.add(f));
  rows.push(...b.flush());
  t.deepEqual(
    rows.map((r) => Number((r.timestampNs - T0) / MS)),
    [0, 1000, 2000, 6000, 7000],
  );
});

test('rows to Parquet: DuckDB reads the resampled values back', async (t) => {
  const b = new RowBuilder(SECOND);
  const rows: Row[] = [];
  for (const f of frames('a', 0, 2000)) rows.push(...b.add(f));
  rows.push(...b.flush());
  const columns = b.columns();
  const dir = mkdtempSync(join(tmpdir(), 'rezolus-rows-test-'));
  try {
    const path = join(dir, 'r.parquet');
    await writeParquetFile(path, columns, toRecordRows(rows, columns), { source: 'test', version: 'v', hosts: ['a'], samplingIntervalMs: 1000, descriptions: {} });
    const con = await (await DuckDBInstance.create(':memory:')).connect();
    const back = (await con.runAndReadAll(`SELECT timestamp, "cpu_usage/user" AS cpu, memory_free, len(syscall_latency) AS n, syscall_latency[37] AS b36 FROM read_parquet('${path}')`)).getRowObjects();
    t.deepEqual(
      back.map((r) => [r.timestamp, r.cpu, r.memory_free, r.n, r.b36]),
      [
        [T0, 0n, 1e9, 496n, 1n],
        [T0 + SECOND, 1000n, 1e9 - 1000, 496n, 3n],
        [T0 + 2n * SECOND, 2000n, 1e9 - 2000, 496n, 5n],
      ],
    );
    t.is(toDense(h([36, 5]))[36], 5);
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});
