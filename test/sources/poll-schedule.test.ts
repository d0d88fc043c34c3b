/**
 * The poll schedule against a simulated agent: one sampler that refreshes
 * every `spacing` on the wall clock's whole multiples, its refresh taking a
 * (seeded) random time, and a snapshot that holds only its newest frame.
 * The simulation polls when the schedule says and counts the frames it got
 * and the polls it made. A poller that wakes on the agent's own boundaries
 * loses frames here (checked first, so the simulation can tell).
 */
import test from 'ava';
import { PollSchedule, type PolledFrame } from '../../src/sources/poll-schedule.js';

const MS = 1_000_000n;

/** Simulated ms (fractions kept to the ns) as unix ns. */
function ns(ms: number): bigint {
  return BigInt(Math.round(ms * 1e6));
}

/** A small seeded generator (a test must give the same draws every run). */
function rng(seed: number): () => number {
  let x = seed >>> 0;
  return () => {
    x = (Math.imul(x, 1664525) + 1013904223) >>> 0;
    return x / 2 ** 32;
  };
}

interface Agent {
  readonly spacingMs: number;
  /** refresh time of tick k in ms; undefined = the agent skipped that tick */
  readonly refreshMs: (k: number) => number | undefined;
  /** ticks after this make no frame (a sampler that failed) */
  readonly lastTick?: number;
}

const seqs = new WeakMap<Agent, number[]>();

/** The seq of tick k's frame: the refreshes made up to it (k counts from a fixed origin, so only differences matter). */
function seqOf(a: Agent, k: number): number {
  const origin = Math.floor(START / a.spacingMs) - 10;
  let list = seqs.get(a);
  if (list === undefined) seqs.set(a, (list = []));
  for (let j = origin + list.length; j <= k; j++) list.push((list.at(-1) ?? 0) + (a.refreshMs(j) === undefined ? 0 : 1));
  return list[k - origin] as number;
}

/** The agent's newest frame at `tMs`, as its snapshot serves it. */
function snapshot(a: Agent, tMs: number): PolledFrame[] {
  for (let k = Math.floor(tMs / a.spacingMs); k >= Math.floor(START / a.spacingMs) - 10; k--) {
    if (a.lastTick !== undefined && k > a.lastTick) continue;
    const r = a.refreshMs(k);
    if (r === undefined || k * a.spacingMs + r > tMs) continue;
    // seq counts the refreshes made: a skipped tick takes none
    return [{ key: 'h/s/1', seq: seqOf(a, k), beginNs: ns(k * a.spacingMs + 1), endNs: ns(k * a.spacingMs + r) }];
  }
  return [];
}

/** Polls from `fromMs` to `toMs` as `next` says; the frames (their tick) got and the polls made. */
function simulate(a: Agent, fromMs: number, toMs: number, next: (frames: PolledFrame[], tMs: number) => number): { ticks: Set<number>; polls: number } {
  const ticks = new Set<number>();
  let polls = 0;
  for (let t = fromMs; t < toMs; ) {
    polls++;
    const frames = snapshot(a, t);
    for (const f of frames) ticks.add(Math.floor(Number(f.beginNs / MS) / a.spacingMs));
    const wait = next(frames, t);
    if (!(wait > 0)) throw new Error(`a wait of ${wait} ms at ${t}`);
    t += wait;
  }
  return { ticks, polls };
}

function withSchedule(intervalMs: number): (frames: PolledFrame[], tMs: number) => number {
  const s = new PollSchedule(BigInt(intervalMs) * MS);
  return (frames, t) => Number(s.polled(frames, ns(t))) / 1e6;
}

/** Ticks made by the agent in [from, to) that the poller did not get. */
function missed(a: Agent, got: Set<number>, fromMs: number, toMs: number): number[] {
  const out: number[] = [];
  // (the last tick's frame may still be in the snapshot at the end: not missed)
  for (let k = Math.ceil(fromMs / a.spacingMs) + 1; (k + 2) * a.spacingMs < toMs; k++) {
    if (a.refreshMs(k) !== undefined && (a.lastTick === undefined || k <= a.lastTick) && !got.has(k)) out.push(k);
  }
  return out;
}

const START = 1_000_003; // ms, off any boundary
const END = START + 600_000;

