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

/**
 * Asks V8 to reduce its heap `afterMs` from now, then whenever it has grown
 * `growth` bytes past its size a check after the last reduce; returns the
 * cancel, or undefined when the addon is not there.
 */
export function reduceHeapAfterStart(
  afterMs = REDUCE_HEAP_AFTER_MS,
  load: () => MallocAddon = loadMallocAddon,
  o: { readonly checkMs?: number; readonly growth?: number; readonly heapSize?: () => number } = {},
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
  // the size after a reduce is taken at the next check: the GC asked for ends over the next few ms of JS
  let base: number | undefined;
  let watch: NodeJS.Timeout | undefined;
  const first = setTimeout(() => {
    addon.reduceHeap();
    watch = setInterval(() => {
      const size = heapSize();
      if (base === undefined) base = size;
      else if (size >= base + growth) {
        addon.reduceHeap();
        base = undefined;
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
