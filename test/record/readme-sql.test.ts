import test from 'ava';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { ROOT } from '../../scripts/gen-docs.js';
import type { ColumnSpec } from '../../src/parquet/columns.js';
import { ParquetStream } from '../../src/parquet/parquet.js';
import { fromValues, percentiles, subtract, type SparseHistogram } from '../../src/metrics/histogram.js';
import { RecordingSink } from '../../src/parquet/sink.js';
import { Duck } from '../helpers/duckdb.js';
import { m, makeDescriptor, makeFrame, T0 } from '../helpers/frames.js';

const SPEC: ColumnSpec = {
  name: 'scheduler_runqueue_latency', metric: 'scheduler_runqueue_latency', kind: 'histogram', unit: 'nanoseconds', labels: {}, groupingPower: 3, maxValuePower: 64,
};

/** Every value of `values` recorded `times` times more on top of `base`. */
function grown(base: SparseHistogram, values: readonly (number | bigint)[]): SparseHistogram {
  const add = fromValues(values);
  const dense = new Map<number, number>();
  base.index.forEach((i, k) => dense.set(i, (dense.get(i) ?? 0) + (base.count[k] ?? 0)));
  add.index.forEach((i, k) => dense.set(i, (dense.get(i) ?? 0) + (add.count[k] ?? 0)));
  const index = [...dense.keys()].sort((a, b) => a - b);
  return { ...base, index, count: index.map((i) => dense.get(i) as number) };
}

test("the README's p99 query over a recording equals our percentile of the last minus the first row", async (t) => {
  const readme = readFileSync(join(ROOT, 'README.md'), 'utf8');
  const sql = /The p99 of a histogram over a whole recording[\s\S]*?```sql\n([\s\S]*?)```/.exec(readme)?.[1];
  if (sql === undefined) return t.fail('no p99 query in the README');
  const dir = mkdtempSync(join(tmpdir(), 'rezolus-readme-sql-'));
  try {
    const h0 = fromValues([5, 5, 900, 2n ** 40n]);
    const h1 = grown(h0, [100, 200, 300, 40_000]);
    const h2 = grown(h1, [...Array.from({ length: 97 }, (_, i) => 1000 + i * 10), 3_000_000, 3_100_000, 2n ** 63n]);
    const path = join(dir, 'rec.parquet');
    const file = new ParquetStream(path, 'test');
    // web01's rows out of order, and another host's rows around them that the query must leave out
    const other = fromValues([1, 1, 1]);
    file.write({
      timestamps: [0n, 3n, 1n, 2n, 9n],
      hosts: ['db1', 'web01', 'web01', 'web01', 'db1'],
      columns: new Map([[SPEC.name, { spec: SPEC, cells: [other, h2, h0, h1, grown(other, [2n ** 62n, 2n ** 62n])] }]]),
    });
    await file.finish({ source: 's', version: 'v', hosts: ['db1', 'web01'], samplingIntervalMs: 1000, descriptions: {} });
    const duck = await Duck.open();
    const [row] = await duck.rows(sql.replaceAll("'rec.parquet'", `'${path}'`));
    const window = subtract(h2, h0);
    t.truthy(window);
    const want = percentiles(window as SparseHistogram, [0.99])?.[0];
    t.is(BigInt(row?.p99_ns as bigint), want ?? -1n);
    t.true((want ?? 0n) > 3_000_000n, 'the p99 of the window lands in the millisecond tail, not in the first row');
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});

test("the README's rate query takes a slower sampler's rate between its own frames, not between rows", async (t) => {
  const readme = readFileSync(join(ROOT, 'README.md'), 'utf8');
  const sql = /A counter's rate per second in DuckDB[\s\S]*?```sql\n([\s\S]*?)```/.exec(readme)?.[1];
  if (sql === undefined) return t.fail('no rate query in the README');
  const dir = mkdtempSync(join(tmpdir(), 'rezolus-readme-rate-'));
  try {
    const cgroups = makeDescriptor('cgroup_resources', { cgroup_cpu_usage: m('counter', 'nanoseconds', ['cgroup', 'state'], 'cgroup CPU') }, [['cgroup_cpu_usage', ['system.slice', 'system']]]);
    const cpu = makeDescriptor('cpu_usage', { cpu_usage: m('counter', 'nanoseconds', ['state'], 'CPU') }, [['cpu_usage', ['user']]]);
    const path = join(dir, 'rec.parquet');
    const sink = new RecordingSink({ output: path, intervalMs: 100, version: 'v' });
    for (const d of [cgroups, cpu]) sink.describe(makeFrame({ host: 'web01', descriptor: d, values: [] }).descriptorHash, d);
    const frames = [];
    for (let i = 0; i <= 100; i++) {
      const endNs = T0 + BigInt(i) * 100_000_000n;
      for (const host of ['web01', 'db1']) frames.push(makeFrame({ host, descriptor: cpu, seq: i + 1, endNs, values: [i * 1000] }));
      if (i % 10 === 0) {
        // a quarter of a core on web01, three on db1; the frame ends 30 ms after the second
        const s = i / 10;
        // web01's agent restarts after 6 s: its counter starts again from 0 (a new run)
        const run = s <= 6 ? { instance: 1, seq: s + 1, v: s } : { instance: 2, seq: s - 6, v: s - 7 };
        const f = makeFrame({ host: 'web01', descriptor: cgroups, instance: run.instance, seq: run.seq, endNs: endNs + 30_000_000n, values: [run.v * 250_000_000] });
        // a clean stop: the new run takes over at once
        frames.push(s === 6 ? { ...f, last: true } : f);
        frames.push(makeFrame({ host: 'db1', descriptor: cgroups, seq: s + 1, endNs: endNs + 30_000_000n, values: [s * 3_000_000_000] }));
      }
    }
    frames.sort((a, b) => (a.endNs < b.endNs ? -1 : a.endNs > b.endNs ? 1 : 0));
    for (const f of frames) sink.add(f);
    await sink.finish();
    const duck = await Duck.open();
    const rows = await duck.rows(sql.replaceAll("'rec.parquet'", `'${path}'`));
    t.is(rows.length, 11, 'one row per frame of the sampler, not one per 100 ms row');
    t.deepEqual(rows.map((r) => (r.cores === null ? null : Math.round((r.cores as number) * 1e6) / 1e6)), [null, 0.25, 0.25, 0.25, 0.25, 0.25, 0.25, null, 0.25, 0.25, 0.25], 'no rate across the restart');
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});
