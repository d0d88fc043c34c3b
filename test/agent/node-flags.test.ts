import test, { type ExecutionContext } from 'ava';
import { execFile } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import {
  AGENT_NODE_FLAGS,
  AGENT_NODE_FLAGS_ENV,
  AGENT_RESTARTED_ENV,
  agentNodeFlags,
  agentRestartFailure,
  type RestartPlan,
  type RestartProcess,
  restartArgv,
  restartWithAgentNodeFlags,
  shownNodeFlags,
} from '../../src/agent/node-flags.js';
import { RezolusError } from '../../src/errors.js';
import type { MallocAddon } from '../../src/native/index.js';
import { runFixtureAgent } from '../helpers/agent-run.js';

/** draws lo, lo + 1… of each range asked, so that the seeds are seen */
function counting(): (lo: number, hi: number) => number {
  let n = 0;
  return (lo, hi) => {
    n += 1;
    if (lo + n >= hi) throw new Error(`${lo + n} outside [${lo}, ${hi})`);
    return lo + n;
  };
}

const PID = 4242;
const flagsOf = (plan: RestartPlan): readonly string[] => ('flags' in plan ? plan.flags : [`reason: ${plan.reason}`]);
const plan = (args: readonly string[], env: NodeJS.ProcessEnv, execArgv: readonly string[] = []): readonly string[] =>
  flagsOf(agentNodeFlags(args, env, execArgv, PID, counting()));

test('rezolus agent restarts with predictable mode, a 1 MiB young generation and random seeds of a fixed width; another mode, the restarted image, or flags already given: nothing', (t) => {
  t.deepEqual([...AGENT_NODE_FLAGS], ['--predictable', '--max-semi-space-size=1']);
  const agent = ['agent', '--config', 'a.toml'];
  const flags = ['--predictable', '--max-semi-space-size=1', '--random-seed=1000000001', '--hash-seed=100000000000002'];
  t.deepEqual(plan(agent, {}), flags);
  t.deepEqual(plan(agent, {}, ['--trace-gc']), flags, 'node flags of its own are kept apart');
  for (const other of [['up'], ['exporter'], [], ['--help'], ['record', 'agent']]) t.deepEqual(plan(other, {}), [], other.join(' '));
  t.deepEqual(plan(agent, { [AGENT_RESTARTED_ENV]: String(PID) }), [], 'the restarted image (same pid): never again');
  t.deepEqual(plan(agent, { [AGENT_RESTARTED_ENV]: '1' }), flags, "a parent's mark (another pid) is not this process's");
  t.deepEqual(plan(agent, {}, ['--predictable', '--max_semi_space_size=1', '--random-seed=5', '--hash-seed=6']), [], 'all given on the command line (V8 reads _ as -)');
  t.deepEqual(plan(agent, {}, ['--predictable', '--max-semi-space-size=1']), ['--random-seed=1000000001', '--hash-seed=100000000000002'], 'given by hand without seeds: the seeds');
  t.deepEqual(plan(agent, {}, ['--max-semi-space-size=4']), ['--predictable', '--random-seed=1000000001', '--hash-seed=100000000000002'], "the user's young generation stays");
  t.deepEqual(plan(agent, { NODE_OPTIONS: '--max-old-space-size=100  --max-semi-space-size=4' }), ['--predictable', '--random-seed=1000000001', '--hash-seed=100000000000002'], 'NODE_OPTIONS too');
  t.deepEqual(plan(agent, {}, ['--random-seed=5']), ['--predictable', '--max-semi-space-size=1', '--hash-seed=100000000000001'], 'a seed of its own');
  // the real draw: a fixed number of digits (the hidden command line shows the width only), and not the same twice
  const a = flagsOf(agentNodeFlags(agent, {}, [], PID));
  const b = flagsOf(agentNodeFlags(agent, {}, [], PID));
  t.regex(a[2] ?? '', /^--random-seed=[1-9]\d{9}$/);
  t.regex(a[3] ?? '', /^--hash-seed=[1-9]\d{14}$/);
  t.notDeepEqual(a, b);
});

