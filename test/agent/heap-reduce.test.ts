import test from 'ava';
import { execFileSync } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { reduceHeapAfterStart } from '../../src/agent/heap-reduce.js';
import { RezolusError } from '../../src/errors.js';
import { MALLOC_ADDON_PATH } from '../../src/native/index.js';
import { until } from '../helpers/until.js';

const addonWith = (reduceHeap: () => boolean) => () => ({ mallocArenaMax: () => true, mallocTrim: () => true, reduceHeap, reexec: () => 'not here', hideArgs: () => 0 });

test('the agent asks V8 once, after the delay, and not at all when cancelled or without the addon', async (t) => {
  let asked = 0;
  const cancel = reduceHeapAfterStart(30, addonWith(() => ++asked > 0));
  t.not(cancel, undefined);
  // waited for, not timed: a busy machine runs the timer late
  t.true(await until(() => asked >= 1, 20_000));
  await new Promise((r) => setTimeout(r, 150));
  t.is(asked, 1, 'once');
  let late = 0;
  reduceHeapAfterStart(50, addonWith(() => ++late > 0))?.();
  await new Promise((r) => setTimeout(r, 200));
  t.is(late, 0, 'cancelled before its time');
  const missing = (): never => {
    throw new RezolusError('NATIVE_UNAVAILABLE', 'native addon is not built');
  };
  t.is(reduceHeapAfterStart(10, missing), undefined);
});

// In a process of its own: its young generation grown to its most by a burst
// of allocation, then a light load of short-lived objects, as an agent's ticks.
function youngGeneration(reduce: boolean): { before: number; after: number } {
  const script = `
    const v8 = require('node:v8');
    const addon = require(${JSON.stringify(MALLOC_ADDON_PATH)});
    const young = () => v8.getHeapSpaceStatistics().find((s) => s.space_name === 'new_space').space_size / 1048576;
    let keep = [];
    const churn = (n) => { for (let i = 0; i < n; i++) { keep.push({ i, a: [i] }); if (keep.length > 20000) keep = []; } };
    for (let i = 0; i < 10; i++) churn(300000);
    const before = young();
    if (${reduce}) addon.reduceHeap();
    const t0 = Date.now();
    // until it has shrunk, or 5 s of light load
    const tick = setInterval(() => {
      churn(3000);
      if (young() < before / 2 || Date.now() - t0 > 5000) {
        clearInterval(tick);
        process.stdout.write(JSON.stringify({ before, after: young() }));
      }
    }, 50);`;
  const dir = mkdtempSync(join(tmpdir(), 'rezolus-heap-'));
  const file = join(dir, 'heap.cjs');
  writeFileSync(file, script);
  try {
    return JSON.parse(execFileSync(process.execPath, [file], { encoding: 'utf8' })) as { before: number; after: number };
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

test('reduceHeap leaves V8 young generation small, where alone it stays at its most', (t) => {
  const asked = youngGeneration(true);
  const alone = youngGeneration(false);
  t.log(`young generation, MiB: asked ${asked.before} -> ${asked.after}; alone ${alone.before} -> ${alone.after}`);
  t.true(asked.before >= 16, `grown to ${asked.before} MiB`);
  t.true(asked.after <= asked.before / 2, `asked: ${asked.before} -> ${asked.after} MiB`);
  t.is(alone.after, alone.before, 'without it V8 kept it over 5 s of light load');
});
