import test from 'ava';
import { cpuIdLimit } from '../../src/samplers/kernel/cpu-ids.js';

test('cpuIdLimit is one past the highest possible CPU id, so banks indexed by CPU id hold every CPU', (t) => {
  t.is(cpuIdLimit('0-1\n', 2), 2);
  t.is(cpuIdLimit('0-255\n', 256), 256);
  t.is(cpuIdLimit('0,2\n', 2), 3, 'a gap: CPU 2 needs a third bank');
  t.is(cpuIdLimit('0-3,6-7\n', 6), 8);
  t.is(cpuIdLimit('0\n', 1), 1);
});

test('cpuIdLimit falls back on the count for a missing or unreadable list, and never goes below it', (t) => {
  t.is(cpuIdLimit(undefined, 4), 4);
  t.is(cpuIdLimit('garbage', 4), 4);
  t.is(cpuIdLimit('', 4), 4);
  t.is(cpuIdLimit('0-1', 4), 4);
});
