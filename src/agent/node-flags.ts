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
 * Predictable mode also does V8's GC work on the main thread (no concurrent
 * marking or sweeping: the heap is ~13 MiB) and turns off V8's memory
 * reducer. Measured with test/bench/agent-cpu.ts, every sampler, the same
 * CLI with and without in one window (test/bench/README.md, "the agent
 * under node's own flags"): at 1 Hz 0.65x the CPU at the same RSS on a PVM
 * AMD EPYC VM, 0.885x over 25 minutes on an Intel Xeon VM; at 10 Hz
 * 0.93-0.98x the CPU and 3-5 MiB less RSS.
 *
 * Set at run time --predictable aborts V8 at its next full GC, and
 * --max-semi-space-size is read once when the heap is made; node has no
 * exec and NODE_OPTIONS refuses V8 flags. So the CLI's entry, before it
 * loads anything else, replaces its own process (execv through the malloc
 * addon: same pid, same arguments, these flags first), ~0.1 s of CPU once.
 * Only stdin, stdout and stderr are carried over (node marks every
 * descriptor close-on-exec; the restart takes the mark off those three);
 * an agent forked with an IPC channel does not restart.
 *
 * Predictable mode also fixes V8's random seed, and with it Math.random()
 * (the NATS client's reconnect jitter: every agent of a fleet would come
 * back at the same moments after an outage) and, where V8 draws it from
 * there, the hash seed of its string tables (cgroup names, chosen by
 * whoever runs a container, are keys of the agent's maps): a random
 * --random-seed and --hash-seed go with it unless the list names its own.
 *
 * REZOLUS_AGENT_NODE_FLAGS replaces the choice (space-separated; empty: no
 * restart). Only `rezolus agent`: `rezolus up` runs the agent inside the
 * process of the exporter and the viewer.
 */
import { randomInt } from 'node:crypto';
import { loadMallocAddon, type MallocAddon } from '../native/index.js';

/** node's command-line flags of `rezolus agent` */
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
 * The flags to restart the CLI run with `args` with, given the environment
 * and node's own flags (process.execArgv); empty when there is nothing to do
 * (not the agent, already restarted, or every flag already given).
 * `random(lo, hi)` draws the seeds added beside --predictable.
 */
export function agentNodeFlags(
  args: readonly string[],
  env: NodeJS.ProcessEnv,
  execArgv: readonly string[],
  random: (lo: number, hi: number) => number = randomInt,
): string[] {
  if (args[0] !== 'agent' || env[AGENT_RESTARTED_ENV] !== undefined) return [];
  const own = env[AGENT_NODE_FLAGS_ENV];
  const wanted = own !== undefined ? own.split(/\s+/).filter((f) => f !== '') : [...AGENT_NODE_FLAGS];
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

let notRestarted: string | undefined;

/**
 * Restarts this process with agentNodeFlags (never returns then); the CLI's
 * entry calls it first thing. Returns undefined when there was nothing to
 * do, or why it could not restart (the addon is not built, execv failed),
 * also kept for the agent's log (agentRestartFailure): the agent then runs
 * as it is.
 */
export function restartWithAgentNodeFlags(
  args: readonly string[],
  env: NodeJS.ProcessEnv,
  load: () => MallocAddon = loadMallocAddon,
  proc: Pick<NodeJS.Process, 'execPath' | 'execArgv' | 'argv' | 'channel'> = process,
): string | undefined {
  notRestarted = restartOnce(args, env, load, proc);
  return notRestarted;
}

function restartOnce(
  args: readonly string[],
  env: NodeJS.ProcessEnv,
  load: () => MallocAddon,
  proc: Pick<NodeJS.Process, 'execPath' | 'execArgv' | 'argv' | 'channel'>,
): string | undefined {
  const flags = agentNodeFlags(args, env, proc.execArgv);
  if (flags.length === 0) return undefined;
  // a parent's IPC channel is a descriptor node marks close-on-exec: the restarted agent would lose it
  if (proc.channel !== undefined) return 'started with an IPC channel (forked), which a restart would close';
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

/** Why restartWithAgentNodeFlags could not restart this process, or undefined. */
export function agentRestartFailure(): string | undefined {
  return notRestarted;
}

/** node's flags as the agent's start log shows them: the seeds' values left out (a hash seed known is a hash flood made easy). */
export function shownNodeFlags(execArgv: readonly string[]): string[] {
  return execArgv.map((f) => (flagName(f) === '--random-seed' || flagName(f) === '--hash-seed' ? `${flagName(f)}=(hidden)` : f));
}
