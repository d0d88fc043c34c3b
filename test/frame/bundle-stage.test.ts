import test from 'ava';
import { bundleFrames, encodeBundle } from '../../src/frame/bundle.js';
import { BundleStage } from '../../src/frame/bundle-stage.js';

const frameOf = (n: number, fill: number): Uint8Array => Buffer.alloc(n, fill);

test('a gathered bundle is byte for byte the one encodeBundle makes, for every header width, past the first memory', (t) => {
  const stage = new BundleStage();
  // counts for a fixarray, an array16; frame sizes for bin8, bin16 and bin32, together past the stage's first 16 KiB
  for (const sizes of [[24], [24, 255, 256, 65_535, 65_536, 100], Array.from({ length: 40 }, (_, i) => 24 + 97 * i)]) {
    const frames = sizes.map((n, i) => frameOf(n, i + 1));
    for (const f of frames) stage.add(f);
    t.is(stage.count, frames.length);
    t.is(stage.frameBytes, sizes.reduce((a, b) => a + b, 0));
    const gathered = Buffer.from(stage.take());
    t.deepEqual(gathered, Buffer.from(encodeBundle(frames)));
    t.is(bundleFrames(gathered).length, frames.length);
    t.is(stage.count, 0, 'empty after take');
    t.is(stage.frameBytes, 0);
  }
});

test('take writes into the memory it is given, sized to the bundle', (t) => {
  const stage = new BundleStage();
  stage.add(frameOf(40, 7));
  stage.add(frameOf(50, 8));
  const asked: number[] = [];
  const out = stage.take((n) => {
    asked.push(n);
    return Buffer.alloc(n + 10).subarray(0, n);
  });
  t.deepEqual(asked, [1 + 2 + 40 + 2 + 50]);
  t.deepEqual(bundleFrames(out).map((f) => f.byteLength), [40, 50]);
});
