/**
 * A recording's window over an agent's snapshots (src/sources/poll-window.ts)
 * against a simulated agent and a poller whose timers fire late: the agent
 * refreshes each sampler on the wall clock's whole intervals and serves its
 * newest frame, plus the frames published since an earlier snapshot (at most
 * five per sampler, as src/agent/snapshot.ts). The poller polls when
 * PollSchedule says, late by a seeded random amount, and takes frames as
 * PollSource does. Whatever the lateness (within the agent's five frames),
 * a recording for D holds exactly D / I rows, one after the other, and ends
 * by itself soon after its last row.
 *
 * Issue: `record --interval 200ms --duration 10s` gave 49 rows on a loaded
 * machine: the window started when the recorder asked, and its first answer,
 * carrying only each sampler's newest frame, came after the agent's next
 * refresh: the first row's frame was gone.
 */
import test from 'ava';
import { PollSchedule, type PolledFrame } from '../../src/sources/poll-schedule.js';
import { MIN_END_GRACE_NS, PollWindow } from '../../src/sources/poll-window.js';

const MS = 1_000_000n;
const RECENT = 5;

/** A small seeded generator (a test must give the same draws every run). */
function rng(seed: number): () => number {
  let x = seed >>> 0;
  return () => {
    x = (Math.imul(x, 1664525) + 1013904223) >>> 0;
    return x / 2 ** 32;
  };
}

interface Sampler {
  readonly key: string;
  readonly spacingNs: bigint;
  /** how long a refresh takes */
  readonly refreshNs: bigint;
  /** no frame after this time (a sampler that failed) */
  readonly lastNs?: bigint;
}

/** The frames of a sampler ending in (after, upTo], as (seq, end); the agent's clock. */
function framesOf(s: Sampler, after: bigint, upTo: bigint): PolledFrame[] {
  const out: PolledFrame[] = [];
  const last = s.lastNs !== undefined && s.lastNs < upTo ? s.lastNs : upTo;
  for (let k = (after - s.refreshNs) / s.spacingNs; k * s.spacingNs + s.refreshNs <= last; k++) {
    const endNs = k * s.spacingNs + s.refreshNs;
    if (endNs > after) out.push({ key: s.key, seq: Number(k), beginNs: k * s.spacingNs, endNs });
  }
  return out;
}

/** The agent's snapshot at `at` (its clock): each sampler's newest frame, after those published since `since` (at most RECENT). */
function snapshot(samplers: readonly Sampler[], at: bigint, since: bigint | undefined): PolledFrame[] {
  return samplers.flatMap((s) => {
    // a sampler that stopped keeps its last frame in the snapshot
    const upTo = s.lastNs !== undefined && s.lastNs < at ? s.lastNs : at;
    const recent = framesOf(s, upTo - BigInt(RECENT + 1) * s.spacingNs, upTo).slice(-RECENT);
    return recent.filter((f, i) => i === recent.length - 1 || (since !== undefined && f.endNs > since));
  });
}

interface Run {
  /** row times handed over, sorted */
  readonly rows: bigint[];
  /** our time when the recording ended */
  readonly endedNs: bigint;
  readonly window: PollWindow;
}

interface Poller {
  /** our time when the recording is asked for */
  readonly askedNs: bigint;
  readonly intervalNs: bigint;
  readonly durationNs?: bigint;
  /** the agent's clock minus ours */
  readonly skewNs?: bigint;
  /** how late the first answer comes */
  readonly firstLateNs: bigint;
  /** how late each later poll comes, after the wait the schedule asked for */
  readonly lateNs: () => bigint;
  /** our time at which stop() is called */
  readonly stopNs?: bigint;
}