test('REZOLUS_AGENT_NODE_FLAGS replaces the choice; empty: no restart; seeds only beside --predictable; what is not a flag is refused', (t) => {
  const agent = ['agent'];
  t.deepEqual(plan(agent, { [AGENT_NODE_FLAGS_ENV]: '' }), []);
  t.deepEqual(plan(agent, { [AGENT_NODE_FLAGS_ENV]: ' --max-semi-space-size=2  ' }), ['--max-semi-space-size=2']);
  t.deepEqual(plan(agent, { [AGENT_NODE_FLAGS_ENV]: '--predictable --random-seed=3' }), ['--predictable', '--random-seed=3', '--hash-seed=100000000000001']);
  t.deepEqual(plan(agent, { [AGENT_NODE_FLAGS_ENV]: '--predictable' }, ['--predictable', '--random-seed=1', '--hash-seed=2']), [], 'already there');
  t.deepEqual(plan(['up'], { [AGENT_NODE_FLAGS_ENV]: '--predictable' }), [], 'the agent only');
  t.deepEqual(plan(agent, { [AGENT_NODE_FLAGS_ENV]: '' }, ['--predictable']), [], 'empty: no restart, not even for the seeds of a hand-made --predictable');
  t.deepEqual(plan(agent, { [AGENT_NODE_FLAGS_ENV]: '--max-semi-space-size=2' }, ['--predictable']), ['--max-semi-space-size=2'], 'a list without --predictable: no seeds');
  t.deepEqual(plan(agent, { [AGENT_NODE_FLAGS_ENV]: '--predictable -random-seed=5' }), ['--predictable', '-random-seed=5', '--hash-seed=100000000000001'], 'V8 takes -name as --name: the seed is the user\'s');
  t.deepEqual(plan(agent, { [AGENT_NODE_FLAGS_ENV]: 'garbage' }), ['reason: REZOLUS_AGENT_NODE_FLAGS: "garbage" is not a flag (--name or --name=value)'], 'a bare word would be the script node runs');
  t.deepEqual(plan(agent, { [AGENT_NODE_FLAGS_ENV]: '--max-semi-space-size 1' }), ['reason: REZOLUS_AGENT_NODE_FLAGS: "1" is not a flag (--name or --name=value)']);
  t.true('custom' in agentNodeFlags(agent, { [AGENT_NODE_FLAGS_ENV]: '--x' }, [], PID) && (agentNodeFlags(agent, { [AGENT_NODE_FLAGS_ENV]: '--x' }, [], PID) as { custom: boolean }).custom);
});

test('the restart runs node under the name it was started as, the flags first, its own flags after (the later wins), then the script and its arguments as they were', (t) => {
  t.deepEqual(restartArgv(['--predictable'], { argv0: 'rznode', execArgv: ['--trace-gc'], argv: ['/usr/bin/node', '/opt/rezolus/bin/rezolus.js', 'agent', '--config', 'a b.toml'] }), [
    'rznode',
    '--predictable',
    '--trace-gc',
    '/opt/rezolus/bin/rezolus.js',
    'agent',
    '--config',
    'a b.toml',
  ]);
});

/** A malloc addon that records its calls; its exec fails as told. */
function fakeAddon(env: NodeJS.ProcessEnv, failure = 'No such file or directory') {
  const calls: string[][] = [];
  const hidden: string[][] = [];
  const addon: MallocAddon = {
    mallocArenaMax: () => true,
    mallocTrim: () => true,
    reduceHeap: () => true,
    reexec: (path, argv) => {
      calls.push([path, ...argv, `marked=${env[AGENT_RESTARTED_ENV]}`]);
      return failure;
    },
    hideArgs: (prefixes) => {
      hidden.push([...prefixes]);
      return 0;
    },
  };
  return { addon, calls, hidden };
}

const proc: RestartProcess = { pid: PID, execPath: process.execPath, argv0: 'node', execArgv: [], argv: ['/usr/bin/node', '/x/rezolus.js', 'agent'] };

