import test from 'ava';
import { Runs } from '../../src/viewer/file/hybrid.js';

/** Every value the runs give, expanded. */
function expand(bytes: number[], width: number): number[] {
  const runs = new Runs(Uint8Array.from(bytes), 0, bytes.length, width);
  const out: number[] = [];
  while (runs.fill()) {
    for (let i = 0; i < runs.left; i++) out.push(runs.value);
    runs.left = 0;
  }
  return out;
}

test('an RLE run with a two-byte header is one run', (t) => {
  // 300 << 1 = 600 = 0xd8 0x04 (ULEB128), value 5 in one byte
  const runs = new Runs(Uint8Array.from([0xd8, 0x04, 5]), 0, 3, 3);
  t.true(runs.fill());
  t.is(runs.value, 5);
  t.is(runs.left, 300);
  runs.left = 0;
  t.false(runs.fill());
});

test('bit-packed values, least significant bit first (the format description’s example)', (t) => {
  // one group of 8 values of 3 bits: 0 … 7
  t.deepEqual(expand([0x03, 0x88, 0xc6, 0xfa], 3), [0, 1, 2, 3, 4, 5, 6, 7]);
});

test('RLE and bit-packed runs mixed; wide values; bit width 0', (t) => {
  t.deepEqual(expand([0x04, 0x01, 0x03, 0xff, 0x06, 0x00], 1), [1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 0, 0, 0]);
  t.deepEqual(expand([0x02, 0x78, 0x56, 0x34, 0x12], 32), [0x12345678]);
  t.deepEqual(expand([0x08], 0), [0, 0, 0, 0]);
});

test('data cut short throws', (t) => {
  t.throws(() => expand([0x03, 0x88], 3), { message: /past the end/ });
  t.throws(() => expand([0x80], 3), { message: /past the end/ });
  t.throws(() => expand([0x02], 16), { message: /past the end/ });
});
