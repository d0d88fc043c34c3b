import test from 'ava';
import type { Frame } from '../../src/frame/types.js';
import { RowBuilder, type Row } from '../../src/record/rows.js';
import { SECOND, T0, makeFrame } from '../helpers/frames.js';
import { cpu, mem, mixedFrames } from '../helpers/mixed-frames.js';

const MS = 1_000_000n;

/** [ms since T0, host, the cpu frame's value, the memory frame's value] of each row */
function summary(rows: Row<Frame>[]): [number, string, unknown, unknown][] {
  const value = (r: Row<Frame>, sampler: string) => r.frames.find((f) => f.sampler === sampler)?.values[0];
  return rows.map((r) => [Number((r.timestampNs - T0) / MS), r.host, value(r, 'cpu_usage'), value(r, 'memory')]);
}

test('100 ms frames at a 1 s interval: one row per second per host, values as of the row time', (t) => {
  const b = new RowBuilder<Frame>(SECOND);
  const rows: Row<Frame>[] = [];
  // frames start 50 ms after a whole second; two hosts interleaved
  const all = [...mixedFrames('a', 50, 3050), ...mixedFrames('b', 50, 3050)].sort((x, y) => (x.endNs < y.endNs ? -1 : 1));
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
  t.deepEqual(rows[0]?.frames.map((f) => f.sampler).sort(), ['cpu_usage', 'latency', 'memory'], 'a row refers to the newest frame of every sampler');
  t.is(b.hosts, 2);
});

test('rows come out once the lag has passed; out-of-order samplers within the lag are placed right', (t) => {
  const b = new RowBuilder<Frame>(SECOND, 500n * MS);
  const f = (sampler: 'cpu' | 'mem', ms: number, v: number) =>
    makeFrame({ host: 'a', descriptor: sampler === 'cpu' ? cpu : mem, seq: ms, endNs: T0 + BigInt(ms) * MS, values: [v] });
  t.deepEqual(b.add(f('cpu', 900, 1)), []);
  t.deepEqual(b.add(f('cpu', 1400, 2)), [], 'the 1 s row waits for the lag');
  t.deepEqual(b.add(f('mem', 950, 7)), [], 'a late frame of another sampler');
  const rows = b.add(f('cpu', 1600, 3));
  t.deepEqual(summary(rows), [[1000, 'a', 1, 7]]);
});

test('a host that stops leaves a gap, not repeated rows; it comes back at the next boundary', (t) => {
  const b = new RowBuilder<Frame>(SECOND);
  const rows: Row<Frame>[] = [];
  for (const f of [...mixedFrames('a', 0, 2000), ...mixedFrames('a', 6000, 7000)]) rows.push(...b.add(f));
  rows.push(...b.flush());
  t.deepEqual(
    rows.map((r) => Number((r.timestampNs - T0) / MS)),
    [0, 1000, 2000, 6000, 7000],
  );
});
