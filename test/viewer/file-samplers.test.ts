/**
 * A recording whose samplers run at different intervals: the recorder
 * writes rows every 100 ms, a 1 s sampler repeats its frame over ten rows,
 * and the viewer takes that sampler's samples only where its frame changed,
 * at the frame's own end time. Written by the recorder's own sink, read by
 * the viewer's loader, queried as the HTTP API does.
 */
import test from 'ava';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { Frame } from '../../src/frame/types.js';
import { RecordingSink } from '../../src/parquet/sink.js';
import { loadRecording } from '../../src/viewer/file/load.js';
import { runQuery } from '../../src/viewer/query/run.js';
import { h, m, makeDescriptor, makeFrame, T0 } from '../helpers/frames.js';

const MS = 1_000_000n;
const fast = makeDescriptor('fast', { fast_ops: m('counter', 'count', [], 'fast ops') }, [['fast_ops', []]]);
const slow = makeDescriptor(
  'slow',
  { slow_ops: m('counter', 'count', [], 'slow ops'), slow_level: m('gauge', 'count', [], 'slow level'), slow_latency: m('histogram', 'nanoseconds', [], 'slow latency') },
  [['slow_ops', []], ['slow_level', []], ['slow_latency', []]],
);

/**
 * 20 s of frames of host `a`: `fast` every 100 ms (500 ops a second),
 * `slow` every second, 30 ms late (2000 ops a second, its level the
 * second's number, 100 events a second of ~1 µs latency). Each frame ends
 * 0.1–1 ms later than that, as a real agent's refreshes do.
 */
function frames(): Frame[] {
  const out: Frame[] = [];
  // later by 0.1 ms a frame, back every tenth: the median gap is 100.1 ms (1000.1 ms for `slow`)
  const jitter = (i: number): bigint => (BigInt((i % 10) + 1) * MS) / 10n;
  for (let i = 0; i <= 200; i++) {
    out.push(makeFrame({ host: 'a', descriptor: fast, seq: i + 1, endNs: T0 + BigInt(i) * 100n * MS + jitter(i), values: [i * 50] }));
    if (i % 10 === 0) {
      const s = i / 10;
      out.push(makeFrame({ host: 'a', descriptor: slow, seq: s + 1, endNs: T0 + BigInt(i) * 100n * MS + 30n * MS + jitter(s), values: [s * 2000, s, h([80, 100 * s])] }));
    }
  }
  return out.sort((x, y) => (x.endNs < y.endNs ? -1 : x.endNs > y.endNs ? 1 : 0));
}

let dir: string;
test.before(() => {
  dir = mkdtempSync(join(tmpdir(), 'rezolus-file-samplers-'));
});
test.after.always(() => rmSync(dir, { recursive: true, force: true }));

async function recorded(name: string): Promise<string> {
  const path = join(dir, name);
  const sink = new RecordingSink({ output: path, intervalMs: 100, version: 'v' });
  for (const d of [fast, slow]) sink.describe(makeFrame({ host: 'a', descriptor: d, values: [] }).descriptorHash, d);
  for (const f of frames()) sink.add(f);
  await sink.finish();
  return path;
}

test("a slower sampler's track holds its frames, at their end times, not every row", async (t) => {
  const rec = await loadRecording(await recorded('tracks.parquet'), 'A');
  t.teardown(() => rec.close());
  t.is(rec.tracks.get('a')?.t.length, 201, 'a row every 100 ms after the first frames');
  await rec.loadMetrics(['fast_ops', 'slow_ops', 'slow_level']);
  const tracks = rec.tracksOf('a');
  const slowTrack = tracks.find((tr) => tr.columns.has('slow_ops'));
  const fastTrack = tracks.find((tr) => tr.columns.has('fast_ops'));
  t.is(tracks.filter((tr) => tr.columns.size > 0).length, 2, 'one track per sampler; the rows track holds none');
  t.is(slowTrack?.columns.has('slow_level'), true);
  const t0 = Number(T0 / MS);
  t.is(slowTrack?.t.length, 21);
  t.true(slowTrack?.t.every((x, s) => Math.abs(x - t0 - (s * 1000 + 30)) <= 1), `at the frames' ends: ${slowTrack?.t.map((x) => x - t0).join(' ')}`);
  t.is(fastTrack?.t.length, 201);
  t.deepEqual(slowTrack?.columns.get('slow_level'), { info: slowTrack?.columns.get('slow_level')?.info, v: Array.from({ length: 21 }, (_, s) => s) } as never);
});

