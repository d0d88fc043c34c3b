import test from 'ava';
import { BundleBytes } from '../../src/frame/bundle-bytes.js';
import { bundleFrames, encodeBundle } from '../../src/frame/bundle.js';

test('bytes given back are lent again for the next bundle of a size they hold', (t) => {
  const pool = new BundleBytes();
  const a = pool.take(45_000);
  t.is(a.byteLength, 45_000);
  t.is(pool.kept, 0);
  pool.give(a);
  t.is(pool.kept, 1);
  const b = pool.take(44_000);
  t.is(b.buffer, a.buffer, 'the same memory');
  t.is(b.byteLength, 44_000);
  t.is(pool.kept, 0);
  // larger than any kept: a new buffer
  pool.give(b);
  const c = pool.take(200_000);
  t.not(c.buffer, a.buffer);
  t.is(pool.kept, 1);
});

test('only bytes lent and not yet given back are taken: a second give, or bytes from elsewhere, change nothing', (t) => {
  const pool = new BundleBytes();
  const a = pool.take(1000);
  pool.give(a);
  pool.give(a);
  t.is(pool.kept, 1, 'given twice, kept once');
  const b = pool.take(1000);
  const c = pool.take(1000);
  t.is(b.buffer, a.buffer);
  t.not(c.buffer, b.buffer, 'never lent to two bundles at once');
  pool.give(Buffer.allocUnsafeSlow(1000));
  pool.give(new Uint8Array(64));
  t.is(pool.kept, 0, 'foreign bytes are not kept');
});

test('a few buffers are kept, the largest first; one above 2 MiB is not', (t) => {
  const pool = new BundleBytes();
  const lent = [10_000, 50_000, 20_000, 90_000, 30_000, 70_000].map((n) => pool.take(n));
  for (const b of lent) pool.give(b);
  t.is(pool.kept, 4);
  // the two smallest went: a 40 kB bundle gets the 50 kB one, not a new one
  t.is(pool.take(40_000).buffer, (lent[1] as Buffer).buffer);
  const huge = pool.take(3 * 1024 * 1024);
  pool.give(huge);
  t.is(pool.kept, 3);
});

test('a bundle written into lent bytes reads back as its frames', (t) => {
  const pool = new BundleBytes();
  const frames = [new Uint8Array(300).fill(1), new Uint8Array(40).fill(2)];
  const data = encodeBundle(frames, (n) => pool.take(n));
  t.deepEqual(bundleFrames(data).map((f) => [f.byteLength, f[0]]), [[300, 1], [40, 2]]);
});

test('a new buffer is the bundle and an eighth at most: during an outage nothing is given back, and the buffer counts bundles by their size', (t) => {
  const pool = new BundleBytes();
  for (const n of [1, 200, 2000, 45_000, 900_000]) {
    const room = pool.take(n).buffer.byteLength;
    t.true(room >= n && room <= n + n / 8 + 256, `${room} bytes of room for a bundle of ${n}`);
  }
});
