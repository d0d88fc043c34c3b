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
 * Only for `rezolus agent` (main.ts AgentProcess), through the malloc addon
 * (native/src/heap.cc); without it nothing runs and V8's reducer acts alone.
 */
import { loadMallocAddon, type MallocAddon } from '../native/index.js';

export const REDUCE_HEAP_AFTER_MS = 15_000;

/** Asks V8 to reduce its heap once, `afterMs` from now; returns the cancel, or undefined when the addon is not there. */
export function reduceHeapAfterStart(afterMs = REDUCE_HEAP_AFTER_MS, load: () => MallocAddon = loadMallocAddon): (() => void) | undefined {
  let addon: MallocAddon;
  try {
    addon = load();
  } catch {
    // NATIVE_UNAVAILABLE: V8's memory reducer shrinks the heap on its own, later
    return undefined;
  }
  if (typeof addon.reduceHeap !== 'function') return undefined;
  const timer = setTimeout(() => addon.reduceHeap(), afterMs);
  timer.unref();
  return () => clearTimeout(timer);
}
