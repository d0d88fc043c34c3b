import test from 'ava';
import { readFileSync } from 'node:fs';
import {
  AGENT_NODE_FLAGS,
  AGENT_NODE_FLAGS_ENV,
  AGENT_RESTARTED_ENV,
  agentNodeFlags,
  agentRestartFailure,
  restartArgv,
  restartWithAgentNodeFlags,
  shownNodeFlags,
} from '../../src/agent/node-flags.js';
import { RezolusError } from '../../src/errors.js';
import type { MallocAddon } from '../../src/native/index.js';
import { runFixtureAgent } from '../helpers/agent-run.js';

/** draws 7, 8, 9… so that the seeds are seen */
function counting(): (lo: number, hi: number) => number {
  let n = 6;
  return (lo, hi) => {
    n += 1;
    if (n < lo || n >= hi) throw new Error(`${n} outside [${lo}, ${hi})`);
    return n;
  };
}

test('rezolus agent restarts with predictable mode, a 1 MiB young generation and random seeds; another mode, already restarted, or already given: nothing', (t) => {
  t.deepEqual([...AGENT_NODE_FLAGS], ['--predictable', '--max-semi-space-size=1']);
  const agent = ['agent', '--config', 'a.toml'];
  const flags = ['--predictable', '--max-semi-space-size=1', '--random-seed=7', '--hash-seed=8'];
  t.deepEqual(agentNodeFlags(agent, {}, [], counting()), flags);
  t.deepEqual(agentNodeFlags(agent, {}, ['--trace-gc'], counting()), flags, 'node flags of its own are kept apart');
  for (const other of [['up'], ['exporter'], [], ['--help'], ['record', 'agent']]) t.deepEqual(agentNodeFlags(other, {}, [], counting()), [], other.join(' '));
  t.deepEqual(agentNodeFlags(agent, { [AGENT_RESTARTED_ENV]: '1' }, [], counting()), [], 'restarted once: never again');
  t.deepEqual(agentNodeFlags(agent, {}, ['--predictable', '--max_semi_space_size=1'], counting()), [], 'given on the command line (V8 reads _ as -)');
  t.deepEqual(agentNodeFlags(agent, {}, ['--predictable'], counting()), flags, 'one missing: all again');
  t.deepEqual(agentNodeFlags(agent, {}, ['--random-seed=5'], counting()), ['--predictable', '--max-semi-space-size=1', '--hash-seed=7'], 'a seed of its own');
  // the real draw: within V8's ranges, and not the same twice
  const a = agentNodeFlags(agent, {}, []);
  const b = agentNodeFlags(agent, {}, []);
  t.regex(a[2] ?? '', /^--random-seed=[1-9]\d*$/);
  t.regex(a[3] ?? '', /^--hash-seed=[1-9]\d*$/);
  t.notDeepEqual(a, b);
});

test('REZOLUS_AGENT_NODE_FLAGS replaces the choice; empty: no restart; seeds only beside --predictable', (t) => {
  const agent = ['agent'];
  t.deepEqual(agentNodeFlags(agent, { [AGENT_NODE_FLAGS_ENV]: '' }, [], counting()), []);
  t.deepEqual(agentNodeFlags(agent, { [AGENT_NODE_FLAGS_ENV]: ' --max-semi-space-size=2  ' }, [], counting()), ['--max-semi-space-size=2']);
  t.deepEqual(agentNodeFlags(agent, { [AGENT_NODE_FLAGS_ENV]: '--predictable --random-seed=3' }, [], counting()), ['--predictable', '--random-seed=3', '--hash-seed=7']);
  t.deepEqual(agentNodeFlags(agent, { [AGENT_NODE_FLAGS_ENV]: '--predictable' }, ['--predictable'], counting()), [], 'already there');
  t.deepEqual(agentNodeFlags(['up'], { [AGENT_NODE_FLAGS_ENV]: '--predictable' }, [], counting()), [], 'the agent only');
});

test('the restart runs node with the flags first, its own flags after (the later wins), then the script and its arguments as they were', (t) => {
  t.deepEqual(restartArgv(['--predictable'], '/usr/bin/node', ['--trace-gc'], ['/usr/bin/node', '/opt/rezolus/bin/rezolus.js', 'agent', '--config', 'a b.toml']), [
    '/usr/bin/node',
    '--predictable',
    '--trace-gc',
    '/opt/rezolus/bin/rezolus.js',
    'agent',
    '--config',
    'a b.toml',
  ]);
});

