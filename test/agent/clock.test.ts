import test from 'ava';
import { everyOnTheClock, msToNextTick, nowNs, tightestAnchor } from '../../src/agent/clock.js';

test('the anchor is the tightest of its tries: a Date.now() read after a 24 ms preemption is not used', (t) => {
  const preempted = { h0: 1_000_000_000n, wallMs: 5_024, h1: 1_024_100_000n };
  const tight = { h0: 1_030_000_000n, wallMs: 5_030, h1: 1_030_050_000n };
  const a = tightestAnchor([preempted, tight]);
  t.is(a.wallNs, 5_030_500_000n);
  t.is(a.hrNs, 1_030_025_000n);
  // the preempted pair alone would have put the wall clock ~12 ms ahead at its middle
  const alone = tightestAnchor([preempted]);
  t.is(alone.wallNs - (alone.hrNs - 1_000_000_000n) - 5_000_000_000n, 12_450_000n);
  t.throws(() => tightestAnchor([]), { message: /no anchor/ });
});

test('nowNs keeps to Date.now() within a millisecond and never goes back', (t) => {
  let last = 0n;
  for (let i = 0; i < 2000; i++) {
    const before = BigInt(Date.now()) * 1_000_000n;
    const n = nowNs();
    const after = BigInt(Date.now()) * 1_000_000n;
    t.true(n >= last, `went back by ${last - n} ns`);
    last = n;
    if (n < before - 1_000_000n || n > after + 2_000_000n) t.fail(`nowNs ${n} outside [${before}, ${after}] by more than a ms`);
  }
  t.pass();
});

test('msToNextTick counts to the next whole interval', (t) => {
  t.is(msToNextTick(100, 1_234), 66);
  t.is(msToNextTick(100, 1_300), 100);
  t.is(msToNextTick(1000, 999), 1);
});

test('everyOnTheClock calls once per whole multiple of its period, lagMs past it, until stopped', async (t) => {
  const EVERY = 200;
  const LAG = 5;
  const at: number[] = [];
  const stop = everyOnTheClock(EVERY, LAG, () => at.push(Date.now()));
  await new Promise((r) => setTimeout(r, 1100));
  stop();
  const calls = at.length;
  await new Promise((r) => setTimeout(r, 2 * EVERY + 50));
  t.is(at.length, calls, 'nothing after stop');
  t.true(calls >= 3, `${calls} calls in 1.1 s`);
  // one call per boundary: a timer that fired early and was set again for the rest would call twice
  const slots = at.map((ms) => Math.floor((ms - LAG + 1) / EVERY));
  t.deepEqual(slots, [...new Set(slots)].sort((a, b) => a - b), `one call per boundary: ${at.map((ms) => ms % EVERY).join(', ')}`);
});

test('everyOnTheClock refuses a period or lag it cannot keep, instead of calling every millisecond', (t) => {
  for (const every of [0, -5, Number.NaN, 0.5, 1.5]) t.throws(() => everyOnTheClock(every, 0, () => {}), { instanceOf: RangeError }, String(every));
  t.throws(() => everyOnTheClock(1000, 1000, () => {}), { instanceOf: RangeError });
  t.throws(() => everyOnTheClock(1000, -1, () => {}), { instanceOf: RangeError });
});
