import test from 'ava';
import { SeqGuard } from '../../src/sources/order.js';

const f = (instance: number, seq: number, host = 'h', sampler = 's') => ({ host, sampler, instance, seq });

test('per (host, sampler) and run, seq only goes up: duplicates and older frames are refused', (t) => {
  const g = new SeqGuard();
  t.true(g.accept(f(1, 1)));
  t.true(g.accept(f(1, 2)));
  t.false(g.accept(f(1, 2)), 'a duplicate (redelivery)');
  t.false(g.accept(f(1, 1)), 'an older frame after a reconnect');
  t.true(g.accept(f(1, 5)), 'a gap is fine');
  t.false(g.accept(f(1, 4)));
  t.true(g.accept(f(1, 1, 'h', 'other')), 'another sampler has its own sequence');
  t.true(g.accept(f(1, 1, 'h2')), 'another host too');
});

test('a new run starts again at 1; the old run is still checked against its own seq', (t) => {
  const g = new SeqGuard();
  t.true(g.accept(f(1, 7)));
  t.true(g.accept(f(2, 1)), 'agent restart: new instance, seq 1');
  t.true(g.accept(f(2, 2)));
  t.false(g.accept(f(1, 7)), 'a duplicate of the old run');
  t.true(g.accept(f(1, 8)), 'the old run going on (a second agent on the host): the consumer decides');
  t.false(g.accept(f(2, 2)));
});

test('memory is bounded: runs per source and sources', (t) => {
  const g = new SeqGuard(3);
  for (let run = 1; run <= 10; run++) t.true(g.accept(f(run, 5)));
  t.true(g.accept(f(1, 5)), 'the oldest runs are forgotten (4 kept)');
  t.false(g.accept(f(10, 5)), 'a recent one is not');
  for (const host of ['a', 'b', 'c', 'd']) g.accept(f(1, 1, host));
  t.is(g.size, 3);
  t.true(g.accept(f(1, 1, 'a')), 'the source remembered longest was forgotten');
});
