/**
 * Node flags the agent restarts itself with: flags that only node's command
 * line takes.
 *
 * At one tick a second the agent allocates well under 1 MB/s, and V8 then
 * shrinks its young generation and gives the from-space's pages back to the
 * kernel after every scavenge; the next ticks fault them in again (~140
 * minor faults a second, with `mprotect`/`madvise` pairs, dear on a
 * virtualised host). V8's predictable mode skips that shrinking (its
 * allocation-rate rule depends on time); --max-semi-space-size=1 keeps the
 * young generation at 1 MiB, as small as the shrinking would have left it.
 * Measured with test/bench/agent-cpu.ts, every sampler at 1 Hz, the same CLI
 * with and without in one window, 2-vCPU AMD EPYC VM: 0.648x the CPU at the
 * same RSS (test/bench/README.md, "the 1 Hz agent under node flags").
 * Predictable mode also does V8's GC work on the main thread (no concurrent
 * marking or sweeping: the heap is ~13 MiB), and turns off V8's memory
 * reducer (heap-reduce.ts asks for its full GCs instead).
 *
 * Set at run time --predictable aborts V8 at its next full GC, and
 * --max-semi-space-size is read once when the heap is made; node has no
 * exec and NODE_OPTIONS refuses V8 flags. So once the config is read the
 * agent replaces its own process (execv through the malloc addon: same pid,
 * same arguments, these flags first) and starts again, ~0.2 s of CPU once.
 *
 * Predictable mode also fixes V8's random seed, and with it Math.random()
 * (the NATS client's reconnect jitter: every agent of a fleet would come
 * back at the same moments after an outage) and the hash seed of V8's
 * string tables (cgroup names, chosen by whoever runs a container, are keys
 * of the agent's maps): a random --random-seed and --hash-seed go with it
 * unless the list names its own.
 *
 * REZOLUS_AGENT_NODE_FLAGS replaces the choice (space-separated; empty: no
 * restart). A faster sampler than SLOW_TICK_FROM_MS: no restart (at 10 Hz the
 * agent allocates past the shrinking rule). Not for `rezolus up` (the agent
 * shares its process with the exporter and the viewer).
 */
import { randomInt } from 'node:crypto';
import { loadMallocAddon, type MallocAddon } from '../native/index.js';
import { SLOW_TICK_FROM_MS } from './v8-flags.js';

/** node's command-line flags of an agent whose samplers run at SLOW_TICK_FROM_MS or slower */
export const AGENT_NODE_FLAGS: readonly string[] = ['--predictable', '--max-semi-space-size=1'];
export const AGENT_NODE_FLAGS_ENV = 'REZOLUS_AGENT_NODE_FLAGS';
/** set in the restarted process: it never restarts again, whatever its command line says */
export const AGENT_RESTARTED_ENV = 'REZOLUS_AGENT_RESTARTED';

/** `--name=value` and `--name` alike: the flag's name, `_` read as `-` as V8 does */
function flagName(flag: string): string {
  const eq = flag.indexOf('=');
  return (eq < 0 ? flag : flag.slice(0, eq)).replaceAll('_', '-');
}

/**
 * The flags to restart with, given the fastest sampler's interval, the
 * environment and node's own flags (process.execArgv); empty when there is
 * nothing to do (already restarted, or every flag already given).
 * `random(lo, hi)` draws the seeds added beside --predictable.
 */
export function agentNodeFlags(
  env: NodeJS.ProcessEnv,
  fastestMs: number,
  execArgv: readonly string[],
  random: (lo: number, hi: number) => number = randomInt,
): string[] {
  if (env[AGENT_RESTARTED_ENV] !== undefined) return [];
  const own = env[AGENT_NODE_FLAGS_ENV];
  const wanted = own !== undefined ? own.split(/\s+/).filter((f) => f !== '') : fastestMs >= SLOW_TICK_FROM_MS ? [...AGENT_NODE_FLAGS] : [];
  const given = new Set(execArgv.map(flagName));
  if (wanted.every((f) => given.has(flagName(f)))) return [];
  const named = new Set([...given, ...wanted.map(flagName)]);
  if (named.has('--predictable')) {
    // V8's random_seed is an int (0: none), its hash_seed 64 bits; 2^48 is as far as randomInt reaches
    if (!named.has('--random-seed')) wanted.push(`--random-seed=${random(1, 2 ** 31 - 1)}`);
    if (!named.has('--hash-seed')) wanted.push(`--hash-seed=${random(1, 2 ** 48 - 1)}`);
  }
  return wanted;
}

/** The command line of the restart: node, the flags, node's own flags, then the script and its arguments as they were. */
export function restartArgv(flags: readonly string[], execPath: string, execArgv: readonly string[], argv: readonly string[]): string[] {
  return [execPath, ...flags, ...execArgv, ...argv.slice(1)];
}

/**
 * Restarts this process with agentNodeFlags (never returns then). Returns
 * undefined when there was nothing to do, or why it could not restart (the
 * addon is not built, execv failed): the agent then runs as it is.
 */
export function restartWithAgentNodeFlags(
  env: NodeJS.ProcessEnv,
  fastestMs: number,
  load: () => MallocAddon = loadMallocAddon,
  proc: Pick<NodeJS.Process, 'execPath' | 'execArgv' | 'argv'> = process,
): string | undefined {
  const flags = agentNodeFlags(env, fastestMs, proc.execArgv);
  if (flags.length === 0) return undefined;
  let addon: MallocAddon;
  try {
    addon = load();
  } catch (error) {
    return error instanceof Error ? error.message : String(error);
  }
  if (typeof addon.reexec !== 'function') return 'the malloc addon has no reexec (npm run build:native)';
  env[AGENT_RESTARTED_ENV] = '1';
  const failure = addon.reexec(restartArgv(flags, proc.execPath, proc.execArgv, proc.argv));
  delete env[AGENT_RESTARTED_ENV];
  return `restarting node with ${flags.join(' ')}: ${failure}`;
}

/** node's flags as the agent's start log shows them: the seeds' values left out (a hash seed known is a hash flood made easy). */
export function shownNodeFlags(execArgv: readonly string[]): string[] {
  return execArgv.map((f) => (flagName(f) === '--random-seed' || flagName(f) === '--hash-seed' ? `${flagName(f)}=(hidden)` : f));
}
