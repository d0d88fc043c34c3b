import test from 'ava';
import { RenderPacer } from '../../src/exporter/pacer.js';

test('a render of T ms is served again for scrapes up to 2 T after it ended, then rendered anew', (t) => {
  const p = new RenderPacer<string>();
  t.is(p.reuse(0), undefined, 'nothing rendered yet');
  p.rendered('first', 1000, 1300, 250); // 300 ms, 250 ms of CPU
  t.is(p.reuse(1300), 'first');
  t.is(p.reuse(1899), 'first', '599 ms after a 300 ms render');
  t.is(p.reuse(1900), undefined, '600 ms after: anew');
  t.is(p.reused, 2);
  p.rendered('second', 1900, 2100, 100); // at the floor: reused
  t.is(p.reuse(2200), 'second');
  t.is(p.reused, 3);
});

test('renders that cost less CPU than the floor are never reused, however long they waited for a CPU', (t) => {
  const p = new RenderPacer<string>();
  p.rendered('cheap', 0, 2000, 99); // 2 s on a busy machine, 99 ms of CPU
  t.is(p.reuse(2000), undefined);
  t.is(p.reuse(2001), undefined);
  t.is(p.reused, 0);
});

test('a clock that went back, or options that say so, give a new render', (t) => {
  const p = new RenderPacer<string>({ floorMs: 10, reuseFactor: 1 });
  p.rendered('x', 5000, 5100, 100);
  t.is(p.reuse(4000), undefined, 'before the render ended');
  t.is(p.reuse(5150), 'x');
  t.is(p.reuse(5200), undefined, 'factor 1: 100 ms after a 100 ms render');
  const never = new RenderPacer<string>({ reuseFactor: 0 });
  never.rendered('y', 0, 10_000, 10_000);
  t.is(never.reuse(10_000), undefined);
});

test('a body that may not be reused is not kept: a cheap render after a slow one ends the reuse', (t) => {
  const p = new RenderPacer<string>();
  p.rendered('slow', 0, 400, 300);
  t.is(p.reuse(500), 'slow');
  p.rendered('cheap', 500, 510, 5);
  t.is(p.reuse(511), undefined, 'the slow body is gone with the cheap render');
});
