/**
 * How many glibc malloc arenas the agent's threads may make.
 *
 * glibc gives a thread that allocates while another holds the main arena an
 * arena of its own (up to 8 per CPU), and memory freed in an arena stays
 * mapped for that arena's next use. V8's worker threads (background
 * compiles, concurrent marking) made four arenas of 2–4 MiB each in the
 * agent, most of them during its start-up; malloc_trim gave none of it back.
 * With one arena for every thread, every sampler at 10 Hz, both agents in
 * one 90 s window: RSS 89.4 against 98.4 MiB for the same CPU (1.02x)
 * (test/bench/README.md, "agent memory: one malloc arena"). At 1 Hz it
 * changed neither.
 *
 * Set by the CLI's entry for `rezolus agent` before the rest of the CLI
 * loads, as the V8 flags are (v8-flags.ts): set once the config was read it
 * came after those arenas were made, and saved nothing. Through a small
 * addon of its own (native/src/malloc.c, 0.25 MiB to load; the libbpf addon
 * costs 1.5 MiB). Without it (not built) or without glibc nothing is set.
 * MALLOC_ARENA_MAX in the environment (read by glibc at start) is the user's
 * choice and is left alone.
 */
import { loadMallocAddon, type MallocAddon } from '../native/index.js';

export const AGENT_MALLOC_ARENAS = 1;

let applied: number | undefined;

/** The arena limit for the CLI run with `args`: AGENT_MALLOC_ARENAS for `agent`, unless MALLOC_ARENA_MAX is set. */
export function agentMallocArenas(args: readonly string[], env: NodeJS.ProcessEnv): number | undefined {
  return args[0] === 'agent' && env.MALLOC_ARENA_MAX === undefined ? AGENT_MALLOC_ARENAS : undefined;
}

/** Sets agentMallocArenas in glibc and remembers it for the agent's start log; the CLI's entry calls it first thing. */
export function applyAgentMallocArenas(args: readonly string[], env: NodeJS.ProcessEnv, load: () => MallocAddon = loadMallocAddon): number | undefined {
  const n = agentMallocArenas(args, env);
  if (n === undefined) return undefined;
  try {
    if (!load().mallocArenaMax(n)) return undefined;
  } catch {
    // NATIVE_UNAVAILABLE: the agent runs as before, with a few MiB more
    return undefined;
  }
  applied = n;
  return n;
}

/** What applyAgentMallocArenas set in this process, or undefined. */
export function appliedAgentMallocArenas(): number | undefined {
  return applied;
}