test('the restart goes through the malloc addon, marked with the pid so that it happens once; without the addon, forked, through the loader, or when exec fails, the agent says why and runs on', (t) => {
  const env: NodeJS.ProcessEnv = {};
  const { addon, calls, hidden } = fakeAddon(env);
  const reason = restartWithAgentNodeFlags(['agent'], env, () => addon, proc);
  t.is(calls.length, 1);
  t.deepEqual(calls[0]?.slice(0, 4), [process.execPath, 'node', '--predictable', '--max-semi-space-size=1']);
  t.deepEqual(calls[0]?.slice(-3), ['/x/rezolus.js', 'agent', `marked=${PID}`], 'the restarted process knows it was restarted');
  t.is(reason, 'restarting node with --predictable --max-semi-space-size=1 --random-seed=(hidden) --hash-seed=(hidden): No such file or directory', 'the seeds are not told');
  t.is(env[AGENT_RESTARTED_ENV], undefined, 'a failed restart leaves no mark');
  t.is(agentRestartFailure(), reason, "kept for the agent's log");
  t.is(restartWithAgentNodeFlags(['exporter'], env, () => addon, proc), undefined, 'nothing to do for another mode');
  t.is(agentRestartFailure(), undefined);
  const missing = (): never => {
    throw new RezolusError('NATIVE_UNAVAILABLE', 'native addon /x/rezolus_malloc.node is not built (npm run build:native)');
  };
  t.is(restartWithAgentNodeFlags(['agent'], {}, missing, proc), 'native addon /x/rezolus_malloc.node is not built (npm run build:native)');
  const seedsHidden = hidden.length;
  t.regex(restartWithAgentNodeFlags(['agent'], {}, () => addon, { ...proc, channel: {} }) ?? '', /IPC channel/);
  t.regex(restartWithAgentNodeFlags(['agent'], {}, () => addon, { ...proc, execPath: '/lib64/ld-linux-x86-64.so.2' }) ?? '', /runs through \/lib64\/ld-linux-x86-64.so.2/);
  t.is(
    restartWithAgentNodeFlags(['agent'], {}, () => addon, { ...proc, execPath: '/bin/false' }),
    'node does not take --predictable --max-semi-space-size=1: exit 1',
    'a node that refuses the flags is asked first (else it would exit at once, again and again)',
  );
  t.is(calls.length, 1, 'none of those tried');
  t.is(hidden.length, seedsHidden + 3, 'an agent that does not restart hides seeds given by hand');
  // the restarted image: no restart, the mark gone, the seeds hidden
  const restarted: NodeJS.ProcessEnv = { [AGENT_RESTARTED_ENV]: String(PID) };
  t.is(restartWithAgentNodeFlags(['agent'], restarted, () => addon, proc), undefined);
  t.is(restarted[AGENT_RESTARTED_ENV], undefined, "the agent's children do not inherit the mark");
  t.deepEqual(hidden.at(-1), ['--random-seed=', '-random-seed=', '--hash-seed=', '-hash-seed=', '--random_seed=', '-random_seed=', '--hash_seed=', '-hash_seed=']);
  t.is(hidden.length, seedsHidden + 4);
  t.is(calls.length, 1);
  t.is(restartWithAgentNodeFlags(['exporter'], {}, () => addon, proc), undefined);
  t.is(hidden.length, seedsHidden + 4, 'another mode: nothing done');
});

test('a REZOLUS_AGENT_NODE_FLAGS list node refuses is a warning naming the variable, not a dead agent', (t) => {
  const env: NodeJS.ProcessEnv = { [AGENT_NODE_FLAGS_ENV]: '--bogus-flag-of-nobody' };
  const { addon, calls } = fakeAddon(env);
  const real = proc;
  t.regex(restartWithAgentNodeFlags(['agent'], env, () => addon, real) ?? '', /^REZOLUS_AGENT_NODE_FLAGS: node does not take --bogus-flag-of-nobody: .*bad option/);
  t.is(calls.length, 0);
  const seeded = fakeAddon({});
  t.regex(
    restartWithAgentNodeFlags(['agent'], { [AGENT_NODE_FLAGS_ENV]: '--predictable --bogus-flag-of-nobody' }, () => seeded.addon, real) ?? '',
    /^REZOLUS_AGENT_NODE_FLAGS: node does not take --predictable --bogus-flag-of-nobody: [^\d]*$/,
    'the seeds drawn are neither tried on another command line nor told',
  );
  const badSeed = fakeAddon({});
  t.regex(
    restartWithAgentNodeFlags(['agent'], { [AGENT_NODE_FLAGS_ENV]: '--predictable --random-seed=abc' }, () => badSeed.addon, real) ?? '',
    /^REZOLUS_AGENT_NODE_FLAGS: node does not take --predictable --random-seed=\(hidden\): .*random-seed/,
    "the user's own seeds are tried: a bad one would kill the restarted agent",
  );
  t.is(badSeed.calls.length, 0);
  const good: NodeJS.ProcessEnv = { [AGENT_NODE_FLAGS_ENV]: '--max-semi-space-size=2' };
  const ok = fakeAddon(good);
  restartWithAgentNodeFlags(['agent'], good, () => ok.addon, real);
  t.deepEqual(ok.calls[0]?.slice(2, 3), ['--max-semi-space-size=2'], 'a list node takes: restarted with it');
});

test('the start log shows node flags with the seeds hidden', (t) => {
  t.deepEqual(shownNodeFlags(['--predictable', '--random-seed=12', '--hash_seed=99', '-random-seed=3', '--trace-gc']), ['--predictable', '--random-seed=(hidden)', '--hash-seed=(hidden)', '--random-seed=(hidden)', '--trace-gc']);
});

/** A preload that says, in each image of the agent, which one it is and its first Math.random(). */
function randomPreload(t: ExecutionContext): string {
  const dir = mkdtempSync(join(tmpdir(), 'rezolus-node-flags-'));
  t.teardown(() => rmSync(dir, { recursive: true, force: true }));
  const file = join(dir, 'random.cjs');
  writeFileSync(file, `process.stdout.write('image=' + (process.env.${AGENT_RESTARTED_ENV} === String(process.pid) ? 'restarted' : 'first') + ' random=' + Math.random() + '\\n');\n`);
  return file;
}