/** Polls as PollSource does (the schedule, ?since, the window) until the window is complete. */
function record(samplers: readonly Sampler[], p: Poller): Run {
  const window = new PollWindow(p.intervalNs, p.durationNs, p.askedNs);
  const schedule = new PollSchedule(p.intervalNs);
  const skew = p.skewNs ?? 0n;
  const seen = new Map<string, number>();
  const rows = new Set<bigint>();
  let since: bigint | undefined;
  let now = p.askedNs + p.firstLateNs;
  for (let polls = 0; polls < 100_000; polls++) {
    if (p.stopNs !== undefined && now >= p.stopNs) {
      window.stop(p.stopNs);
      now = p.stopNs;
    }
    const at = now + skew;
    const frames = snapshot(samplers, at, since);
    window.answered(at, now);
    const newest = new Map<string, bigint>();
    for (const f of frames) {
      newest.set(f.key, f.endNs);
      if ((seen.get(f.key) ?? -1) >= f.seq) continue;
      const place = window.place(f.endNs);
      if (place === 'after') continue;
      seen.set(f.key, f.seq);
      if (place === 'before') continue;
      const row = ((f.endNs + p.intervalNs - 1n) / p.intervalNs) * p.intervalNs;
      rows.add(row);
    }
    since = at;
    // stopped: that was the last poll
    if (p.stopNs !== undefined && now >= p.stopNs) return { rows: sorted(rows), endedNs: now, window };
    let wait = schedule.polled(frames, now);
    if (window.complete([...newest.values()], now)) return { rows: sorted(rows), endedNs: now, window };
    const deadline = window.deadlineNs();
    if (deadline !== undefined && deadline - now < wait) wait = deadline - now;
    now += wait + p.lateNs();
    const d = window.deadlineNs();
    if (d !== undefined && now >= d && window.complete([], now)) return { rows: sorted(rows), endedNs: now, window };
  }
  throw new Error('the recording never ended');
}

function sorted(rows: Set<bigint>): bigint[] {
  return [...rows].sort((a, b) => (a < b ? -1 : a > b ? 1 : 0));
}

/** Whether row times follow one another by one interval. */
function consecutive(rows: readonly bigint[], intervalNs: bigint): boolean {
  return rows.every((r, i) => i === 0 || r - (rows[i - 1] as bigint) === intervalNs);
}

const T0 = 1_800_000_000_000n * MS + 3n * MS; // off any boundary

function agent(intervalNs: bigint, refreshMs: readonly bigint[] = [1n, 3n, 4n]): Sampler[] {
  return refreshMs.map((r, i) => ({ key: `h/s${i}/1`, spacingNs: intervalNs, refreshNs: r * MS }));
}

test('the issue: a window started when the recorder asked loses the first row when the first answer comes after the next refresh (the simulation can tell)', (t) => {
  const I = 200n * MS;
  const samplers = agent(I);
  // the old rule: rows after the row time at or before the ask, the first answer carrying the newest frames only
  const asked = T0 + 150n * MS;
  const from = asked - (asked % I);
  const at = asked + 120n * MS;
  const first = snapshot(samplers, at, undefined);
  t.true(first.every((f) => f.endNs > from + I), 'the first row\'s frames are gone from the first answer');
  // with the window started by the first answer, the same lateness costs nothing
  const run = record(samplers, { askedNs: asked, intervalNs: I, durationNs: 10_000n * MS, firstLateNs: 120n * MS, lateNs: () => 0n });
  t.is(run.rows.length, 50);
  t.true(consecutive(run.rows, I));
});

for (const [name, intervalMs, firstLateMs, maxLateMs] of [
  ['200 ms, first answer on time, timers up to 50 ms late', 200, 5, 50],
  ['200 ms, first answer 1.5 intervals late, timers up to 300 ms late', 200, 300, 300],
  ['200 ms, first answer 3 s late, timers up to 600 ms late', 200, 3000, 600],
  ['1 s, first answer 2.5 s late, timers up to 2 s late', 1000, 2500, 2000],
  ['100 ms, timers up to 250 ms late', 100, 40, 250],
] as const) {
  test(`exactly D / I rows, one after the other, however late the timers: ${name}`, (t) => {
    const I = BigInt(intervalMs) * MS;
    const D = 10_000n * MS;
    for (let seed = 1; seed <= 40; seed++) {
      const draw = rng(seed * 7 + intervalMs);
      const asked = T0 + BigInt(Math.floor(draw() * intervalMs * 1e6));
      const refresh = [BigInt(1 + Math.floor(draw() * 20)), BigInt(1 + Math.floor(draw() * 40)), BigInt(1 + Math.floor(draw() * (intervalMs / 2)))];
      const run = record(agent(I, refresh), {
        askedNs: asked,
        intervalNs: I,
        durationNs: D,
        firstLateNs: BigInt(firstLateMs) * MS,
        lateNs: () => BigInt(Math.floor(draw() ** 3 * maxLateMs * 1e6)),
      });
      const window = run.window;
      t.is(run.rows.length, Number(D / I), `seed ${seed}: ${run.rows.length} rows`);
      t.true(consecutive(run.rows, I), `seed ${seed}: one row after the other`);
      t.is(run.rows[0], (window.fromNs as bigint) + I, `seed ${seed}: the first row is the one after the first answer`);
      // ended once every sampler had a frame past the window (or, a timer late by more than the bound, at the poll after it)
      t.true(run.endedNs <= (window.deadlineNs() as bigint) + BigInt(maxLateMs) * MS, `seed ${seed}: ended soon after the window`);
    }
  });
}