test('a poller on the agent\'s own boundaries loses frames (the simulation can tell)', (t) => {
  const draw = rng(1);
  const refresh = Array.from({ length: 2000 }, () => 1 + draw() * 8);
  const agent: Agent = { spacingMs: 1000, refreshMs: (k) => refresh[k % 2000] };
  const { ticks } = simulate(agent, START, END, (_f, now) => 1000 - (now % 1000) + Math.floor(draw() * 10));
  t.true(missed(agent, ticks, START, END).length > 20);
});

for (const [name, spacingMs, intervalMs, lo, hi] of [
  ['1 s at 1 s, refresh 5-60 ms', 1000, 1000, 5, 60],
  ['200 ms at 200 ms, refresh 5-40 ms', 200, 200, 5, 40],
  ['200 ms at 200 ms, refresh 60-140 ms (across the mid-point)', 200, 200, 60, 140],
  ['100 ms at 100 ms, refresh 10-60 ms', 100, 100, 10, 60],
  ['1 s at 200 ms (agent slower), refresh 5-300 ms', 1000, 200, 5, 300],
] as const) {
  test(`every frame, no more than a few polls per frame: ${name}`, (t) => {
    const draw = rng(spacingMs + lo);
    const refresh = Array.from({ length: 5000 }, () => lo + draw() * (hi - lo));
    const agent: Agent = { spacingMs, refreshMs: (k) => refresh[k % 5000] };
    const { ticks, polls } = simulate(agent, START, END, withSchedule(intervalMs));
    t.deepEqual(missed(agent, ticks, START, END), []);
    const frames = (END - START) / spacingMs;
    t.log(`${polls} polls for ${frames} frames`);
    t.true(polls <= 2 * frames, `${polls} polls for ${frames} frames`);
  });
}

test('an agent that samples faster than the recording: one poll per interval, mid-row, each in its own row', (t) => {
  const agent: Agent = { spacingMs: 100, refreshMs: () => 20 };
  const rows: number[] = [];
  let seen = 0;
  const s = new PollSchedule(1000n * MS);
  const { polls } = simulate(agent, START, START + 60_000, (frames, now) => {
    // a frame polled twice is taken once (by its seq, as the source does)
    for (const f of frames.filter((f) => f.seq > seen)) {
      seen = f.seq;
      rows.push(Math.ceil(Number(f.endNs / MS) / 1000));
    }
    return Number(s.polled(frames, ns(now))) / 1e6;
  });
  t.true(polls <= 62, `${polls} polls in 60 s at 1 s`);
  t.deepEqual(rows.slice(1).map((r, i) => r - (rows[i] as number)), Array(rows.length - 1).fill(1), 'one row after the other');
});

test('a tick the agent skipped costs a few polls, and the frames after it are all there', (t) => {
  const agent: Agent = { spacingMs: 200, refreshMs: (k) => (k % 50 === 7 ? undefined : 30) };
  const { ticks, polls } = simulate(agent, START, START + 60_000, withSchedule(200));
  t.deepEqual(missed(agent, ticks, START, START + 60_000), []);
  t.true(polls <= 2 * 300 + 6 * 15, `${polls} polls for 300 ticks, 6 of them skipped`);
});

test('a sampler that stops: back to one poll per interval, and its next frame is taken when it moves again', (t) => {
  const lastTick = Math.floor(START / 200) + 20;
  const stopped: Agent = { spacingMs: 200, refreshMs: () => 30, lastTick };
  const next = withSchedule(200);
  const { polls } = simulate(stopped, START, START + 60_000, next);
  t.true(polls <= 300 + 20 + 30, `${polls} polls in 60 s at 200 ms`);
  // and it moves again
  const moving: Agent = { spacingMs: 200, refreshMs: () => 30 };
  const { ticks } = simulate(moving, START + 60_000, START + 70_000, next);
  t.deepEqual(missed(moving, ticks, START + 60_000, START + 70_000), []);
});

test('after a failed poll, the next one is at the next mid-point of the interval', (t) => {
  const s = new PollSchedule(1000n * MS);
  s.polled([{ key: 'k', seq: 1, beginNs: 999_000n * MS, endNs: 999_010n * MS }], 999_020n * MS);
  t.is(s.failed(1_000_100n * MS), 400n * MS);
  t.is(s.failed(1_000_600n * MS), 900n * MS);
});
