import test from 'ava';
import { existsSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { rowGroupTarget, RecordingSink } from '../../src/parquet/sink.js';
import { RecordingWriter } from '../../src/parquet/write.js';
import { SECOND, T0, frameBytes, m, makeDescriptor, makeFrame } from '../helpers/frames.js';
import { Duck } from '../helpers/duckdb.js';
import { cpu, lat, mem, mixedFrames } from '../helpers/mixed-frames.js';

const disk = (dev: string) => makeDescriptor('disk', { blockio_bytes: m('counter', 'bytes', ['device'], 'Disk bytes') }, [['blockio_bytes', [dev]]]);

let dir: string;
let duck: Duck;
test.before(async () => {
  dir = mkdtempSync(join(tmpdir(), 'rezolus-sink-test-'));
  duck = await Duck.open();
});
test.after.always(() => rmSync(dir, { recursive: true, force: true }));

function sinkOf(output: string, rowGroupRows?: number): RecordingSink {
  const sink = new RecordingSink({ output, intervalMs: 1000, version: 'v', rowGroupRows });
  for (const d of [cpu, mem, lat, disk('sda'), disk('nvme0n1')]) {
    const f = makeFrame({ host: 'x', descriptor: d, values: [] });
    sink.describe(f.descriptorHash, d);
  }
  return sink;
}

test('row groups hold at least 600 rows, 6 per host, at most 6000', (t) => {
  t.deepEqual([1, 10, 100, 101, 1000, 5000].map(rowGroupTarget), [600, 600, 600, 606, 6000, 6000]);
});

test('frames at 100 ms recorded at 1 s: DuckDB reads one row per second with the values as of the row time', async (t) => {
  const path = join(dir, 'r.parquet');
  const sink = sinkOf(path);
  for (const f of mixedFrames('a', 0, 2000)) sink.add(f);
  const s = await sink.finish();
  t.like(s, { rows: 3, columns: 3, frames: 21 + 3 + 5, hosts: ['a'], output: path });
  const back = await duck.rows(`SELECT timestamp, "cpu_usage/user" AS cpu, memory_free, len(syscall_latency) AS n, syscall_latency[37] AS b36 FROM read_parquet('${path}')`);
  t.deepEqual(
    back.map((r) => [r.timestamp, r.cpu, r.memory_free, r.n, r.b36]),
    [
      [T0, 0n, 1e9, 496n, 1n],
      [T0 + SECOND, 1000n, 1e9 - 1000, 496n, 3n],
      [T0 + 2n * SECOND, 2000n, 1e9 - 2000, 496n, 5n],
    ],
  );
  t.like(await duck.fileMeta(path), { hosts: '["a"]', sampling_interval_ms: '1000', descriptions: '{"cpu_usage":"CPU time","memory_free":"Free memory","syscall_latency":"Syscall latency"}' });
});

test('every sampler gets a frame end column: the end of the frame each row took, repeated while a slower sampler has no newer one', async (t) => {
  const path = join(dir, 'ends.parquet');
  const sink = new RecordingSink({ output: path, intervalMs: 100, version: 'v' });
  for (const d of [cpu, mem, lat]) sink.describe(makeFrame({ host: 'x', descriptor: d, values: [] }).descriptorHash, d);
  for (const f of mixedFrames('a', 0, 2000)) sink.add(f);
  const s = await sink.finish();
  t.like(s, { columns: 3, hosts: ['a'] }, 'series columns only');
  const back = await duck.rows(`SELECT timestamp, "timestamp/cpu_usage" AS c, "timestamp/memory" AS m, "timestamp/latency" AS l FROM read_parquet('${path}') ORDER BY timestamp`);
  t.is(back.length, 21);
  const ms = (ns: unknown): number => Number(((ns as bigint) - T0) / 1_000_000n);
  t.deepEqual(
    back.map((r) => [ms(r.timestamp), ms(r.c), ms(r.m), ms(r.l)]),
    back.map((_, i) => [i * 100, i * 100, Math.floor(i / 10) * 1000, Math.floor(i / 5) * 500]),
  );
  t.deepEqual(await duck.columnMeta(path, 'timestamp/memory'), { metric_type: 'timestamp', unit: 'nanoseconds', sampler: 'memory' });
  t.like(await duck.columnMeta(path, 'memory_free'), { metric: 'memory_free', metric_type: 'gauge', sampler: 'memory' });
  const [types] = await duck.rows(`SELECT typeof("timestamp/latency") AS t FROM read_parquet('${path}') LIMIT 1`);
  t.is(types?.t, 'UBIGINT');
});

test('a series named like the recording\'s own columns is left out, the rest of its frame recorded', async (t) => {
  const path = join(dir, 'reserved-names.parquet');
  const sink = new RecordingSink({ output: path, intervalMs: 1000, version: 'v' });
  const odd = makeDescriptor(
    'odd',
    { host: m('gauge', 'count', [], 'a'), timestamp: m('counter', 'count', ['sampler'], 'b'), fine: m('gauge', 'count', [], 'c') },
    [['host', []], ['timestamp', ['odd']], ['timestamp', ['x']], ['fine', []]],
  );
  sink.describe(makeFrame({ host: 'a', descriptor: odd, values: [] }).descriptorHash, odd);
  for (let s = 1; s <= 3; s++) sink.add(makeFrame({ host: 'a', descriptor: odd, seq: s, endNs: T0 + BigInt(s) * SECOND, values: [1, 2, 3, s] }));
  const s = await sink.finish();
  t.like(s, { rows: 3, columns: 1 });
  const back = await duck.rows(`SELECT host, fine, "timestamp/odd" - timestamp AS lag FROM read_parquet('${path}') ORDER BY timestamp`);
  t.deepEqual(back, [
    { host: 'a', fine: 1, lag: 0n },
    { host: 'a', fine: 2, lag: 0n },
    { host: 'a', fine: 3, lag: 0n },
  ]);
  const [cols] = await duck.rows(`SELECT count(*) AS n FROM (DESCRIBE SELECT * FROM read_parquet('${path}'))`);
  t.is(cols?.n, 4n, 'timestamp, host, fine and timestamp/odd');
});

test('rows are written a group at a time while recording; a host that joins later with a new device gets its column', async (t) => {
  const path = join(dir, 'stream.parquet');
  const sink = sinkOf(path, 600);
  const sda = disk('sda');
  const nvme = disk('nvme0n1');
  // host a: 1300 s of cpu at 1 Hz and sda; host b joins at 1000 s with an nvme disk
  for (let s = 1; s <= 1300; s++) {
    const endNs = T0 + BigInt(s) * SECOND;
    sink.add(makeFrame({ host: 'a', descriptor: cpu, seq: s, endNs, values: [s] }));
    sink.add(makeFrame({ host: 'a', descriptor: sda, seq: s, endNs, values: [s * 512] }));
    if (s > 1000) sink.add(makeFrame({ host: 'b', descriptor: nvme, seq: s, endNs, values: [s * 4096] }));
    if (s === 700) t.true(sink.progress().bytes > 1000, `${sink.progress().bytes} bytes on disk after 700 rows`);
  }
  t.is(sink.progress().rows, 1299 + 299, 'the rows of the last second wait for the lag');
  const s = await sink.finish();
  t.like(s, { rows: 1600, columns: 3, hosts: ['a', 'b'] });
  t.deepEqual(await duck.groupSizes(path), [600, 600, 400]);
  const [counts] = await duck.rows(`SELECT count("blockio_bytes/sda") AS sda, count("blockio_bytes/nvme0n1") AS nvme, count(*) FILTER (WHERE host = 'b') AS b FROM read_parquet('${path}')`);
  t.deepEqual(counts, { sda: 1300n, nvme: 300n, b: 300n });
  const [last] = await duck.rows(`SELECT "blockio_bytes/nvme0n1" AS v FROM read_parquet('${path}') WHERE host = 'b' ORDER BY timestamp DESC LIMIT 1`);
  t.is(last?.v, 1300n * 4096n);
});

test('the worker writes the file from frames; a write that fails is reported, and abort leaves nothing', async (t) => {
  const path = join(dir, 'worker.parquet');
  const w = new RecordingWriter({ output: path, intervalMs: 1000, version: 'v' });
  for (const f of mixedFrames('a', 0, 2000)) await w.add(f, frameBytes(f));
  const s = await w.finish();
  t.like(s, { rows: 3, frames: 29, columns: 3 });
  t.true(s.bytes > 0 && s.bytes === w.progress().bytes);
  const [row] = await duck.rows(`SELECT max("cpu_usage/user") AS c, max(memory_free) AS g FROM read_parquet('${path}')`);
  t.deepEqual(row, { c: 2000n, g: 1e9 });

  const bad = new RecordingWriter({ output: join(dir, 'no-such-dir', 'x.parquet'), intervalMs: 1000, version: 'v' });
  await t.throwsAsync(bad.finish(), { message: /cannot write .*x\.parquet: ENOENT/ });

  const gone = join(dir, 'aborted.parquet');
  const a = new RecordingWriter({ output: gone, intervalMs: 1000, version: 'v' });
  for (const f of mixedFrames('a', 0, 1000)) void a.add(f, frameBytes(f));
  await a.abort();
  t.false(existsSync(gone));
  t.deepEqual(readdirSync(dir).filter((f) => f.startsWith('aborted.parquet')), []);
});

test('a recording without a single row writes no file and leaves one already there alone', async (t) => {
  const path = join(dir, 'nothing.parquet');
  writeFileSync(path, 'earlier');
  const s = await sinkOf(path).finish();
  t.like(s, { rows: 0, written: false, bytes: 0 });
  t.is(readFileSync(path, 'utf8'), 'earlier');
  t.deepEqual(readdirSync(dir).filter((f) => f.startsWith('nothing.parquet.tmp-')), []);
});
