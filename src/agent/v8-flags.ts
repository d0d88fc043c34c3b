/**
 * V8 flags the `agent` mode sets once its config is read, before the agent's
 * own modules load (src/cli/agent.ts).
 *
 * At one tick a second the agent's functions run too rarely for V8's
 * optimising compiler to pay: every tick finds caches cold, and TurboFan
 * spends CPU (and code space) on functions that run a few more times before
 * their code is thrown away. --no-opt keeps the interpreter and the baseline
 * compiler (Sparkplug). Measured with test/bench/agent-cpu.ts, the same agent
 * with and without the flag in one window (2-vCPU AMD EPYC VM, 1 Hz): the 9
 * procfs samplers 0.73x CPU per tick and 0.90x RSS; every sampler 0.94x CPU,
 * 0.98x RSS. At 10 Hz the code is hot enough for TurboFan to pay: every
 * sampler at 100 ms cost 1.84x CPU with it. So the flag goes on only when no
 * enabled sampler runs faster than NO_OPT_FROM_MS.
 * --lite-mode (no feedback, no baseline code) went further on the procfs
 * samplers (0.72-0.83x CPU, 0.85x RSS) but cost every sampler 1.33x CPU at
 * 1 Hz (the kernel samplers' loops over histogram buckets and CPUs run
 * interpreted) for 0.83x RSS: for a host short of memory, not the default.
 * Set through v8.setFlagsFromString, which holds for functions compiled
 * after it (one already run before it is still optimised: measured), so it
 * runs before the agent's modules are imported; node cannot restart itself
 * with flags in place (no exec), and NODE_OPTIONS refuses them.
 *
 * --semi-space-growth-factor=1 (at every interval) keeps the young generation
 * at the size it has when the flags are set: V8 otherwise grows it as
 * allocation goes on (to 8 MiB at 1 Hz, 32 MiB at 10 Hz) for a process
 * whose live heap is ~13 MiB. Same window, with against without: at 10 Hz
 * RSS 105.6 against 117.5 MiB for 1.01x CPU; at 1 Hz 2-9 MiB less RSS at
 * end for 0.97-1.14x CPU in three windows (noise of that size is usual).
 * Set at run time it holds (unlike --max-semi-space-size, read once when
 * the heap is made).
 *
 * REZOLUS_AGENT_V8_FLAGS replaces the choice (space-separated; empty: none).
 * `rezolus up` runs the agent inside the process of the exporter and the
 * viewer, which want the optimising compiler: it sets none.
 */
import { setFlagsFromString } from 'node:v8';

/** at every interval */
export const AGENT_HEAP_FLAGS: readonly string[] = ['--semi-space-growth-factor=1'];
/** when no sampler runs faster than NO_OPT_FROM_MS */
export const AGENT_V8_FLAGS: readonly string[] = ['--no-opt'];
/** --no-opt only when every enabled sampler runs at this interval or slower */
export const NO_OPT_FROM_MS = 1000;
export const AGENT_V8_FLAGS_ENV = 'REZOLUS_AGENT_V8_FLAGS';

let applied: readonly string[] = [];

/**
 * The flags for an agent whose fastest enabled sampler runs every
 * `fastestMs`: AGENT_HEAP_FLAGS always, AGENT_V8_FLAGS too from
 * NO_OPT_FROM_MS on; the env variable's list whenever it is set.
 */
export function agentV8Flags(env: NodeJS.ProcessEnv, fastestMs: number): string[] {
  const own = env[AGENT_V8_FLAGS_ENV];
  if (own !== undefined) return own.split(/\s+/).filter((f) => f !== '');
  return fastestMs >= NO_OPT_FROM_MS ? [...AGENT_V8_FLAGS, ...AGENT_HEAP_FLAGS] : [...AGENT_HEAP_FLAGS];
}

/** Sets them in V8 (for code compiled from now on) and remembers them for the agent's start log. */
export function applyAgentV8Flags(env: NodeJS.ProcessEnv, fastestMs: number): readonly string[] {
  const flags = agentV8Flags(env, fastestMs);
  for (const f of flags) setFlagsFromString(f);
  applied = flags;
  return flags;
}

/** What applyAgentV8Flags set in this process (none when it did not run: `up`, tests). */
export function appliedAgentV8Flags(): readonly string[] {
  return applied;
}
