import test from 'ava';
import { execFileSync } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { REDUCE_HEAP_GROWTH, REDUCE_HEAP_SETTLE_CHECKS, reduceHeapAfterStart } from '../../src/agent/heap-reduce.js';
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

test('after the first, the agent asks again whenever the heap has grown by the threshold past its size after the last ask, and not before', async (t) => {
  const MiB = 1024 * 1024;
  t.is(REDUCE_HEAP_GROWTH, MiB, 'the agent asks at 1 MiB of growth');
  let asked = 0;
  let size = 10 * MiB;
  let checks = 0;
  const cancel = reduceHeapAfterStart(10, addonWith(() => ++asked > 0), {
    checkMs: 20,
    growth: 2 * MiB,
    settle: 1000,
    heapSize: () => {
      checks += 1;
      return size;
    },
  });
  t.true(await until(() => asked === 1 && checks >= 3, 20_000));
  /** the heap at `mib` for three checks */
  const holdAt = async (mib: number): Promise<void> => {
    size = mib * MiB;
    const seen = checks;
    t.true(await until(() => checks >= seen + 3, 20_000));
  };
  await holdAt(11.9);
  t.is(asked, 1, 'grown 1.9 MiB: not yet');
  size = 12 * MiB;
  t.true(await until(() => asked === 2, 20_000), 'grown 2 MiB: asked');
  // the next check takes the size after the GC as the new base
  await holdAt(13);
  t.is(asked, 2, '13 MiB after the GC is the new base');
  size = 15 * MiB;
  t.true(await until(() => asked === 3, 20_000), 'grown 2 MiB past 13');
  cancel?.();
  const stopped = checks;
  await new Promise((r) => setTimeout(r, 100));
  t.true(checks <= stopped + 1, 'cancelled: no more checks');
});

test('a heap left big after a burst is asked to shrink once the settle has passed, and not again once it is back near its smallest', async (t) => {
  const MiB = 1024 * 1024;
  t.is(REDUCE_HEAP_SETTLE_CHECKS, 5, 'at most every 5 checks (5 minutes)');
  let asked = 0;
  let size = 10 * MiB;
  let checks = 0;
  const cancel = reduceHeapAfterStart(10, addonWith(() => ++asked > 0), {
    checkMs: 20,
    growth: 2 * MiB,
    settle: 4,
    heapSize: () => {
      checks += 1;
      return size;
    },
  });
  t.true(await until(() => asked === 1 && checks >= 2, 20_000));
  // the burst: grown past the base, asked; V8's heap stays at 30 MiB after the GC (the work still there)
  size = 30 * MiB;
  t.true(await until(() => asked === 2, 20_000), 'grown past the base');
  const at = checks;
  t.true(await until(() => asked === 3, 20_000), 'the settle passed: asked again, 30 MiB being past the smallest (10)');
  t.true(checks - at >= 4, `not before the settle (${checks - at} checks)`);
  // the work gone and the heap back near its smallest: no more asks
  size = 11 * MiB;
  const seen = checks;
  t.true(await until(() => checks >= seen + 12, 20_000));
  t.true(asked <= 4, `asked ${asked} times: at most once more, by a check of 30 MiB before the size fell`);
  const settled = asked;
  const again = checks;
  t.true(await until(() => checks >= again + 12, 20_000));
  t.is(asked, settled, 'back near its smallest: not asked again');
  cancel?.();
});

test('a heap that stays bigger after a settle reduce is not asked again every settle: what that reduce left is the new smallest', async (t) => {
  const MiB = 1024 * 1024;
  let asked = 0;
  let size = 10 * MiB;
  let checks = 0;
  const cancel = reduceHeapAfterStart(10, addonWith(() => ++asked > 0), {
    checkMs: 20,
    settle: 5,
    heapSize: () => {
      checks += 1;
      // the work grows for good at the third check: 1.5 MiB more, which no GC gives back
      if (checks === 3) size = 11.5 * MiB;
      return size;
    },
  });
  t.true(await until(() => checks >= 100, 30_000));
  cancel?.();
  t.true(asked <= 3, `asked ${asked} times in ${checks} checks: the first, and at most one settle reduce (plus one in flight)`);
  t.true(asked >= 2, 'the settle reduce came once');
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
