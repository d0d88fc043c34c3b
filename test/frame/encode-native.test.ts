import test from 'ava';
import { encodeFrame, setNumberPacker, type NumberPacker } from '../../src/frame/encode.js';
import { useNativeNumberPacker, withoutTurbofan } from '../../src/agent/number-packer.js';
import { loadNative } from '../../src/native/index.js';
import { encodeCases } from './encode-cases.js';

// every case again with the numbers written by the native addon, as the agent does
const native = loadNative().packNumbers;
let calls = 0;
const counting: NumberPacker = (src, n, plain, dst, at) => {
  calls++;
  return native(src, n, plain, dst, at);
};
setNumberPacker(counting);
encodeCases((title) => `native numbers: ${title}`);

test('the packer writes each run of numbers in one call: 3 runs around a bigint and a histogram, 2 for its indexes and counts', (t) => {
  const before = calls;
  encodeFrame(
    { host: 'h', sampler: 's', instance: 1, seq: 1, beginNs: 1n, endNs: 2n, descriptor: 'd' },
    [1, 2, 3, 2n ** 60n, 4, { groupingPower: 3, maxValuePower: 64, index: [1, 2], count: [5, 6] }, 7, 8],
  );
  t.is(calls - before, 5);
});

test('packNumbers refuses a destination without 9 bytes a number left, and arguments of the wrong kind', (t) => {
  const src = new Float64Array([1, 2, 3]);
  t.throws(() => native(src, 3, false, new Uint8Array(26), 0), { instanceOf: RangeError });
  t.throws(() => native(src, 3, false, new Uint8Array(40), 14), { instanceOf: RangeError });
  t.throws(() => native(src, 4, false, new Uint8Array(100), 0), { instanceOf: RangeError }, 'n beyond src');
  t.throws(() => native(src, -1, false, new Uint8Array(100), 0), { instanceOf: RangeError });
  t.throws(() => native(new Uint32Array(3) as unknown as Float64Array, 3, false, new Uint8Array(100), 0), { instanceOf: TypeError });
  t.is(native(src, 3, false, new Uint8Array(27), 0), 3, 'three fixints');
});

test('the agent uses the native packer when V8 runs without TurboFan, its own loop with it', (t) => {
  t.true(useNativeNumberPacker(['--no-opt', '--semi-space-growth-factor=1']), 'the agent at 1 Hz');
  t.true(useNativeNumberPacker(['--lite-mode']));
  t.false(useNativeNumberPacker(['--opt', '--semi-space-growth-factor=1']), 'the agent at 10 Hz');
  t.false(useNativeNumberPacker([]), 'up, tests');
  t.false(withoutTurbofan(['--no-opt', '--opt']));
  t.true(withoutTurbofan(['--opt', '--jitless']));
  setNumberPacker(counting);
});
