/**
 * Makes V8's heap small once the agent has started.
 *
 * Start-up (loading the CLI, the BPF objects, the first ticks of every
 * sampler, their first optimised compiles) grows V8's young generation to
 * 8 MiB and more, and V8 leaves it there until its memory reducer sees a
 * quiet spell. At 10 Hz that came ~8 s after start in most runs, and in
 * others after 100 s or more: the agent then kept ~6 MiB more RSS until it
 * did (test/bench/README.md, "the young generation after start-up"). Asked
 * once, REDUCE_HEAP_AFTER_MS after start, V8 does what its reducer would
 * have done: one full GC, after which the young generation grows again only
 * as the agent's own ticks need.
 *
 * After that, once a minute: when V8's heap has grown REDUCE_HEAP_GROWTH
 * past what it was after the last reduce, the agent asks again. The agent
 * runs in V8's predictable mode (node-flags.ts), which turns V8's memory
 * reducer off: at 1 Hz the old space then fills with the few kB a second
 * that outlive the scavenges until V8's own full GC at its limit (~21 MiB,
 * after ~9 and ~23 minutes), which frees the objects but keeps the pages
 * (heap 21.8 MiB committed after it), and RSS passed 74 MiB for a minute
 * around the second. Asked at 2 MiB of growth, the reduce came after V8's
 * own GCs and gave their pages back (to 16.0 and 20.3 MiB); at 1 MiB it
 * comes first, every ~7 minutes at 1 Hz (test/bench/README.md, "the agent
 * under node's own flags").
 *
 * A burst of work (a host starting a thousand containers: at 1 Hz the
 * agent then does V8's own full GCs every few seconds, its heap at 30-40
 * MiB) leaves the heap at its size once the work is gone: nothing
 * allocates enough for another GC, and the reducer that would shrink it is
 * off; RSS stayed at 85 MiB where it had been 64. So the agent also asks
 * when the heap is REDUCE_HEAP_GROWTH past the smallest size a reduce has
 * left it at, at most every REDUCE_HEAP_SETTLE_CHECKS checks (5 minutes):
 * a full GC of a heap that big is tens of ms, far below what the burst
 * itself costs while it lasts. What such a reduce leaves is the smallest
 * size from then on, so a heap that stays bigger (the containers stay) is
 * not asked again every 5 minutes.
 *
 * Only for `rezolus agent` (main.ts AgentProcess), through the malloc addon
 * (native/src/heap.cc); without it nothing runs and V8's reducer acts alone.
 */
import { getHeapStatistics } from 'node:v8';
import { loadMallocAddon, type MallocAddon } from '../native/index.js';

export const REDUCE_HEAP_AFTER_MS = 15_000;
/** how often the heap's size is looked at after the first reduce */
export const REDUCE_HEAP_CHECK_MS = 60_000;
/** growth of V8's heap (total_heap_size) since the last reduce that asks for another */
export const REDUCE_HEAP_GROWTH = 1024 * 1024;
/** checks after a reduce before a heap grown past the smallest size after any reduce asks again */
export const REDUCE_HEAP_SETTLE_CHECKS = 5;

/**
 * Asks V8 to reduce its heap `afterMs` from now, then whenever it has grown
 * `growth` bytes past its size a check after the last reduce, or, `settle`
 * checks after the last reduce or later, past the smallest size a check
 * after any reduce saw; returns the cancel, or undefined when the addon is
 * not there.
 */
export function reduceHeapAfterStart(
  afterMs = REDUCE_HEAP_AFTER_MS,
  load: () => MallocAddon = loadMallocAddon,
  o: { readonly checkMs?: number; readonly growth?: number; readonly settle?: number; readonly heapSize?: () => number } = {},
): (() => void) | undefined {
  let addon: MallocAddon;
  try {
    addon = load();
  } catch {
    // NATIVE_UNAVAILABLE: V8's memory reducer shrinks the heap on its own, later
    return undefined;
  }
  if (typeof addon.reduceHeap !== 'function') return undefined;
  const heapSize = o.heapSize ?? (() => getHeapStatistics().total_heap_size);
  const growth = o.growth ?? REDUCE_HEAP_GROWTH;
  const settle = o.settle ?? REDUCE_HEAP_SETTLE_CHECKS;
  // the size after a reduce is taken at the next check: the GC asked for ends over the next few ms of JS
  let base: number | undefined;
  let smallest = Number.POSITIVE_INFINITY;
  let checks = 0;
  /** whether the last reduce was asked for by the settle rule: what it leaves is the new smallest */
  let settled = false;
  let watch: NodeJS.Timeout | undefined;
  const first = setTimeout(() => {
    addon.reduceHeap();
    watch = setInterval(() => {
      const size = heapSize();
      checks += 1;
      if (base === undefined) {
        base = size;
        // after a settle reduce the heap is as small as the work now allows: asking again every settle would not shrink it
        smallest = settled ? size : Math.min(smallest, size);
      } else if (size >= base + growth || (checks >= settle && size >= smallest + growth)) {
        settled = size < base + growth;
        addon.reduceHeap();
        base = undefined;
        checks = 0;
      }
    }, o.checkMs ?? REDUCE_HEAP_CHECK_MS);
    watch.unref();
  }, afterMs);
  first.unref();
  return () => {
    clearTimeout(first);
    clearInterval(watch);
  };
}