test('rates of a slower sampler in a 100 ms recording are its rate in every step: no 0, 0, … then ten times it', async (t) => {
  const rec = await loadRecording(await recorded('rates.parquet'), 'A');
  t.teardown(() => rec.close());
  await rec.loadMetrics(['fast_ops', 'slow_ops', 'slow_latency']);
  const tracks = rec.tracksOf('a');
  const q = { match: {}, start: rec.start, end: rec.end, budget: 5000 } as const;

  const slowRate = runQuery(tracks, { ...q, metric: 'slow_ops' });
  t.is(slowRate.step, 1000, "steps as fine as the sampler's frames");
  const avg = slowRate.series[0]?.avg ?? [];
  const values = avg.filter((v): v is number => v !== null);
  t.true(values.length >= 18, `${values.length} steps with a rate`);
  // within the frames' jitter (under 1 ms a second)
  for (const v of values) t.true(Math.abs(v - 2000) < 2, `a step of ${v}/s`);
  for (const v of slowRate.series[0]?.max ?? []) if (v !== null) t.true(Math.abs(v - 2000) < 2, `a max of ${v}/s`);

  const fastRate = runQuery(tracks, { ...q, metric: 'fast_ops' });
  t.is(fastRate.step, 100, 'steps as fine as the rows');
  const fastValues = (fastRate.series[0]?.avg ?? []).filter((v): v is number => v !== null);
  t.true(fastValues.length >= 190);
  for (const v of fastValues) t.true(Math.abs(v - 500) < 5, `a fast step of ${v}/s`);

  // percentiles between the slow sampler's own frames: 100 events a second, every step
  const p = runQuery(tracks, { ...q, metric: 'slow_latency', fn: 'percentiles' });
  const p50 = p.series.find((s) => s.name === 'p50')?.avg.filter((v): v is number => v !== null) ?? [];
  t.true(p50.length >= 18, `${p50.length} steps with a p50`);
});

test('a series two samplers filled (hosts of two agent versions): each host keeps its values, none is lost', async (t) => {
  const legacy = makeDescriptor('cpu_legacy', { fast_ops: m('counter', 'count', [], 'fast ops') }, [['fast_ops', []]]);
  const path = join(dir, 'mixed.parquet');
  const sink = new RecordingSink({ output: path, intervalMs: 100, version: 'v' });
  for (const d of [fast, legacy]) sink.describe(makeFrame({ host: 'old', descriptor: d, values: [] }).descriptorHash, d);
  for (let i = 0; i <= 50; i++) {
    const endNs = T0 + BigInt(i) * 100n * MS + MS;
    // `old` declares the column first: it is stamped as cpu_legacy's
    sink.add(makeFrame({ host: 'old', descriptor: legacy, seq: i + 1, endNs, values: [i * 10] }));
    sink.add(makeFrame({ host: 'new', descriptor: fast, seq: i + 1, endNs, values: [i * 20] }));
  }
  await sink.finish();
  const rec = await loadRecording(path, 'A');
  t.teardown(() => rec.close());
  await rec.loadMetrics(['fast_ops']);
  for (const [host, per] of [['old', 10], ['new', 20]] as const) {
    const column = rec.tracksOf(host).flatMap((tr) => [...tr.columns.values()]);
    t.is(column.length, 1, `${host}: the column in one of its tracks`);
    const v = (column[0] as { v: number[] }).v.filter((x) => !Number.isNaN(x));
    t.deepEqual(v, Array.from({ length: 51 }, (_, i) => i * per), `${host}: every value`);
    const rate = runQuery(rec.tracksOf(host), { metric: 'fast_ops', match: {}, start: rec.start, end: rec.end, budget: 1000 });
    t.true((rate.series[0]?.avg ?? []).some((x) => x !== null && Math.abs(x - per * 10) < 1), `${host}: its rate`);
  }
});
