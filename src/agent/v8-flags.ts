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
 * REZOLUS_AGENT_V8_FLAGS replaces the choice (space-separated; empty: none).
 * `rezolus up` runs the agent inside the process of the exporter and the
 * viewer, which want the optimising compiler: it sets none.
 */
import { setFlagsFromString } from 'node:v8';

export const AGENT_V8_FLAGS: readonly string[] = ['--no-opt'];
/** --no-opt only when every enabled sampler runs at this interval or slower */
export const NO_OPT_FROM_MS = 1000;
export const AGENT_V8_FLAGS_ENV = 'REZOLUS_AGENT_V8_FLAGS';

let applied: readonly string[] = [];

/**
 * The flags for an agent whose fastest enabled sampler runs every
 * `fastestMs`: AGENT_V8_FLAGS from NO_OPT_FROM_MS on, none below; the env
 * variable's list whenever it is set.
 */
export function agentV8Flags(env: NodeJS.ProcessEnv, fastestMs: number): string[] {
  const own = env[AGENT_V8_FLAGS_ENV];
  if (own !== undefined) return own.split(/\s+/).filter((f) => f !== '');
  return fastestMs >= NO_OPT_FROM_MS ? [...AGENT_V8_FLAGS] : [];
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
