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

test('complete once the end has passed and every host and sampler seen has a frame past it; not before any was seen', (t) => {
  const w = new WindowEnd(END, S);
  const after = END + 3n * S;
  t.false(w.completeAt(after), 'nothing seen: not complete (the deadline decides)');
  w.admit('a', 'cpu', END - S, END);
  w.admit('a', 'mem', END - S, END);
  w.admit('b', 'cpu', END - S, END);
  t.is(w.waitingFor, 3);
  w.admit('a', 'cpu', END + S, END + S);
  w.admit('a', 'cpu', END + 2n * S, END + 2n * S);
  t.is(w.waitingFor, 2, 'a second frame past the end counts once');
  w.admit('b', 'cpu', END + S, END + S);
  t.false(w.completeAt(after), "a's mem is still within");
  t.deepEqual(w.waitingPairs(5), ['a.mem']);
  w.admit('a', 'mem', END + S, END + S);
  t.true(w.completeAt(after));
  w.admit('c', 'cpu', END + 5n * S, END + 5n * S);
  t.true(w.completeAt(after), 'a pair first seen past the end has nothing in the window');
  t.is(w.after, 5);
});

test('not complete before the end, even when every frame seen is past it (a clock ahead, or a hostile publisher)', (t) => {
  const w = new WindowEnd(END, S);
  w.admit('ahead', 'cpu', END + 3600n * S, END - 50n * S);
  t.false(w.completeAt(END - 50n * S), 'in the middle of the window');
  t.false(w.completeAt(END), 'at the end itself');
  t.true(w.completeAt(END + 1n), 'once the end has passed, with nothing else seen');
});

test('a frame that ended at or before the start is the window before\'s, and says nothing of the end', (t) => {
  const start = END - 10n * S;
  const w = new WindowEnd(END, S, start);
  t.false(w.admit('a', 'cpu', start, start + 2n * S));
  t.false(w.admit('a', 'cpu', start - S, start + 2n * S));
  t.true(w.admit('a', 'cpu', start + 1n, start + 2n * S));
  t.is(w.before, 2);
  t.is(w.waitingFor, 1);
  t.is(w.leadNs, 2n * S, 'a reader of the stream starts 2 s (2 intervals, at least 2 s) before the start');
  t.is(new WindowEnd(END, 5n * S, start).leadNs, 10n * S);
  t.deepEqual(w.summary(), { before: 2, after: 0, neverPastEnd: 1, examples: ['a.cpu'] });
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

test('the bounds move down to row times, so adjacent windows share no row; a window shorter than a row keeps its own', (t) => {
  const half = S / 2n;
  // (10.3 s, 12.7 s] at rows of 500 ms: (10.0, 12.5]
  const w = new WindowEnd(12n * S + 700_000_000n, half, 10n * S + 300_000_000n);
  t.is(w.startNs, 10n * S);
  t.is(w.endNs, 12n * S + half);
  t.false(w.admit('a', 'cpu', 12n * S + 600_000_000n, undefined), "in the row of 13.0 s: the next window's");
  t.true(w.admit('a', 'cpu', 10n * S + 100_000_000n, undefined), 'in the row of 10.5 s');
  const next = new WindowEnd(15n * S, half, 12n * S + 700_000_000n);
  t.is(next.startNs, w.endNs, 'the next window starts where this one ends');
  const short = new WindowEnd(10n * S + 200_000_000n, 5n * S, 10n * S + 100_000_000n);
  t.deepEqual([short.startNs, short.endNs], [10n * S + 100_000_000n, 10n * S + 200_000_000n], '100 ms at rows of 5 s: as given');
});

test('the read is over once the window is complete, or at the deadline without it', (t) => {
  const w = new WindowEnd(END, S);
  w.admit('a', 'cpu', END - S, END);
  w.admit('b', 'cpu', END - S, END);
  const deadline = w.deadlineNs();
  t.false(w.overAt(END + S), 'b has no frame past the end yet');
  t.false(w.overAt(deadline), 'at the deadline itself');
  t.true(w.overAt(deadline + 1n), 'past it');
  w.admit('a', 'cpu', END + S, END + S);
  w.admit('b', 'cpu', END + S, END + S);
  t.true(w.overAt(END + S), 'complete');
});
