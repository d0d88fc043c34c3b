/**
 * Gives the agent's free malloc pages back to the kernel now and then.
 *
 * Node allocates ArrayBuffer stores (frames, socket writes) and much of its
 * own bookkeeping with malloc; what a tick frees stays mapped in glibc's
 * arena, between chunks still in use, until malloc_trim returns it. At
 * 10 Hz that is 3–4 MiB of the agent's RSS (test/bench/README.md,
 * "malloc_trim at 10 Hz"). The trim runs in the wake-up of a tick (10 ms
 * past a whole period), after the status write that shares it.
 *
 * Only for `rezolus agent` (main.ts AgentProcess): beside the exporter's
 * heap (`rezolus up`) a trim would walk hundreds of MiB. Through the small
 * malloc addon (native/src/malloc.c); without it (not built) or without
 * glibc there is nothing to trim and nothing runs.
 */
import { everyOnTheClock } from './clock.js';
import { loadMallocAddon, type MallocAddon } from '../native/index.js';

export const MALLOC_TRIM_EVERY_MS = 10_000;
const LAG_MS = 10;

/** Trims every `everyMs` on the wall clock; returns the stop, or undefined when the addon is not there. */
export function startMallocTrim(everyMs = MALLOC_TRIM_EVERY_MS, load: () => MallocAddon = loadMallocAddon): (() => void) | undefined {
  let addon: MallocAddon;
  try {
    addon = load();
  } catch {
    // NATIVE_UNAVAILABLE: the agent runs as before, with a few MiB more
    return undefined;
  }
  if (typeof addon.mallocTrim !== 'function') return undefined;
  return everyOnTheClock(everyMs, Math.min(LAG_MS, everyMs - 1), () => addon.mallocTrim());
}
