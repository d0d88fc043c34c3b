import test from 'ava';
import type { Frame } from '../../src/frame/types.js';
import { RowBuilder, type Row } from '../../src/parquet/rows.js';
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

// ---- odd frames (issue 7, part 5): duplicates, late and out-of-order frames, restarts, clock steps

/** A frame of host a: sampler cpu or mem, run `instance`, seq, end in ms after T0, value. */
function odd(sampler: 'cpu' | 'mem', instance: number, seq: number, ms: number, v: number): Frame {
  return makeFrame({ host: 'a', descriptor: sampler === 'cpu' ? cpu : mem, instance, seq, endNs: T0 + BigInt(ms) * MS, values: [v] });
}

function feed(b: RowBuilder<Frame>, frames: readonly Frame[]): Row<Frame>[] {
  const rows: Row<Frame>[] = [];
  for (const f of frames) rows.push(...b.add(f));
  rows.push(...b.flush());
  return rows;
}

test('a duplicate, and an older frame arriving after its row was written, are dropped: a row never goes back', (t) => {
  const b = new RowBuilder<Frame>(SECOND, 100n * MS);
  const rows = feed(b, [
    odd('cpu', 1, 1, 500, 100),
    odd('cpu', 1, 2, 1000, 200),
    odd('cpu', 1, 3, 1500, 300),
    odd('cpu', 1, 4, 2200, 400), // the 1 s and 2 s rows are out
    odd('cpu', 1, 2, 1000, 200), // late, after a reconnect: taken, it would make the 3 s row show 200
    odd('cpu', 1, 4, 2200, 400), // a redelivery
    odd('cpu', 1, 5, 3000, 500),
  ]);
  t.deepEqual(summary(rows), [
    [1000, 'a', 200, undefined],
    [2000, 'a', 300, undefined],
    [3000, 'a', 500, undefined],
  ]);
  t.deepEqual(b.stats, { outOfOrder: 2, late: 0, restarts: 0, contested: 0 });
});

test('an agent restart (new run, seq from 1, counters from 0) takes over once the old run is quiet; a late frame of the old run is not mixed in', (t) => {
  const b = new RowBuilder<Frame>(SECOND, 100n * MS);
  const rows = feed(b, [
    odd('cpu', 1, 1, 500, 100),
    odd('cpu', 1, 2, 1000, 200),
    odd('cpu', 1, 3, 1500, 300),
    odd('cpu', 2, 1, 4000, 5), // 2.5 s after run 1's last frame: run 1 is gone, run 2 takes over at once
    odd('cpu', 1, 4, 1600, 400), // run 1, late: contested
    odd('cpu', 2, 2, 5000, 15),
  ]);
  t.deepEqual(summary(rows), [
    [1000, 'a', 200, undefined],
    [2000, 'a', 300, undefined],
    [4000, 'a', 5, undefined],
    [5000, 'a', 15, undefined],
  ]);
  t.deepEqual(b.stats, { outOfOrder: 0, late: 0, restarts: 1, contested: 1 });
});

test('a fast clean restart: the old run\'s last frame says so and the new run takes over at once, no row lost', (t) => {
  const b = new RowBuilder<Frame>(SECOND, 100n * MS);
  const rows = feed(b, [
    odd('cpu', 1, 1, 1000, 100),
    odd('cpu', 1, 2, 2000, 200),
    { ...odd('cpu', 1, 3, 3000, 300), last: true }, // the agent stopped cleanly
    odd('cpu', 2, 1, 4000, 5), // one interval later: not quiet by frame time, taken all the same
    odd('cpu', 2, 2, 5000, 15),
  ]);
  t.deepEqual(summary(rows), [
    [1000, 'a', 100, undefined],
    [2000, 'a', 200, undefined],
    [3000, 'a', 300, undefined],
    [4000, 'a', 5, undefined],
    [5000, 'a', 15, undefined],
  ]);
  t.deepEqual(b.stats, { outOfOrder: 0, late: 0, restarts: 1, contested: 0 });
});

test('a fast restart after a crash (no last frame) is taken on its third frame: two frames lost, counted', (t) => {
  const b = new RowBuilder<Frame>(SECOND, 100n * MS);
  const rows = feed(b, [
    odd('cpu', 1, 1, 1000, 100),
    odd('cpu', 1, 2, 2000, 200),
    odd('cpu', 1, 3, 3000, 300),
    odd('cpu', 2, 1, 4000, 5),
    odd('cpu', 2, 2, 5000, 15),
    odd('cpu', 2, 3, 6000, 25),
  ]);
  t.deepEqual(summary(rows).map((r) => r[0]), [1000, 2000, 3000, 6000]);
  t.deepEqual(b.stats, { outOfOrder: 0, late: 0, restarts: 1, contested: 2 });
});

test('a restart whose clock went back takes over on its third frame in a row, and rows wait until its time passes the last row', (t) => {
  const b = new RowBuilder<Frame>(SECOND, 100n * MS);
  const rows = feed(b, [
    odd('cpu', 1, 1, 10_000, 100),
    odd('cpu', 1, 2, 10_500, 200),
    odd('cpu', 1, 3, 11_000, 300),
    odd('cpu', 2, 1, 3000, 1), // earlier than run 1's last frame: not quiet by frame time
    odd('cpu', 2, 2, 4000, 2),
    odd('cpu', 2, 3, 5000, 3), // the third in a row, 2 s after the first (more than two messages hold): run 1 is gone
    odd('cpu', 2, 4, 6000, 4),
  ]);
  // the 11 s row was still held back (lag) when run 2 took over: it carries run 2's newest value
  t.deepEqual(summary(rows), [
    [10_000, 'a', 100, undefined],
    [11_000, 'a', 4, undefined],
  ]);
  t.deepEqual(b.stats, { outOfOrder: 0, late: 2, restarts: 1, contested: 2 });
});