test('the restart goes through the malloc addon, marked so that it happens once; without the addon, or when exec fails, the agent says why and runs on', (t) => {
  const env: NodeJS.ProcessEnv = {};
  const calls: string[][] = [];
  const addon: MallocAddon = {
    mallocArenaMax: () => true,
    mallocTrim: () => true,
    reduceHeap: () => true,
    reexec: (argv) => {
      calls.push([...argv, `marked=${env[AGENT_RESTARTED_ENV]}`]);
      return 'No such file or directory';
    },
  };
  const proc = { execPath: '/usr/bin/node', execArgv: [], argv: ['/usr/bin/node', '/x/rezolus.js', 'agent'] };
  const reason = restartWithAgentNodeFlags(['agent'], env, () => addon, proc);
  t.is(calls.length, 1);
  t.deepEqual(calls[0]?.slice(0, 3), ['/usr/bin/node', '--predictable', '--max-semi-space-size=1']);
  t.deepEqual(calls[0]?.slice(-3), ['/x/rezolus.js', 'agent', 'marked=1'], 'the restarted process knows it was restarted');
  t.regex(reason ?? '', /^restarting node with --predictable --max-semi-space-size=1 --random-seed=\d+ --hash-seed=\d+: No such file or directory$/);
  t.is(env[AGENT_RESTARTED_ENV], undefined, 'a failed restart leaves no mark');
  t.is(agentRestartFailure(), reason, 'kept for the agent\'s log');
  t.is(restartWithAgentNodeFlags(['exporter'], env, () => addon, proc), undefined, 'nothing to do for another mode');
  t.is(agentRestartFailure(), undefined);
  t.is(calls.length, 1, 'and the addon not asked');
  const missing = (): never => {
    throw new RezolusError('NATIVE_UNAVAILABLE', 'native addon /x/rezolus_malloc.node is not built (npm run build:native)');
  };
  t.is(restartWithAgentNodeFlags(['agent'], {}, missing, proc), 'native addon /x/rezolus_malloc.node is not built (npm run build:native)');
  t.regex(restartWithAgentNodeFlags(['agent'], {}, () => addon, { ...proc, channel: {} as NodeJS.Process['channel'] }) ?? '', /IPC channel/);
  t.is(calls.length, 1, 'a forked agent keeps its channel');
});

test('the start log shows node flags with the seeds hidden', (t) => {
  t.deepEqual(shownNodeFlags(['--predictable', '--random-seed=12', '--hash_seed=99', '--trace-gc']), ['--predictable', '--random-seed=(hidden)', '--hash-seed=(hidden)', '--trace-gc']);
});

/** minor page faults of a process so far (/proc/<pid>/stat, field 10) */
function minorFaults(pid: number): number {
  const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
  return Number(stat.slice(stat.lastIndexOf(')') + 2).split(' ')[7]);
}

test('rezolus agent runs as the same process restarted with its node flags and seeds of its own, at 1 Hz and 10 Hz; told not to, it does not restart', async (t) => {
  const [one, two, fast] = await Promise.all([runFixtureAgent({}), runFixtureAgent({}), runFixtureAgent({}, '--interval', '100ms')]);
  for (const run of [one, two, fast]) {
    t.is(run.line.pid, run.pid, 'the pid spawned is the agent: the process replaced itself');
    t.deepEqual(run.line.node_flags, ['--predictable', '--max-semi-space-size=1', '--random-seed=(hidden)', '--hash-seed=(hidden)']);
    t.deepEqual(run.cmdline.slice(1, 3), ['--predictable', '--max-semi-space-size=1']);
    t.regex(run.cmdline[3] ?? '', /^--random-seed=\d+$/);
    t.is(run.cmdline[5]?.endsWith('rezolus.js'), true, run.cmdline.join(' '));
    t.is(run.cmdline[6], 'agent');
  }
  t.notDeepEqual(one.cmdline.slice(3, 5), two.cmdline.slice(3, 5), 'two agents, two pairs of seeds');
  const told = await runFixtureAgent({ nodeFlags: '' });
  t.deepEqual(told.line.node_flags, []);
  t.is(told.cmdline[1]?.endsWith('rezolus.js'), true);
});

test('with its node flags the 1 Hz agent stops faulting in its young generation after every scavenge', async (t) => {
  // V8 gives the from-space's pages back after each scavenge of a process that allocates < 1 MB/s and
  // faults them in again (~150 a second for the whole agent); predictable mode keeps them. Counted over
  // 8 ticks, after 4 of warm-up; the count does not depend on the machine's speed.
  const faults = async (nodeFlags: string | undefined): Promise<number> => {
    let n = 0;
    await runFixtureAgent({
      nodeFlags,
      config: '[kernel]\nenabled = false\n[http]\nenabled = false\n',
      probe: async (pid) => {
        await new Promise((r) => setTimeout(r, 4000));
        const before = minorFaults(pid);
        await new Promise((r) => setTimeout(r, 8000));
        n = minorFaults(pid) - before;
      },
    });
    return n;
  };
  const [withFlags, without] = await Promise.all([faults(undefined), faults('')]);
  t.log(`minor faults over 8 s: ${withFlags} with the node flags, ${without} without`);
  t.true(withFlags * 3 < without, `${withFlags} against ${without}`);
});
