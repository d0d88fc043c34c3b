import test from 'ava';
import { bpfObjectPath, loadNative } from '../../src/native/index.js';
import { bucketCount, indexToRange, valueToIndex } from '../../src/metrics/histogram.js';

// The h2 index math of bpf/include/histogram.h, run in the kernel's BPF VM
// (BPF_PROG_TEST_RUN of bpf/test/h2.bpf.c), against src/metrics/histogram.ts:
// every bucket's lower and upper bound and their neighbours, every power of
// two and its neighbours, and the 32-bit boundary region.

const BATCH = 1024;

function boundaryValues(): bigint[] {
  const max = (1n << 64n) - 1n;
  const set = new Set<bigint>();
  const add = (v: bigint): void => {
    if (v >= 0n && v <= max) set.add(v);
  };
  for (let i = 0; i < bucketCount(3, 64); i++) {
    const { lower, upper } = indexToRange(i);
    for (const v of [lower - 1n, lower, lower + 1n, upper - 1n, upper, upper + 1n]) add(v);
  }
  for (let p = 0n; p < 64n; p++) for (const d of [-1n, 0n, 1n]) add((1n << p) + d);
  for (let v = 0n; v < 64n; v++) add(v);
  add(max);
  return [...set].sort((a, b) => (a < b ? -1 : a > b ? 1 : 0));
}

test('h2_index in BPF equals valueToIndex for every boundary value', (t) => {
  const native = loadNative();
  const object = new native.BpfObject(bpfObjectPath('test/h2'));
  try {
    object.load();
    const values = boundaryValues();
    t.true(values.length > 1900, `${values.length} values`);
    const key = Buffer.alloc(4);
    let mismatches = 0;
    for (let start = 0; start < values.length; start += BATCH) {
      const batch = values.slice(start, start + BATCH);
      for (let i = 0; i < BATCH; i++) {
        key.writeUInt32LE(i);
        const value = Buffer.alloc(8);
        value.writeBigUInt64LE(batch[i] ?? 0n);
        object.update('input', key, value);
      }
      t.is(object.testRun('h2_batch'), 0);
      for (let i = 0; i < batch.length; i++) {
        key.writeUInt32LE(i);
        const got = object.lookup('output', key)?.readUInt32LE(0);
        const want = valueToIndex(batch[i] as bigint);
        if (got !== want) {
          mismatches++;
          if (mismatches <= 5) t.log(`value ${batch[i]}: BPF ${got}, TS ${want}`);
        }
      }
    }
    t.is(mismatches, 0);
  } finally {
    object.close();
  }
});
