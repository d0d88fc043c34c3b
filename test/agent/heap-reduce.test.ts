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

const MiB = 1024 * 1024;

/** The heap watch over a fake heap of `size` bytes, checked every 20 ms; its asks and checks counted, and the check of each ask. */
function fakeWatch(o: { readonly growth?: number; readonly settle: number; readonly onCheck?: (checks: number) => number | undefined }) {
  const w = { asked: 0, checks: 0, size: 10 * MiB, askedAt: [] as number[], cancel: undefined as (() => void) | undefined };
  w.cancel = reduceHeapAfterStart(10, addonWith(() => {
    w.askedAt.push(w.checks);
    return ++w.asked > 0;
  }), {
    checkMs: 20,
    ...(o.growth !== undefined ? { growth: o.growth } : {}),
    settle: o.settle,
    heapSize: () => {
      w.checks += 1;
      w.size = o.onCheck?.(w.checks) ?? w.size;
      return w.size;
    },
  });
  return w;
}

test('after the first, the agent asks again whenever the heap has grown by the threshold past its size after the last ask, and not before', async (t) => {
  t.is(REDUCE_HEAP_GROWTH, MiB, 'the agent asks at 1 MiB of growth');
  const w = fakeWatch({ growth: 2 * MiB, settle: 1000 });
  t.true(await until(() => w.asked === 1 && w.checks >= 3, 20_000));
  /** the heap at `mib` for three checks */
  const holdAt = async (mib: number): Promise<void> => {
    w.size = mib * MiB;
    const seen = w.checks;
    t.true(await until(() => w.checks >= seen + 3, 20_000));
  };
  await holdAt(11.9);
  t.is(w.asked, 1, 'grown 1.9 MiB: not yet');
  w.size = 12 * MiB;
  t.true(await until(() => w.asked === 2, 20_000), 'grown 2 MiB: asked');
  // the next check takes the size after the GC as the new base
  await holdAt(13);
  t.is(w.asked, 2, '13 MiB after the GC is the new base');
  w.size = 15 * MiB;
  t.true(await until(() => w.asked === 3, 20_000), 'grown 2 MiB past 13');
  w.cancel?.();
  const stopped = w.checks;
  await new Promise((r) => setTimeout(r, 100));
  t.true(w.checks <= stopped + 1, 'cancelled: no more checks');
});

test('a heap left big after a burst is asked to shrink once the settle has passed, and not again once it is back near its smallest', async (t) => {
  t.is(REDUCE_HEAP_SETTLE_CHECKS, 5, 'at most every 5 checks (5 minutes)');
  // by check number, not by the test's own timing (a busy machine runs its polls late): 10 MiB, then from the
  // 5th check a burst that V8's GC leaves at 30 MiB (the work still there), then from the 20th the work gone: 11 MiB
  const w = fakeWatch({ growth: 2 * MiB, settle: 4, onCheck: (n) => (n >= 20 ? 11 * MiB : n >= 5 ? 30 * MiB : 10 * MiB) });
  t.true(await until(() => w.checks >= 60, 30_000));
  w.cancel?.();
  t.log(`asked at checks ${w.askedAt.join(', ')}`);
  const [, burst, settled, ...more] = w.askedAt;
  t.is(burst, 5, `grown past the base at the burst's first check (asked at checks ${w.askedAt.join(', ')})`);
  t.true(settled !== undefined && settled - (burst ?? 0) >= 4, `the settle passed before asking again, 30 MiB being past the smallest (10): checks ${w.askedAt.join(', ')}`);
  t.true((settled ?? 0) < 20, 'asked during the burst');
  t.deepEqual(more.filter((n) => n >= 20), [], 'back near its smallest: not asked again');
});

test('a heap that stays bigger after a settle reduce is not asked again every settle: what that reduce left is the new smallest', async (t) => {
  // the work grows for good at the third check: 1.5 MiB more, which no GC gives back
  const w = fakeWatch({ settle: 5, onCheck: (n) => (n === 3 ? 11.5 * MiB : undefined) });
  t.true(await until(() => w.checks >= 100, 30_000));
  w.cancel?.();
  t.is(w.asked, 3, `in ${w.checks} checks: the first, the growth past the base at the third check, one settle reduce 5 checks later`);
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