test('two live agents claiming one host: the first keeps it, the second\'s frames are counted as contested and never mixed in, also after it stops', (t) => {
  const b = new RowBuilder<Frame>(SECOND, 100n * MS);
  const frames: Frame[] = [];
  for (let k = 1; k <= 6; k++) {
    frames.push(odd('cpu', 1, k, k * 1000, k * 100));
    if (k >= 2 && k <= 4) frames.push(odd('cpu', 2, k - 1, k * 1000 + 200, k)); // a second agent for 3 s
  }
  const rows = feed(b, frames);
  t.deepEqual(summary(rows), [1, 2, 3, 4, 5, 6].map((k) => [k * 1000, 'a', k * 100, undefined]));
  t.deepEqual(b.stats, { outOfOrder: 0, late: 0, restarts: 0, contested: 3 });
});

/**
 * Two live agents' cpu frames at 100 ms, five ticks a message, `messages` each, from 10 s: run 1's
 * value is 1, run 2's 2; run 2's clock `skewMs` off; run 2's message first where `secondFirst(m)`.
 */
function twoAgents(messages: number, skewMs: number, secondFirst: (m: number) => boolean): Frame[] {
  const frames: Frame[] = [];
  const seq = [0, 0];
  for (let m = 0; m < messages; m++) {
    const message = (run: 1 | 2): Frame[] =>
      Array.from({ length: 5 }, (_, k) => odd('cpu', run, ++(seq[run - 1] as number), 10_000 + m * 500 + k * 100 + (run === 1 ? 2 : 3 + skewMs), run));
    frames.push(...(secondFirst(m) ? [...message(2), ...message(1)] : [...message(1), ...message(2)]));
  }
  return frames;
}

test('two live agents that send five 100 ms ticks a message: the first keeps the host whatever the order of their messages', (t) => {
  const b = new RowBuilder<Frame>(SECOND, 100n * MS);
  // the second agent's message first every third time (the first one always first: it holds the host)
  const rows = feed(b, twoAgents(12, 0, (m) => m % 3 === 1));
  t.true(rows.every((r) => r.frames.every((f) => f.instance === 1)), 'no row holds a frame of the second agent');
  t.deepEqual(b.stats, { outOfOrder: 0, late: 0, restarts: 0, contested: 60 });
});

test("two live agents, five ticks a message, the second's clock 2 s behind or ahead: no flapping, whatever comes two in a row", (t) => {
  for (const skew of [-2000, 2000]) {
    const b = new RowBuilder<Frame>(SECOND, 100n * MS);
    // every other pair the second's message first: its messages then come two in a row
    feed(b, twoAgents(24, skew, (m) => m % 2 === 1));
    // 2 s ahead looks like a restart by frame time (taken once); 2 s behind never does; neither flaps back
    t.true(b.stats.restarts <= (skew > 0 ? 1 : 0), `skew ${skew} ms: ${b.stats.restarts} restarts`);
  }
});

test('the clock steps back: no row twice, no row back in time; the newest values go into the next row', (t) => {
  const b = new RowBuilder<Frame>(SECOND, 100n * MS);
  const rows = feed(b, [
    odd('cpu', 1, 1, 10_000, 100),
    odd('cpu', 1, 2, 10_500, 200),
    odd('cpu', 1, 3, 11_000, 300),
    odd('mem', 1, 1, 11_200, 7), // the 10 s and 11 s rows are out
    odd('cpu', 1, 4, 5000, 400), // the agent's clock went 6 s back
    odd('cpu', 1, 5, 5500, 500),
    odd('mem', 1, 2, 11_500, 8),
    odd('mem', 1, 3, 12_300, 9),
  ]);
  t.deepEqual(summary(rows), [
    [10_000, 'a', 100, undefined],
    [11_000, 'a', 300, undefined],
    [12_000, 'a', 500, 8],
    [13_000, 'a', 500, 9],
  ]);
  t.deepEqual(b.stats, { outOfOrder: 0, late: 2, restarts: 0, contested: 0 });
  const times = rows.map((r) => r.timestampNs);
  t.deepEqual(times, [...new Set(times)].sort((x, y) => (x < y ? -1 : 1)), 'strictly increasing');
});

test('a frame later than the lag is carried into the next row, and an older frame of its sampler cannot replace it', (t) => {
  const b = new RowBuilder<Frame>(SECOND, 100n * MS);
  const rows = feed(b, [
    odd('cpu', 1, 1, 900, 1),
    odd('cpu', 1, 2, 1400, 2), // the 1 s row is out
    odd('mem', 1, 1, 950, 7), // too late for it
    odd('cpu', 1, 3, 2200, 3),
  ]);
  t.deepEqual(summary(rows), [
    [1000, 'a', 1, undefined],
    [2000, 'a', 2, 7],
    [3000, 'a', 3, 7],
  ]);
  t.is(b.stats.late, 1);
  // a clock step back shorter than the lag: the newer frame ends first, the older one (still pending) must not win
  const c = new RowBuilder<Frame>(SECOND, 500n * MS);
  const crows = feed(c, [odd('cpu', 1, 1, 800, 1), odd('cpu', 1, 2, 700, 2), odd('cpu', 1, 3, 1800, 3)]);
  t.deepEqual(summary(crows), [
    [1000, 'a', 2, undefined],
    [2000, 'a', 3, undefined],
  ]);
});
