/**
 * V8 flags the `agent` mode sets once its config is read, before the agent's
 * own modules load (src/cli/agent.ts).
 *
 * At one tick a second most of the agent's functions run a few times a
 * minute. V8 optimises a function with TurboFan once the bytecode it has run
 * uses up --interrupt-budget a few times over: with V8's budget (67584) a
 * small function run once a tick is compiled after ~3,000 calls, on the
 * tick's own thread, for code that then runs once a second with cold caches;
 * with 2000000 after ~70,000 calls (test/agent/v8-flags.test.ts). A loop that
 * really is hot (a parser over a long file, a walk over histogram buckets)
 * is still optimised on the stack within a few calls.
 * Before this the agent ran with --no-opt (no TurboFan at all: 0.94x the CPU
 * of no flag, every sampler, 1 Hz). Measured with test/bench/agent-cpu.ts,
 * every sampler at 1 Hz, both agents in one window, 2-vCPU Intel Xeon VM:
 * the budget against --no-opt 0.87x CPU over 20 minutes (user time 0.78x,
 * system time 1.44x, not looked into), 0.89x and 0.96x in two
 * 120 s windows, for 5 MiB more RSS after 20 minutes (81 against 76 MiB;
 * 0-1 MiB in the short windows). The procfs samplers alone: 0.98x. A budget
 * of 1000000 gave 0.91x CPU in four short windows but 3.5 MiB more RSS
 * there; 4000000 0.94x. REZOLUS_AGENT_V8_FLAGS="--no-opt
 * --semi-space-growth-factor=1" is the leaner choice. At 10 Hz the code
 * is hot and V8's own budget pays (1000000 at 10 Hz: 1.09x CPU, 0.88x RSS),
 * so the budget goes on only when no enabled sampler runs faster than
 * SLOW_TICK_FROM_MS.
 * --no-opt, and --lite-mode (no feedback, no baseline code: 0.83x RSS, but
 * every sampler 1.33x CPU, the kernel samplers' loops running interpreted),
 * remain choices through the variable below.
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
/** when no sampler runs faster than SLOW_TICK_FROM_MS */
export const AGENT_V8_FLAGS: readonly string[] = ['--interrupt-budget=2000000'];
/** AGENT_V8_FLAGS only when every enabled sampler runs at this interval or slower */
export const SLOW_TICK_FROM_MS = 1000;
export const AGENT_V8_FLAGS_ENV = 'REZOLUS_AGENT_V8_FLAGS';

let applied: readonly string[] = [];

/**
 * The flags for an agent whose fastest enabled sampler runs every
 * `fastestMs`: AGENT_HEAP_FLAGS always, AGENT_V8_FLAGS too from
 * SLOW_TICK_FROM_MS on; the env variable's list whenever it is set.
 */
export function agentV8Flags(env: NodeJS.ProcessEnv, fastestMs: number): string[] {
  const own = env[AGENT_V8_FLAGS_ENV];
  if (own !== undefined) return own.split(/\s+/).filter((f) => f !== '');
  return fastestMs >= SLOW_TICK_FROM_MS ? [...AGENT_V8_FLAGS, ...AGENT_HEAP_FLAGS] : [...AGENT_HEAP_FLAGS];
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
