/** The end of a recording's window in frame time (src/sources/window-end.ts). */
import test from 'ava';
import { MAX_LAG_WAIT_NS, WindowEnd } from '../../src/sources/window-end.js';

const S = 1_000_000_000n;
const END = 100n * S;

test('a frame belongs when it ended at or before the end, whenever it arrived', (t) => {
  const w = new WindowEnd(END, S);
  t.true(w.admit('a', 'cpu', END, END + 60n * S));
  t.false(w.admit('a', 'cpu', END + 1n, END + 60n * S));
  t.true(w.admit('b', 'cpu', END - S, undefined));
});

test('complete once every host and sampler seen has a frame past the end; not before any was seen', (t) => {
  const w = new WindowEnd(END, S);
  t.false(w.complete, 'nothing seen: not complete (the deadline decides)');
  w.admit('a', 'cpu', END - S, END);
  w.admit('a', 'mem', END - S, END);
  w.admit('b', 'cpu', END - S, END);
  t.is(w.waitingFor, 3);
  w.admit('a', 'cpu', END + S, END + S);
  w.admit('a', 'cpu', END + 2n * S, END + 2n * S);
  t.is(w.waitingFor, 2, 'a second frame past the end counts once');
  w.admit('b', 'cpu', END + S, END + S);
  t.false(w.complete, "a's mem is still within");
  w.admit('a', 'mem', END + S, END + S);
  t.true(w.complete);
  w.admit('c', 'cpu', END + 5n * S, END + 5n * S);
  t.true(w.complete, 'a pair first seen past the end has nothing in the window');
});

test('the deadline: the end, two intervals (at least 2 s), and how late frames have arrived lately, capped', (t) => {
  t.is(new WindowEnd(END, 100_000_000n).deadlineNs(), END + 2n * S, 'at least 2 s');
  t.is(new WindowEnd(END, 5n * S).deadlineNs(), END + 10n * S, 'two intervals');
  const w = new WindowEnd(END, S);
  w.admit('a', 'cpu', END - 30n * S, END - 3n * S);
  t.is(w.lagNs, 27n * S);
  t.is(w.deadlineNs(), END + 2n * S + 27n * S);
  w.admit('a', 'cpu', END - 100n * S, END - 2n * S);
  t.is(w.lagNs, 98n * S, 'the most in the span');
  w.admit('a', 'cpu', END - 1000n * S, END);
  t.is(w.deadlineNs(), END + 2n * S + MAX_LAG_WAIT_NS, 'a host sending an old buffer is not waited for beyond the cap');
});

test('lateness is forgotten: a span of on-time arrivals after it, or a long pause', (t) => {
  const w = new WindowEnd(END, S);
  w.admit('a', 'cpu', 0n, 30n * S);
  t.is(w.lagNs, 30n * S);
  // the next span (10 s on): on time, but the span before still counts
  w.admit('a', 'cpu', 41n * S, 41n * S);
  t.is(w.lagNs, 30n * S, 'the span just before still counts');
  w.admit('a', 'cpu', 52n * S, 52n * S);
  t.is(w.lagNs, 0n, 'two spans on: forgotten');
  const paused = new WindowEnd(END, S);
  paused.admit('a', 'cpu', 0n, 30n * S);
  paused.admit('a', 'cpu', 90n * S, 90n * S);
  t.is(paused.lagNs, 0n, 'after a pause of more than a span, the old span is not the one before');
  t.true(paused.admit('a', 'cpu', 95n * S, 90n * S), 'a frame stamped after its arrival (a clock ahead) is no lateness');
  t.is(paused.lagNs, 0n);
});
