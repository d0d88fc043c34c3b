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
 * exec and NODE_OPTIONS refuses --predictable. So the CLI's entry, before it
 * loads anything else, replaces its own process (execv through the malloc
 * addon: same pid, same arguments, these flags first), ~0.1 s of CPU once.
 * Only stdin, stdout and stderr are carried over (node marks every
 * descriptor close-on-exec; the restart takes the mark off those three);
 * an agent forked with an IPC channel does not restart. Node's start-up
 * runs twice: a `--require`/`--import` preload runs in both images, and an
 * `--inspect` session of the first is dropped.
 *
 * Predictable mode also fixes V8's random seed, and with it Math.random()
 * (the NATS client's reconnect jitter: every agent of a fleet would come
 * back at the same moments after an outage) and, where V8 draws it from
 * there, the hash seed of its string tables (cgroup names, chosen by
 * whoever runs a container, are keys of the agent's maps): a random
 * --random-seed and --hash-seed go with it unless the list names its own
 * (also when node was started with --predictable by hand). Every user can
 * read a process's command line: once restarted, the agent overwrites the
 * seeds' digits in the memory /proc/<pid>/cmdline shows. They are there
 * for node's own start-up (0.1-0.3 s), and whatever records the arguments
 * of every exec (auditd's EXECVE records, execsnoop) keeps them: the seeds
 * make an attack harder, not impossible, for whoever can read those.
 * Flags given in NODE_OPTIONS or on node's command line are the user's:
 * the restart does not add them again.
 *
 * REZOLUS_AGENT_NODE_FLAGS replaces the choice (space-separated; empty: no
 * restart). Node is asked first whether it takes the flags (`node FLAGS
 * --version`): flags it refuses (a typo in the list, a node that dropped
 * one) are a warning, not a dead agent. Only `rezolus agent`: `rezolus up`
 * runs the agent inside the process of the exporter and the viewer.
 */
import { spawnSync } from 'node:child_process';
import { randomInt } from 'node:crypto';
import { basename } from 'node:path';
import { loadMallocAddon, type MallocAddon } from '../native/index.js';

/** node's command-line flags of `rezolus agent` */
export const AGENT_NODE_FLAGS: readonly string[] = ['--predictable', '--max-semi-space-size=1'];
export const AGENT_NODE_FLAGS_ENV = 'REZOLUS_AGENT_NODE_FLAGS';
/** set to the pid for the restarted image (the same pid): it never restarts again; a parent's value is ignored */
export const AGENT_RESTARTED_ENV = 'REZOLUS_AGENT_RESTARTED';
/** the arguments whose values the restarted agent hides from /proc/<pid>/cmdline */
export const HIDDEN_ARG_PREFIXES: readonly string[] = ['random-seed=', 'hash-seed=', 'random_seed=', 'hash_seed='].flatMap((p) => [`--${p}`, `-${p}`]);
/** V8's random_seed is an int (0: none), its hash_seed 64 bits (randomInt reaches 2^48); a fixed number of digits each */
const RANDOM_SEED_RANGE: readonly [number, number] = [1_000_000_000, 2 ** 31 - 1];
const HASH_SEED_RANGE: readonly [number, number] = [100_000_000_000_000, 2 ** 48 - 1];
/** a node or V8 flag: `--name` or `--name=value` (one `-` for node's short ones) */
const FLAG = /^--?[A-Za-z0-9][\w-]*(=\S*)?$/;

/** `--name=value`, `--name` and `-name` alike: the flag's name as `--name`, `_` read as `-`, as V8 does */
function flagName(flag: string): string {
  const eq = flag.indexOf('=');
  return `--${(eq < 0 ? flag : flag.slice(0, eq)).replace(/^-+/, '').replaceAll('_', '-')}`;
}

/** The process as the restart sees it. */
export interface RestartProcess {
  readonly pid: number;
  readonly execPath: string;
  readonly execArgv: readonly string[];
  readonly argv: readonly string[];
  readonly argv0: string;
  readonly channel?: unknown;
}

/**
 * What to restart with: the flags (empty: nothing to do), those of them
 * that are seeds drawn here, whether the list is the user's; or why the
 * agent will not restart.
 */
export type RestartPlan = { readonly flags: readonly string[]; readonly drawn: readonly string[]; readonly custom: boolean } | { readonly reason: string };

/**
 * The flags to restart the CLI run with `args` with, given the environment
 * and node's own flags (process.execArgv); empty when there is nothing to
 * do (not the agent, this is the restarted image, or every flag already
 * given, in NODE_OPTIONS or on node's command line). `random(lo, hi)`
 * draws the seeds added beside --predictable.
 */
export function agentNodeFlags(
  args: readonly string[],
  env: NodeJS.ProcessEnv,
  execArgv: readonly string[],
  pid: number,
  random: (lo: number, hi: number) => number = randomInt,
): RestartPlan {
  const own = env[AGENT_NODE_FLAGS_ENV];
  const none = { flags: [], drawn: [], custom: own !== undefined };
  if (args[0] !== 'agent' || env[AGENT_RESTARTED_ENV] === String(pid)) return none;
  const wanted = own !== undefined ? own.split(/\s+/).filter((f) => f !== '') : [...AGENT_NODE_FLAGS];
  // told not to restart: not even for seeds
  if (wanted.length === 0) return none;
  const bad = wanted.find((f) => !FLAG.test(f));
  if (bad !== undefined) return { reason: `${AGENT_NODE_FLAGS_ENV}: ${JSON.stringify(bad)} is not a flag (--name or --name=value)` };
  const given = new Set([...execArgv, ...(env.NODE_OPTIONS ?? '').split(/\s+/)].filter((f) => f.startsWith('-')).map(flagName));
  const flags = wanted.filter((f) => !given.has(flagName(f)));
  const named = new Set([...given, ...flags.map(flagName)]);
  // a user's own list gets seeds when it names --predictable; the default, also beside a hand-made one
  const predictable = own !== undefined ? wanted.some((f) => flagName(f) === '--predictable') : named.has('--predictable');
  const drawn: string[] = [];
  if (predictable && !named.has('--random-seed')) drawn.push(`--random-seed=${random(...RANDOM_SEED_RANGE)}`);
  if (predictable && !named.has('--hash-seed')) drawn.push(`--hash-seed=${random(...HASH_SEED_RANGE)}`);
  return { flags: [...flags, ...drawn], drawn, custom: own !== undefined };
}

/** The command line of the restart: the name it was started as, the flags, node's own flags, then the script and its arguments as they were. */
export function restartArgv(flags: readonly string[], proc: Pick<RestartProcess, 'argv0' | 'execArgv' | 'argv'>): string[] {
  return [proc.argv0, ...flags, ...proc.execArgv, ...proc.argv.slice(1)];
}

/**
 * Whether node takes the flags (`node FLAGS --version`, ~3 ms: node checks
 * its flags and V8's before it answers; the seeds drawn here left out, not
 * to be on another command line, and valid by construction): undefined, or
 * node's complaint.
 */
function nodeTakes(execPath: string, flags: readonly string[], drawn: readonly string[], env: NodeJS.ProcessEnv): string | undefined {
  const tried = flags.filter((f) => !drawn.includes(f));
  if (tried.length === 0) return undefined;
  const r = spawnSync(execPath, [...tried, '--version'], { encoding: 'utf8', timeout: 30_000, env: { ...env, NODE_OPTIONS: '' } });
  if (r.status === 0) return undefined;
  const said = `${r.stderr ?? ''}`.split('\n').find((l) => l.trim() !== '') ?? r.error?.message ?? `exit ${r.status ?? r.signal}`;
  return `node does not take ${tried.map(shownNodeFlag).join(' ')}: ${said.trim()}`;
}

let notRestarted: string | undefined;

/**
 * Restarts this process with agentNodeFlags (never returns then); the CLI's
 * entry calls it first thing. In the restarted image it hides the seeds
 * from the command line instead. Returns undefined when there was nothing
 * to do, or why it could not restart (the addon is not built, a list node
 * refuses, execv failed), also kept for the agent's log
 * (agentRestartFailure): the agent then runs as it is.
 */
export function restartWithAgentNodeFlags(
  args: readonly string[],
  env: NodeJS.ProcessEnv,
  load: () => MallocAddon = loadMallocAddon,
  proc: RestartProcess = process,
): string | undefined {
  notRestarted = undefined;
  if (args[0] !== 'agent') return undefined;
  notRestarted = restartOnce(args, env, load, proc);
  // the restarted image, or one that will not restart: seeds on its command line leave it
  hideSeeds(load);
  return notRestarted;
}

/** restartWithAgentNodeFlags for `rezolus agent` */
function restartOnce(args: readonly string[], env: NodeJS.ProcessEnv, load: () => MallocAddon, proc: RestartProcess): string | undefined {
  if (env[AGENT_RESTARTED_ENV] === String(proc.pid)) {
    // the restarted image: the mark goes (the agent's children do not inherit it)
    delete env[AGENT_RESTARTED_ENV];
    return undefined;
  }
  const plan = agentNodeFlags(args, env, proc.execArgv, proc.pid);
  if ('reason' in plan) return plan.reason;
  if (plan.flags.length === 0) return undefined;
  // a parent's IPC channel is a descriptor node marks close-on-exec: the restarted agent would lose it
  if (proc.channel !== undefined) return 'started with an IPC channel (forked), which a restart would close';
  // started through the dynamic loader (ld-linux…so node …): execPath is the loader, which takes no node flags
  if (/^ld[-.]/.test(basename(proc.execPath))) return `node runs through ${proc.execPath}, which a restart cannot pass node flags to`;
  let addon: MallocAddon;
  try {
    addon = load();
  } catch (error) {
    return error instanceof Error ? error.message : String(error);
  }
  if (typeof addon.reexec !== 'function') return 'the malloc addon has no reexec (npm run build:native)';
  // a node that does not know a flag would exit at once, and a service manager start it again and again
  const refused = nodeTakes(proc.execPath, plan.flags, plan.drawn, env);
  if (refused !== undefined) return plan.custom ? `${AGENT_NODE_FLAGS_ENV}: ${refused}` : refused;
  env[AGENT_RESTARTED_ENV] = String(proc.pid);
  const failure = addon.reexec(proc.execPath, restartArgv(plan.flags, proc));
  delete env[AGENT_RESTARTED_ENV];
  return `restarting node with ${plan.flags.map(shownNodeFlag).join(' ')}: ${failure}`;
}

/** Overwrites the seeds' values on this process's command line (/proc/<pid>/cmdline); best effort. */
function hideSeeds(load: () => MallocAddon): void {
  try {
    const addon = load();
    if (typeof addon.hideArgs === 'function') addon.hideArgs(HIDDEN_ARG_PREFIXES);
  } catch {
    // NATIVE_UNAVAILABLE: no restart happened either
  }
}

/** Why restartWithAgentNodeFlags could not restart this process, or undefined. */
export function agentRestartFailure(): string | undefined {
  return notRestarted;
}

function isSeed(f: string): boolean {
  const name = flagName(f);
  return name === '--random-seed' || name === '--hash-seed';
}

function shownNodeFlag(f: string): string {
  return isSeed(f) ? `${flagName(f)}=(hidden)` : f;
}

/** node's flags as the agent's start log shows them: the seeds' values left out (a hash seed known is a hash flood made easy). */
export function shownNodeFlags(execArgv: readonly string[]): string[] {
  return execArgv.map(shownNodeFlag);
}
