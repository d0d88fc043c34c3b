import test from 'ava';
import { execFileSync } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { startMallocTrim } from '../../src/agent/malloc-trim.js';
import { RezolusError } from '../../src/errors.js';
import { MALLOC_ADDON_PATH } from '../../src/native/index.js';
import { until } from '../helpers/until.js';

test('the agent trims on the clock through the malloc addon, stops when told, and runs on without it', async (t) => {
  let trims = 0;
  const stop = startMallocTrim(50, () => ({ mallocArenaMax: () => true, mallocTrim: () => ++trims > 0, reduceHeap: () => true, reexec: () => 'not here', hideArgs: () => 0 }));
  t.not(stop, undefined);
  // waited for, not timed: a busy machine runs the timers late
  t.true(await until(() => trims >= 3, 20_000), `${trims} trims at 50 ms`);
  stop?.();
  const seen = trims;
  await new Promise((r) => setTimeout(r, 200));
  t.is(trims, seen, 'none after the stop');
  const missing = (): never => {
    throw new RezolusError('NATIVE_UNAVAILABLE', 'native addon is not built');
  };
  t.is(startMallocTrim(50, missing), undefined);
});

test('mallocTrim gives free pages between live chunks back to the kernel (RSS falls)', (t) => {
  // in a process of its own: 3000 stores of 32 KiB (malloc'd, under the mmap threshold), all freed
  // but the last, which keeps them below the heap's top where free() alone gives nothing back
  const script = `
    const v8 = require('node:v8'); v8.setFlagsFromString('--expose-gc');
    const gc = require('node:vm').runInNewContext('gc');
    const addon = require(${JSON.stringify(MALLOC_ADDON_PATH)});
    const rss = () => Number(/VmRSS:\\s+(\\d+)/.exec(require('node:fs').readFileSync('/proc/self/status', 'utf8'))[1]) / 1024;
    let stores = [];
    for (let i = 0; i < 3000; i++) stores.push(Buffer.allocUnsafeSlow(32 * 1024).fill(1));
    const pin = stores[stores.length - 1];
    stores = null; gc(); gc();
    const before = rss();
    const released = addon.mallocTrim();
    process.stdout.write(JSON.stringify({ before, after: rss(), released, pin: pin.length }));`;
  // from a file: under -e the freed stores stayed in RSS whether trimmed or not
  const dir = mkdtempSync(join(tmpdir(), 'rezolus-trim-'));
  const file = join(dir, 'trim.cjs');
  writeFileSync(file, script);
  let out: { before: number; after: number; released: boolean };
  try {
    out = JSON.parse(execFileSync(process.execPath, [file], { encoding: 'utf8' })) as typeof out;
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
  t.log(`RSS ${out.before.toFixed(1)} -> ${out.after.toFixed(1)} MiB`);
  t.true(out.released);
  // ~94 MiB were free; at least half of them must leave
  t.true(out.before - out.after >= 45, `RSS ${out.before.toFixed(1)} -> ${out.after.toFixed(1)} MiB`);
});
