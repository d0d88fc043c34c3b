/**
 * V8 flags of the `agent` mode.
 *
 * At one tick a second the agent runs without TurboFan (--no-opt), set by the
 * CLI's entry before any other module loads (applyEarlyAgentV8Flags, from
 * src/cli/rezolus.ts). At that pace most functions run a few times a
 * minute, and the few that TurboFan would optimise (procfs and cgroupfs
 * parsing loops, the frame encoder) are written to run well in V8's
 * interpreter and baseline code. One optimisation anywhere pages ~3 MiB of
 * the compiler's own code into the process, and its compiled code and zones
 * come on top: measured with test/bench/agent-cpu.ts, every sampler at 1 Hz,
 * both agents in one 120 s window, 2-vCPU AMD EPYC VM: RSS 65.3 against 72.1
 * MiB for 1.13x the CPU before the parsers were reworked (test/bench/README.md,
 * "agent cost, fourth pass"). Set at run time after the config was read,
 * --no-opt came too late: the start-up (module resolution, URL and path
 * handling, the TOML parser) had already been optimised, and the compiler's
 * pages were in. (Before this the agent raised --interrupt-budget to
 * 2000000 at 1 Hz: 0.87x the CPU of a late --no-opt, 5 MiB more RSS.)
 *
 * Once the config is read (src/cli/agent.ts, applyAgentV8Flags): a sampler
 * faster than SLOW_TICK_FROM_MS turns TurboFan back on (--opt): at 10 Hz the
 * code is hot and optimising it pays. At every interval
 * --semi-space-growth-factor=1 keeps the young generation at the size it has
 * when the flags are set: V8 otherwise grows it as allocation goes on (to 8
 * MiB at 1 Hz, 32 MiB at 10 Hz) for a process whose live heap is ~13 MiB.
 * Same window, with against without: at 10 Hz RSS 105.6 against 117.5 MiB
 * for 1.01x CPU. Set at run time it holds (unlike --max-semi-space-size,
 * read once when the heap is made).
 *
 * REZOLUS_AGENT_V8_FLAGS replaces the choice (space-separated; empty: none),
 * applied once the config is read; nothing is set early then.
 * `--interrupt-budget=2000000` is the choice before 2026-11-29, `--lite-mode`
 * (no feedback, no baseline code) the leanest. `rezolus up` runs the agent
 * inside the process of the exporter and the viewer, which want the
 * optimising compiler: it sets none. These flags hold when set at run time;
 * the ones that do not are given on node's command line by a restart of
 * the process at the CLI's entry (node-flags.ts).
 */
import { setFlagsFromString } from 'node:v8';

/** at every interval */
export const AGENT_HEAP_FLAGS: readonly string[] = ['--semi-space-growth-factor=1'];
/** set by the CLI's entry for `rezolus agent`, before the rest of the CLI loads */
export const EARLY_AGENT_V8_FLAGS: readonly string[] = ['--no-opt'];
/** once the config is read, when no sampler runs faster than SLOW_TICK_FROM_MS (the early flags stay) */
export const AGENT_V8_FLAGS: readonly string[] = ['--no-opt'];
/** once the config is read, when a sampler runs faster: TurboFan back on */
export const FAST_AGENT_V8_FLAGS: readonly string[] = ['--opt'];
/** AGENT_V8_FLAGS only when every enabled sampler runs at this interval or slower */
export const SLOW_TICK_FROM_MS = 1000;
export const AGENT_V8_FLAGS_ENV = 'REZOLUS_AGENT_V8_FLAGS';

let applied: readonly string[] = [];

/** The flags to set before the CLI loads, given its arguments: EARLY_AGENT_V8_FLAGS for `agent`, unless the variable is set. */
export function earlyAgentV8Flags(args: readonly string[], env: NodeJS.ProcessEnv): string[] {
  return args[0] === 'agent' && env[AGENT_V8_FLAGS_ENV] === undefined ? [...EARLY_AGENT_V8_FLAGS] : [];
}

/** Sets earlyAgentV8Flags in V8; the CLI's entry calls it first thing. */
export function applyEarlyAgentV8Flags(args: readonly string[], env: NodeJS.ProcessEnv): void {
  for (const f of earlyAgentV8Flags(args, env)) setFlagsFromString(f);
}

/**
 * The flags for an agent whose fastest enabled sampler runs every
 * `fastestMs`: AGENT_V8_FLAGS from SLOW_TICK_FROM_MS on, else
 * FAST_AGENT_V8_FLAGS, and AGENT_HEAP_FLAGS always; the env variable's list
 * whenever it is set.
 */
export function agentV8Flags(env: NodeJS.ProcessEnv, fastestMs: number): string[] {
  const own = env[AGENT_V8_FLAGS_ENV];
  if (own !== undefined) return own.split(/\s+/).filter((f) => f !== '');
  return [...(fastestMs >= SLOW_TICK_FROM_MS ? AGENT_V8_FLAGS : FAST_AGENT_V8_FLAGS), ...AGENT_HEAP_FLAGS];
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
