import test from 'ava';
import { HOLD_WINDOWS, MAX_SAMPLE_SHIFT, MIN_WINDOW_MS, sampleShift, SamplingPlan } from '../../src/samplers/syscall/shared/sampling.js';

test('a class within its budget is timed one by one; above it, the smallest power of two that fits', (t) => {
  t.is(sampleShift(0, 10_000), 0);
  t.is(sampleShift(10_000, 10_000), 0);
  t.is(sampleShift(10_001, 10_000), 1);
  t.is(sampleShift(20_000, 10_000), 1);
  t.is(sampleShift(20_001, 10_000), 2);
  t.is(sampleShift(1_000_000, 10_000), 7); // 1e6 / 128 = 7812 <= 10 000 < 1e6 / 64
  for (const rate of [10_001, 33_333, 123_456, 999_999, 5e6]) {
    const k = sampleShift(rate, 10_000);
    t.true(rate / 2 ** k <= 10_000, `${rate}: ${k}`);
    t.true(rate / 2 ** (k - 1) > 10_000, `${rate}: ${k} is the smallest`);
  }
});

test('budget 0 times every syscall; the shift is bounded; nonsense rates time everything', (t) => {
  t.is(sampleShift(1e9, 0), 0);
  t.is(sampleShift(1e15, 1), MAX_SAMPLE_SHIFT);
  t.is(sampleShift(Number.NaN, 10), 0);
  t.is(sampleShift(-5, 10), 0);
});

test('the plan takes each class\'s rate per CPU from the totals between two reads, and holds the highest of the last windows', (t) => {
  t.is(HOLD_WINDOWS, 3);
  // 4 CPUs, budget 1000 a second per CPU and class
  const plan = new SamplingPlan(3, 4, 1000, 0);
  // after 2 s: class 0 ran 4 000 (500/s per CPU), class 1 80 000 (10 000/s per CPU), class 2 none
  t.true(plan.update([4_000, 80_000, 0], 2000));
  t.deepEqual([...plan.shifts], [0, 4, 0]); // 10 000 / 16 = 625 <= 1000 < 10 000 / 8
  // the same rates again: nothing to change
  t.false(plan.update([8_000, 160_000, 0], 4000));
  // class 1 falls quiet, class 2 bursts in half a second: 200 000 / 0.5 s / 4 = 100 000 per CPU, sampled at once
  t.true(plan.update([8_000, 160_000, 200_000], 4500));
  t.deepEqual([...plan.shifts], [0, 4, 7]); // class 1 held: it ran 10 000 per CPU within the last three windows
  t.false(plan.update([8_000, 160_000, 200_000], 5500));
  t.true(plan.update([8_000, 160_000, 200_000], 6500)); // three windows quiet: class 1 is timed one by one again
  t.deepEqual([...plan.shifts], [0, 0, 7]);
  t.true(plan.update([8_000, 160_000, 200_000], 7500)); // and class 2, three windows after its burst
  t.deepEqual([...plan.shifts], [0, 0, 0]);
});

test('a burst every other window stays sampled, in the bursts and between them', (t) => {
  const plan = new SamplingPlan(1, 1, 1000, 0);
  let total = 0;
  const seen: number[] = [];
  for (let s = 1; s <= 8; s++) {
    total += s % 2 === 1 ? 1_000_000 : 500;
    plan.update([total], s * 1000);
    seen.push(plan.shifts[0] as number);
  }
  // the first burst is timed in full (nothing was known before it); from then on every window is sampled
  t.deepEqual(seen, [10, 10, 10, 10, 10, 10, 10, 10]);
});

test('windows shorter than 250 ms are joined to the next (the first read right after start, fast refreshes)', (t) => {
  t.is(MIN_WINDOW_MS, 250);
  const plan = new SamplingPlan(1, 1, 1000, 0);
  // the agent's own start-up: 3 000 syscalls in the first 5 ms would read as 600 000 a second
  t.false(plan.update([3_000], 5));
  t.deepEqual([...plan.shifts], [0]);
  t.false(plan.update([3_500], 4000)); // 3 500 in the first 4 s: within the budget
  t.deepEqual([...plan.shifts], [0]);
  // at 100 ms refreshes, three are joined into one window
  t.false(plan.update([103_500], 4100));
  t.false(plan.update([203_500], 4200));
  t.true(plan.update([303_500], 4300)); // 300 000 in 0.3 s
  t.deepEqual([...plan.shifts], [10]); // 1e6 / 1024 = 977
});

test('the plan ignores a read at the same instant and a total that went back (a reloaded object)', (t) => {
  const plan = new SamplingPlan(1, 1, 100, 1000);
  t.false(plan.update([1e6], 1000));
  t.deepEqual([...plan.shifts], [0]);
  t.true(plan.update([1e6], 2000));
  t.deepEqual([...plan.shifts], [14]); // 1e6 a second: 1e6 / 2^14 = 61 <= 100
  t.false(plan.update([50], 3000)); // totals below the last: no rate for the window (the last rates still hold)
  t.false(plan.update([60], 4000));
  t.true(plan.update([70], 5000));
  t.deepEqual([...plan.shifts], [0]);
});

test('a plan started on filled histograms (a role joining an object kept loaded) takes its rates from there', (t) => {
  const plan = new SamplingPlan(2, 1, 100, 0, [5e6, 0]);
  t.false(plan.update([5e6 + 50, 30], 1000)); // 50 and 30 a second: within the budget
  t.deepEqual([...plan.shifts], [0, 0]);
  const fresh = new SamplingPlan(2, 1, 100, 0);
  t.true(fresh.update([5e6 + 50, 30], 1000)); // from zero, the old total reads as 5 million a second
});
