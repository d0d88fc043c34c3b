import test from 'ava';
import { copyFileSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { parquetMetadata } from 'hyparquet';
import { ByteWriter, ParquetWriter } from 'hyparquet-writer';
import { fromValues, totalCount, type SparseHistogram } from '../../src/metrics/histogram.js';
import { ViewerFileError, type ViewerFileProblem } from '../../src/viewer/file/errors.js';
import { loadRecording, type Recording } from '../../src/viewer/file/load.js';
import { isHistogramColumn, type HistogramColumn, type ScalarColumn, type Track } from '../../src/viewer/track.js';
import { Duck } from '../helpers/duckdb.js';
import { meta, type Row, type Series, spec, T0, writeGeneric, writeRecording } from './file-recordings.js';

let dir: string;
let duck: Duck;

test.before(async () => {
  dir = mkdtempSync(join(tmpdir(), 'rezolus-viewer-file-'));
  duck = await Duck.open();
});
test.after.always(() => rmSync(dir, { recursive: true, force: true }));

const HOSTS = ['web01', 'db-7'];
const h1 = fromValues([100, 1000, 1000]);
const h2 = fromValues([100, 1000, 1000, 50_000, 2n ** 63n]);

/** 1300 rows (groups of 600, 600, 100), hosts alternating, one s apart per pair. */
const ROWS: Row[] = Array.from({ length: 1300 }, (_, i) => ({ ns: T0 + BigInt(Math.floor(i / 2)) * 1_000_000_000n + BigInt(i % 2) * 1_234_567n, host: HOSTS[i % 2] as string }));

const SERIES: Series[] = [
  // a counter: nulls, and values beyond 2^53
  { spec: spec('cpu_usage/user/3', 'counter', { state: 'user', id: '3' }, 'nanoseconds'), cell: (i) => (i % 97 === 5 ? null : i > 1250 ? 2n ** 63n + BigInt(i) : i * 1_000_003) },
  // a gauge
  { spec: spec('load_average/1m', 'gauge', { period: '1m' }), cell: (i) => (i % 89 === 1 ? null : i * 0.25 - 3) },
  // a histogram: null rows, two shapes
  { spec: spec('syscall_latency/read%2Fwrite', 'histogram', { op: 'read/write' }, 'nanoseconds'), cell: (i) => (i % 3 === 0 ? null : i % 2 === 0 ? h1 : h2) },
  // a series only db-7 has, from the second row group on (the recorder backfills its earlier groups with nulls)
  { spec: spec('disk_bytes/sdb', 'counter', { device: 'sdb' }, 'bytes'), cell: (i) => (i >= 600 && i % 2 === 1 ? 10 * i : null) },
];

const N = (v: unknown): number => (v === null || v === undefined ? Number.NaN : Number(v as number | bigint));
const same = (a: number, b: number): boolean => (Number.isNaN(a) && Number.isNaN(b)) || a === b;

function scalar(track: Track | undefined, id: string): ScalarColumn | undefined {
  const c = track?.columns.get(id);
  return c === undefined || isHistogramColumn(c) ? undefined : c;
}

function histogram(track: Track | undefined, id: string): HistogramColumn | undefined {
  const c = track?.columns.get(id);
  return c !== undefined && isHistogramColumn(c) ? c : undefined;
}

async function written(name: string, writer: typeof writeRecording | typeof writeGeneric = writeRecording): Promise<string> {
  const path = join(dir, name);
  await writer(path, ROWS, SERIES, meta(['db-7', 'web01'], { descriptions: { cpu_usage: 'CPU time', load_average: 'Load average' } }));
  return path;
}

/** Every loaded value of every host against DuckDB reading the same file. */
async function checkAgainstDuckDB(t: import('ava').ExecutionContext, rec: Recording, path: string): Promise<void> {
  const rows = await duck.rows(
    `SELECT "timestamp" AS ts, host, "cpu_usage/user/3" AS c, "load_average/1m" AS g, list_sum("syscall_latency/read%2Fwrite") AS total, "disk_bytes/sdb" AS d FROM read_parquet('${path}') ORDER BY host, "timestamp"`,
  );
  t.is(rows.length, ROWS.length);
  for (const host of HOSTS) {
    const mine = rows.filter((r) => r.host === host);
    const track = rec.tracks.get(host) as Track;
    t.deepEqual(
      track.t,
      mine.map((r) => Number((r.ts as bigint) / 1000n) / 1000),
      `${host}: timestamps`,
    );
    t.true(track.run.every((r) => r === 0));
    const c = scalar(track, 'cpu_usage/user/3');
    const g = scalar(track, 'load_average/1m');
    const h = histogram(track, 'syscall_latency/read%2Fwrite');
    t.true(mine.every((r, i) => same(N(r.c), c?.v[i] as number)), `${host}: the counter`);
    t.true(mine.every((r, i) => same(N(r.g), g?.v[i] as number)), `${host}: the gauge`);
    t.true(
      mine.every((r, i) => {
        const hist = h?.h[i];
        return r.total === null ? hist === undefined : hist !== undefined && totalCount(hist) === N(r.total);
      }),
      `${host}: the histogram's count per row`,
    );
    const d = scalar(track, 'disk_bytes/sdb');
    if (mine.every((r) => r.d === null)) t.is(d, undefined, `${host}: no column for a series it never had`);
    else t.true(mine.every((r, i) => same(N(r.d), d?.v[i] as number)), `${host}: the late series`);
  }
}

test('a recording: metadata, one track per host, and every value as DuckDB reads it', async (t) => {
  const path = await written('two-hosts.parquet');
  const rec = await loadRecording(path, 'A');
  t.teardown(() => rec.close());
  t.is(rec.name, 'A');
  t.is(rec.path, path);
  t.deepEqual(rec.meta, { source: 'rezolus-nats', version: '0.1.0-test', hosts: ['db-7', 'web01'], samplingIntervalMs: 1000, descriptions: { cpu_usage: 'CPU time', load_average: 'Load average' } });
  t.is(rec.rows, 1300);
  t.deepEqual([...rec.tracks.keys()], ['db-7', 'web01']);
  t.is(rec.tracks.get('web01')?.t.length, 650);
  t.is(rec.start, Number(T0 / 1_000_000n));
  t.is(rec.end, Number((T0 + 649_001_234_567n) / 1000n) / 1000);
  t.deepEqual([...rec.series.keys()], ['cpu_usage/user/3', 'disk_bytes/sdb', 'load_average/1m', 'syscall_latency/read%2Fwrite']);
  t.deepEqual(rec.series.get('syscall_latency/read%2Fwrite'), { id: 'syscall_latency/read%2Fwrite', metric: 'syscall_latency', kind: 'histogram', unit: 'nanoseconds', labels: { op: 'read/write' } });
  t.deepEqual(rec.metrics(), ['cpu_usage', 'disk_bytes', 'load_average', 'syscall_latency']);
  t.deepEqual(rec.seriesOf('load_average').map((s) => s.id), ['load_average/1m']);

  // nothing is read before it is asked for
  t.is(rec.tracks.get('web01')?.columns.size, 0);
  await rec.loadColumns(['load_average/1m', 'no/such/series']);
  t.true(rec.isLoaded('load_average/1m'));
  t.false(rec.isLoaded('cpu_usage/user/3'));
  t.deepEqual([...(rec.tracks.get('web01')?.columns.keys() ?? [])], ['load_average/1m']);

  await rec.loadMetrics(['cpu_usage', 'no_such_metric']);
  t.true(rec.isLoaded('cpu_usage/user/3'));
  t.is(await rec.hostTracks('nohost'), undefined);
  const db = await rec.hostTracks('db-7', ['disk_bytes/sdb']);
  t.is(db?.length, 1, 'a file without frame ends: the rows track alone');
  t.deepEqual([...(db?.[0]?.columns.keys() ?? [])].sort(), ['cpu_usage/user/3', 'disk_bytes/sdb', 'load_average/1m']);

  // the same columns asked for twice at once are read once, and both calls see them
  await Promise.all([rec.loadAll(), rec.loadColumns(['syscall_latency/read%2Fwrite'])]);
  await checkAgainstDuckDB(t, rec, path);

  // the histograms themselves, not only their totals
  const web = histogram(rec.tracks.get('web01'), 'syscall_latency/read%2Fwrite');
  const expect = (i: number): SparseHistogram | undefined => (i % 3 === 0 ? undefined : i % 2 === 0 ? h1 : h2);
  t.true(
    (web?.h ?? []).every((h, k) => {
      const want = expect(2 * k);
      return want === undefined ? h === undefined : h !== undefined && h.groupingPower === 3 && h.maxValuePower === 64 && String(h.index) === String(want.index) && String(h.count) === String(want.count);
    }),
  );
});

test('a file of another writer (bit-packed levels, several pages, SNAPPY, a DELTA column) reads the same', async (t) => {
  const ours = await loadRecording(await written('ours.parquet'), 'A');
  const path = join(dir, 'generic.parquet');
  await writeGeneric(path, ROWS, SERIES, meta(['db-7', 'web01']), { groupRows: 500, pageSize: 2048, delta: ['cpu_usage/user/3'] });
  const theirs = await loadRecording(path, 'B');
  t.teardown(async () => {
    await ours.close();
    await theirs.close();
  });
  await ours.loadAll();
  await theirs.loadAll();
  await checkAgainstDuckDB(t, theirs, path);
  for (const host of HOSTS) {
    const a = ours.tracks.get(host) as Track;
    const b = theirs.tracks.get(host) as Track;
    t.deepEqual(b.t, a.t);
    t.deepEqual([...b.columns.keys()].sort(), [...a.columns.keys()].sort(), `${host}: the same columns`);
    for (const [id, column] of a.columns) t.deepEqual(b.columns.get(id), column, `${host}: ${id}`);
  }
});

test('a one-host recording: one track, times in order', async (t) => {
  const path = join(dir, 'one.parquet');
  const rows: Row[] = Array.from({ length: 10 }, (_, i) => ({ ns: T0 + BigInt(i) * 500_000_000n, host: 'solo' }));
  await writeRecording(path, rows, [{ spec: spec('memory_total', 'gauge', {}, 'bytes'), cell: (i) => 1e9 + i }], meta(['solo'], { samplingIntervalMs: 500 }), 4);
  const rec = await loadRecording(path, 'solo run');
  t.teardown(() => rec.close());
  await rec.loadColumns(['memory_total']);
  const track = rec.tracks.get('solo');
  t.deepEqual(track?.t, rows.map((r) => Number(r.ns / 1_000_000n)));
  t.deepEqual(scalar(track, 'memory_total')?.v, rows.map((_, i) => 1e9 + i));
  t.is(rec.meta.samplingIntervalMs, 500);
});

async function rejects(t: import('ava').ExecutionContext, path: string, problem: ViewerFileProblem, message: RegExp): Promise<void> {
  const error = await t.throwsAsync(loadRecording(path, 'A'), { instanceOf: ViewerFileError });
  t.is(error?.problem, problem);
  t.is(error?.code, 'VIEWER_FILE');
  t.is(error?.name, 'ViewerFileError');
  t.true(error?.message.includes(path), `the message names the file: ${error?.message}`);
  t.regex(error?.message ?? '', message);
}

test('a file that does not exist, or is a directory', async (t) => {
  await rejects(t, join(dir, 'nope.parquet'), 'missing', /no such file/);
  const sub = join(dir, 'a-directory.parquet');
  mkdirSync(sub);
  await rejects(t, sub, 'unreadable', /is a directory/);
});

test('a file not yet renamed into place: its temporary file is named', async (t) => {
  const path = join(dir, 'pending.parquet');
  const tmp = `${path}.tmp-4242-0-0`;
  copyFileSync(await written('for-tmp.parquet'), tmp);
  await rejects(t, path, 'missing', /still being written to .*pending\.parquet\.tmp-4242-0-0/);
});

test('not a Parquet file', async (t) => {
  const path = join(dir, 'notes.parquet');
  writeFileSync(path, 'timestamp,host\n1,web01\n');
  await rejects(t, path, 'not-parquet', /not a Parquet file/);
});

test('a recording still being written, or cut short: incomplete', async (t) => {
  const whole = readFileSync(await written('whole.parquet'));
  const cut = join(dir, 'cut.parquet');
  writeFileSync(cut, whole.subarray(0, Math.floor(whole.length / 2)));
  await rejects(t, cut, 'incomplete', /looks incomplete: still being written, or cut short/);
  const tmp = join(dir, 'live.parquet.tmp-4343-0-1');
  writeFileSync(tmp, whole.subarray(0, 4));
  await rejects(t, tmp, 'incomplete', /temporary file, still being written/);
  const empty = join(dir, 'empty.parquet');
  writeFileSync(empty, '');
  await rejects(t, empty, 'incomplete', /is empty/);
});

test('a damaged footer', async (t) => {
  const path = join(dir, 'damaged.parquet');
  const bytes = Buffer.concat([Buffer.from('PAR1'), Buffer.alloc(64, 0xff), Buffer.from([64, 0, 0, 0]), Buffer.from('PAR1')]);
  writeFileSync(path, bytes);
  await rejects(t, path, 'corrupt', /footer cannot be decoded/);
});

test('damaged column data: the columns that cannot be decoded reject with the file named', async (t) => {
  const path = await written('bad-chunk.parquet');
  const bytes = readFileSync(path);
  const metadata = parquetMetadata(bytes);
  const chunk = metadata.row_groups[1]?.columns.find((c) => c.meta_data?.path_in_schema[0] === 'syscall_latency/read%2Fwrite')?.meta_data;
  const end = Number(chunk?.dictionary_page_offset) + Number(chunk?.total_compressed_size);
  bytes.fill(0x5a, end - 12, end); // the end of the gzip stream of its values
  writeFileSync(path, bytes);
  const rec = await loadRecording(path, 'A');
  t.teardown(() => rec.close());
  await rec.loadColumns(['load_average/1m']);
  const error = await t.throwsAsync(rec.loadColumns(['syscall_latency/read%2Fwrite']), { instanceOf: ViewerFileError });
  t.is(error?.problem, 'corrupt');
  t.regex(error?.message ?? '', /bad-chunk\.parquet is damaged: column syscall_latency\/read%2Fwrite \(rows from 600\) cannot be decoded/);
  t.false(rec.isLoaded('syscall_latency/read%2Fwrite'));
  t.is(rec.tracks.get('web01')?.columns.has('syscall_latency/read%2Fwrite'), false, 'no half-read column');
});

/** A Parquet file of other columns, written by hyparquet-writer. */
async function otherParquet(path: string, columns: { name: string; data: unknown[] }[], columnMeta?: Record<string, { key: string; value: string }[]>): Promise<void> {
  const writer = new ByteWriter();
  const schema = [{ name: 'root', num_children: columns.length }, ...columns.map((c) => (typeof c.data[0] === 'string' ? { name: c.name, type: 'BYTE_ARRAY' as const, repetition_type: 'REQUIRED' as const, converted_type: 'UTF8' as const } : { name: c.name, type: 'INT64' as const, repetition_type: 'REQUIRED' as const }))];
  const w = new ParquetWriter({ writer, schema, codec: 'UNCOMPRESSED' });
  await w.write({ columnData: columns as never });
  for (const chunk of w.row_groups[0]?.columns ?? []) {
    const kv = columnMeta?.[chunk.meta_data?.path_in_schema[0] ?? ''];
    if (kv !== undefined && chunk.meta_data !== undefined) chunk.meta_data.key_value_metadata = kv;
  }
  await w.finish();
  writeFileSync(path, new Uint8Array(writer.getBuffer()));
}

test('a Parquet file of another layout: not a rezolus recording', async (t) => {
  const other = join(dir, 'sales.parquet');
  await otherParquet(other, [
    { name: 'id', data: [1n, 2n] },
    { name: 'region', data: ['eu', 'us'] },
  ]);
  await rejects(t, other, 'not-recording', /not a rezolus recording: it has no `timestamp` and `host` column/);

  const noMetric = join(dir, 'no-metric.parquet');
  await otherParquet(noMetric, [
    { name: 'timestamp', data: [T0, T0 + 1n] },
    { name: 'host', data: ['a', 'b'] },
    { name: 'requests', data: [1n, 2n] },
  ]);
  await rejects(t, noMetric, 'not-recording', /column `requests` has no `metric` metadata/);

  const wrongType = join(dir, 'wrong-type.parquet');
  await otherParquet(wrongType, [
    { name: 'timestamp', data: [T0, T0 + 1n] },
    { name: 'host', data: ['a', 'b'] },
    { name: 'requests', data: [1n, 2n] },
  ], { requests: [{ key: 'metric', value: 'requests' }, { key: 'metric_type', value: 'gauge' }] });
  await rejects(t, wrongType, 'not-recording', /column `requests` is a gauge but is not stored as one/);
});
