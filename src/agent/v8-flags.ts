/**
 * V8 flags the `agent` mode sets before its code is loaded (src/cli/rezolus.ts).
 *
 * At one tick a second the agent's functions run too rarely for V8's
 * compilers to pay: every tick finds caches cold, and the optimising tiers
 * spend CPU compiling code that runs once more before it is thrown away.
 * --lite-mode keeps it in the interpreter, allocates no feedback vectors and
 * favours size. Measured with test/bench/agent-cpu.ts, the same agent with
 * and without it in one window (2-vCPU AMD EPYC VM, procfs samplers at 1 Hz):
 * CPU per tick 0.72-0.83x, RSS 0.85-0.90x, peak RSS 0.79-0.80x; the figures
 * of every sampler at 1 Hz and at 10 Hz are in test/bench/README.md ("agent
 * cost (issue 19)"). Set through v8.setFlagsFromString, which works for code
 * compiled after it: node has no way to restart itself with flags in place
 * (no exec), and NODE_OPTIONS does not take this flag.
 *
 * REZOLUS_AGENT_V8_FLAGS replaces the list (space-separated; empty: none).
 * `rezolus up` runs the agent inside the process of the exporter and the
 * viewer, which want the optimising compilers: it sets none.
 */
import { setFlagsFromString } from 'node:v8';

export const AGENT_V8_FLAGS: readonly string[] = ['--lite-mode'];
export const AGENT_V8_FLAGS_ENV = 'REZOLUS_AGENT_V8_FLAGS';

let applied: readonly string[] = [];

/** The flags for this environment: AGENT_V8_FLAGS, or the env variable's list. */
export function agentV8Flags(env: NodeJS.ProcessEnv): string[] {
  const own = env[AGENT_V8_FLAGS_ENV];
  return own === undefined ? [...AGENT_V8_FLAGS] : own.split(/\s+/).filter((f) => f !== '');
}

/** Sets them in V8 (for code compiled from now on) and remembers them for the agent's start log. */
export function applyAgentV8Flags(env: NodeJS.ProcessEnv): readonly string[] {
  const flags = agentV8Flags(env);
  for (const f of flags) setFlagsFromString(f);
  applied = flags;
  return flags;
}

/** What applyAgentV8Flags set in this process (none when it did not run: `up`, tests). */
export function appliedAgentV8Flags(): readonly string[] {
  return applied;
}