test('an agent clock seconds off ours moves neither end: D / I rows, the end bound on our clock', (t) => {
  const I = 200n * MS;
  for (const skew of [-7_000n * MS, 5_000n * MS]) {
    const run = record(agent(I), { askedNs: T0, intervalNs: I, durationNs: 10_000n * MS, skewNs: skew, firstLateNs: 30n * MS, lateNs: () => 0n });
    t.is(run.rows.length, 50, `skew ${skew / MS} ms`);
    // the bound is D (less the phase of the first answer) and the grace after the first answer, on our clock
    const after = (run.window.deadlineNs() as bigint) - MIN_END_GRACE_NS - (T0 + 30n * MS);
    t.true(after > 10_000n * MS - I && after <= 10_000n * MS, `the end bound ${after / MS} ms after the first answer, skew ${skew / MS} ms`);
  }
});

test('a sampler that stopped during the window: the others\' rows are complete, and the recording ends at the bound after the end, not before', (t) => {
  const I = 200n * MS;
  const samplers = [...agent(I), { key: 'h/failed/1', spacingNs: I, refreshNs: 2n * MS, lastNs: T0 + 3_000n * MS }];
  const run = record(samplers, { askedNs: T0, intervalNs: I, durationNs: 10_000n * MS, firstLateNs: 30n * MS, lateNs: () => 0n });
  t.is(run.rows.length, 50);
  const deadline = run.window.deadlineNs() as bigint;
  t.true(run.endedNs >= deadline, 'waited for the stopped sampler until the bound');
  t.is(deadline - (run.window.untilNs as bigint), MIN_END_GRACE_NS, 'two intervals, at least 2 s, after the last row (no skew)');
});

test('an agent that never answers: the recording ends at the duration, empty', (t) => {
  const w = new PollWindow(200n * MS, 10_000n * MS, T0);
  t.is(w.deadlineNs(), T0 + 10_000n * MS);
  t.false(w.complete([], T0 + 9_999n * MS));
  t.true(w.complete([], T0 + 10_000n * MS));
  t.is(w.place(T0 + 5_000n * MS), 'before', 'nothing is the window\'s before an answer');
});

test('stop() ends the window at the last row time before it; one more poll takes what ended before', (t) => {
  const I = 200n * MS;
  const stopNs = T0 + 4_321n * MS;
  const run = record(agent(I), { askedNs: T0, intervalNs: I, durationNs: 10_000n * MS, firstLateNs: 10n * MS, lateNs: () => 0n, stopNs });
  t.is(run.window.untilNs, stopNs - (stopNs % I));
  // frames taken before the stop stay taken: the last row is the one before the stop or the one it fell in
  const last = run.rows.at(-1) as bigint;
  t.true(last === run.window.untilNs || last === (run.window.untilNs as bigint) + I, 'no row after the stop');
  t.true(consecutive(run.rows, I));
  // stopped before the first answer: empty, and no end to wait for
  const early = new PollWindow(I, 10_000n * MS, T0);
  early.stop(T0 + MS);
  early.answered(T0 + 5n * MS, T0 + 5n * MS);
  t.is(early.place(T0 + 100n * MS), 'before');
});

test('a recording without a duration has no end until stop()', (t) => {
  const w = new PollWindow(200n * MS, undefined, T0);
  t.is(w.deadlineNs(), undefined);
  w.answered(T0 + 10n * MS, T0 + 10n * MS);
  t.is(w.untilNs, undefined);
  t.is(w.place(T0 + 3_600_000n * MS), 'within');
  t.false(w.complete([T0 + 3_600_000n * MS], T0 + 3_600_000n * MS));
});