/** Math.random() of V8 in predictable mode with its fixed seed (node v20) */
const FIXED_SEED_RANDOM = '0.14617804087311326';

test('rezolus agent runs as the same process restarted with its node flags, at 1 Hz and 10 Hz, its seeds random and hidden from its command line; told not to, it does not restart', async (t) => {
  const preload = randomPreload(t);
  const nodeArgs = ['--require', preload];
  const [one, two, fast] = await Promise.all([runFixtureAgent({ nodeArgs }), runFixtureAgent({ nodeArgs }), runFixtureAgent({ nodeArgs }, '--interval', '100ms')]);
  const randoms: string[] = [];
  for (const run of [one, two, fast]) {
    t.is(run.line.pid, run.pid, 'the pid spawned is the agent: the process replaced itself');
    t.deepEqual(run.line.node_flags, ['--predictable', '--max-semi-space-size=1', '--random-seed=(hidden)', '--hash-seed=(hidden)', '--require', preload]);
    t.deepEqual(run.cmdline.slice(1, 5), ['--predictable', '--max-semi-space-size=1', `--random-seed=${'x'.repeat(10)}`, `--hash-seed=${'x'.repeat(15)}`], 'the seeds hidden from other users');
    t.is(run.cmdline[7]?.endsWith('rezolus.js'), true, run.cmdline.join(' '));
    t.is(run.cmdline[8], 'agent');
    const images = run.stdout.split('\n').filter((l) => l.startsWith('image='));
    t.is(images.length, 2, run.stdout);
    t.regex(images[0] ?? '', /^image=first /);
    const random = /^image=restarted random=(\S+)$/.exec(images[1] ?? '')?.[1] ?? '';
    t.not(random, FIXED_SEED_RANDOM, 'predictable mode with a seed of its own');
    randoms.push(random);
  }
  t.is(new Set(randoms).size, 3, `three agents, three Math.random sequences: ${randoms.join(' ')}`);
  const told = await runFixtureAgent({ nodeFlags: '', nodeArgs });
  t.deepEqual(told.line.node_flags, ['--require', preload]);
  t.is(told.cmdline[3]?.endsWith('rezolus.js'), true);
  // the control: by hand, --predictable without seeds and told not to restart gives the fixed sequence (so the check above can fail)
  const byHand = await runFixtureAgent({ nodeFlags: '', nodeArgs: ['--predictable', ...nodeArgs] });
  t.regex(byHand.stdout, new RegExp(`image=first random=${FIXED_SEED_RANDOM.replace('.', '\\.')}`));
});

/**
 * Minor page faults over 10 s of a node allocating ~300 kB a second in
 * small objects every 100 ms (below V8's 1 MB/s rule, as the 1 Hz agent),
 * after 2 s of warm-up, under `flags`.
 */
function faultsAtLowAllocation(flags: readonly string[]): Promise<number> {
  const script = `
    const { readFileSync } = require('node:fs');
    const minflt = () => Number(readFileSync('/proc/self/stat', 'utf8').split(') ')[1].split(' ')[7]);
    let keep; let n = 0; let f0 = 0;
    const t = setInterval(() => {
      const a = []; for (let i = 0; i < 600; i++) a.push({ i, s: [i, i] }); keep = a[0];
      n += 1;
      if (n === 20) f0 = minflt();
      if (n === 120) { process.stdout.write(String(minflt() - f0)); clearInterval(t); }
    }, 100);`;
  return new Promise((resolve, reject) => {
    execFile(process.execPath, [...flags, '-e', script], { encoding: 'utf8', timeout: 60_000 }, (error, stdout) => (error ? reject(error) : resolve(Number(stdout))));
  });
}

test("under the agent's node flags V8 keeps its young generation's pages at a low allocation rate; without, it faults them in after every scavenge", async (t) => {
  // V8 gives the from-space's pages back after each scavenge of a process allocating < 1 MB/s and faults
  // them in again: ~150 faults a second in the 1 Hz agent, 1 with the flags (test/bench/README.md). The count
  // follows the allocation, not the machine's speed (a busy machine allocates less per second: the rule holds).
  const [withFlags, without] = await Promise.all([faultsAtLowAllocation(AGENT_NODE_FLAGS), faultsAtLowAllocation([])]);
  t.log(`minor faults over 10 s: ${withFlags} with the agent's node flags, ${without} without`);
  t.true(withFlags * 3 < without, `${withFlags} against ${without}`);
});
