import test from 'ava';
import { spawnSync } from 'node:child_process';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { AGENT_HEAP_FLAGS, AGENT_V8_FLAGS, AGENT_V8_FLAGS_ENV, agentV8Flags, EARLY_AGENT_V8_FLAGS, earlyAgentV8Flags, FAST_AGENT_V8_FLAGS, SLOW_TICK_FROM_MS } from '../../src/agent/v8-flags.js';
import { type AgentRunOptions, agentEnv, runFixtureAgent } from '../helpers/agent-run.js';
import { ROOT, rezolusArgv } from '../helpers/rezolus-cli.js';

test('the agent runs without TurboFan when no sampler runs faster than 1 s (set before the CLI loads), turns it back on when one does, caps the young generation always; REZOLUS_AGENT_V8_FLAGS overrides all', (t) => {
  t.deepEqual([...EARLY_AGENT_V8_FLAGS], ['--no-opt']);
  t.deepEqual([...AGENT_V8_FLAGS], ['--no-opt']);
  t.deepEqual([...FAST_AGENT_V8_FLAGS], ['--opt']);
  t.deepEqual([...AGENT_HEAP_FLAGS], ['--semi-space-growth-factor=1']);
  t.is(SLOW_TICK_FROM_MS, 1000);
  const slow = ['--no-opt', '--semi-space-growth-factor=1'];
  t.deepEqual(agentV8Flags({}, 1000), slow);
  t.deepEqual(agentV8Flags({}, 10_000), slow);
  t.deepEqual(agentV8Flags({}, Number.POSITIVE_INFINITY), slow, 'no sampler enabled');
  t.deepEqual(agentV8Flags({}, 999), ['--opt', '--semi-space-growth-factor=1'], 'a sampler faster than 1 s: the optimising compiler pays');
  t.deepEqual(agentV8Flags({ [AGENT_V8_FLAGS_ENV]: '' }, 1000), [], 'empty: none');
  t.deepEqual(agentV8Flags({ [AGENT_V8_FLAGS_ENV]: ' --max-lazy   --single-threaded ' }, 100), ['--max-lazy', '--single-threaded']);
  // before the CLI loads: only for the agent, and not when the variable chooses
  t.deepEqual(earlyAgentV8Flags(['agent', '--host', 'x'], {}), ['--no-opt']);
  t.deepEqual(earlyAgentV8Flags(['exporter'], {}), []);
  t.deepEqual(earlyAgentV8Flags(['up'], {}), [], 'up runs the agent beside the exporter and the viewer, which want TurboFan');
  t.deepEqual(earlyAgentV8Flags([], {}), []);
  t.deepEqual(earlyAgentV8Flags(['agent'], { [AGENT_V8_FLAGS_ENV]: '' }), []);
});

/**
 * What `body` (module lines) writes to stdout in a fresh node, run after the
 * compiled applyAgentV8Flags(process.env, 1000), REZOLUS_AGENT_V8_FLAGS as given.
 */
function afterAgentFlags(flags: string | undefined, imports: string[], body: string[]): string {
  rezolusArgv(); // builds dist/ when stale
  const module = pathToFileURL(join(ROOT, 'dist', 'agent', 'v8-flags.js')).href;
  const script = [`import { applyAgentV8Flags } from ${JSON.stringify(module)};`, ...imports, 'applyAgentV8Flags(process.env, 1000);', ...body].join('\n');
  const r = spawnSync(process.execPath, ['--input-type=module', '-e', script], { encoding: 'utf8', env: agentEnv({ v8Flags: flags }) });
  if (r.status !== 0) throw new Error(`node exited ${r.status}: ${r.stderr}`);
  return r.stdout;
}

/**
 * Whether TurboFan has optimised (bit 1 << 6 of %GetOptimizationStatus) two
 * functions compiled after the flags: a small one without a loop run 12,000
 * times (code a sampler runs once a tick, after 3 hours at 1 Hz; V8's own
 * budget optimises it after ~3,000 calls, the agent's after ~70,000), and one
 * run 20 times over a million iterations (a really hot loop, optimised on the
 * stack either way). Compiled on the main thread, so that the answer does not
 * wait on a background job.
 */
function optimised(flags: string | undefined): { tick: boolean; loop: boolean } {
  const TURBOFANNED = 1 << 6;
  const out = afterAgentFlags(flags, [`import { setFlagsFromString } from 'node:v8';`], [
    `setFlagsFromString('--allow-natives-syntax');`,
    `setFlagsFromString('--no-concurrent-recompilation');`,
    `const status = new Function('f', 'return %GetOptimizationStatus(f)');`,
    `const tick = new Function('o', 'return o.a + o.b * 2 + (o.c ? 1 : 0);');`,
    `const loop = new Function('n', 'let s = 0; for (let i = 0; i < n; i++) s += i * 2; return s;');`,
    'for (let i = 0; i < 12000; i++) tick({ a: i, b: 2, c: i & 1 });',
    'for (let i = 0; i < 20; i++) loop(1e6);',
    'process.stdout.write(JSON.stringify([status(tick), status(loop)]));',
  ]);
  const [tick, loop] = JSON.parse(out) as [number, number];
  return { tick: (tick & TURBOFANNED) !== 0, loop: (loop & TURBOFANNED) !== 0 };
}

test('under the agent flags at 1 s TurboFan optimises nothing, not even a hot loop; with no flags it optimises both', (t) => {
  t.deepEqual(optimised(undefined), { tick: false, loop: false }, 'the agent at 1 s');
  t.deepEqual(optimised(''), { tick: true, loop: true }, 'no flags');
  t.deepEqual(optimised('--interrupt-budget=2000000'), { tick: false, loop: true }, 'the choice before 2026-11-29: hot loops only');
  t.deepEqual(optimised('--no-opt'), { tick: false, loop: false }, '--no-opt');
  t.deepEqual(optimised('--lite-mode'), { tick: false, loop: false }, '--lite-mode');
});

/** Young-generation size (KiB) after the flags and ~50 MB of short-lived allocation. */
function newSpaceAfterChurn(flags: string | undefined): number {
  return Number(
    afterAgentFlags(flags, [`import { getHeapSpaceStatistics } from 'node:v8';`], [
      'const keep = [];',
      'for (let r = 0; r < 100; r++) { const a = []; for (let i = 0; i < 20000; i++) a.push({ i, s: "x" + i }); keep.push(a[r]); }',
      `const young = getHeapSpaceStatistics().find((s) => s.space_name === 'new_space');`,
      'process.stdout.write(String(Math.round((young?.space_size ?? -1024) / 1024)));',
    ]),
  );
}

test('the agent flags keep the young generation from growing under allocation; without them it grows', (t) => {
  const capped = newSpaceAfterChurn(undefined);
  const grown = newSpaceAfterChurn('');
  t.log(`new space after churn: ${capped} KiB with the agent's flags, ${grown} KiB with none`);
  t.true(capped > 0 && capped <= 4096, `${capped} KiB`);
  t.true(grown >= 4 * capped, `${grown} KiB against ${capped} KiB`);
});

const runAgent = (v8Flags: string | undefined, o: Omit<AgentRunOptions, 'v8Flags'>, ...extra: string[]) => runFixtureAgent({ ...o, v8Flags }, ...extra);
const runningLine = async (flags: string | undefined, ...extra: string[]): Promise<Record<string, unknown>> => (await runAgent(flags, {}, ...extra)).line;

test('rezolus agent at 1 s optimises nothing with TurboFan, its start-up included (the flag is set before the CLI loads)', async (t) => {
  // set once the config was read, --no-opt came after TurboFan had optimised the start-up (module
  // resolution, URL and path handling, the TOML parser), and the compiler's code was paged in
  const { stdout } = await runAgent(undefined, { nodeArgs: ['--trace-opt'], afterMs: 3000 });
  const optimised = stdout.split('\n').filter((l) => l.includes('completed optimizing') || l.includes('completed compiling'));
  t.deepEqual(optimised, [], 'no function optimised');
  // the check can fail: the same agent told to optimise does
  const control = await runAgent('--opt', { nodeArgs: ['--trace-opt'], afterMs: 0 });
  // (the agent runs in V8's predictable mode, agent/node-flags.ts: TurboFan compiles on the main thread, "completed compiling")
  t.true(control.stdout.includes('completed optimizing') || control.stdout.includes('completed compiling'), 'with TurboFan on, the start-up is optimised');
});

test('rezolus agent says the V8 flags and malloc arena limit it runs with: no TurboFan at 1 s, TurboFan back at 100 ms, the young-generation cap and one arena at both, no flags when told', async (t) => {
  const slow = await runningLine(undefined);
  t.deepEqual(slow.v8_flags, ['--no-opt', '--semi-space-growth-factor=1']);
  t.is(slow.malloc_arena_max, 1);
  t.is(slow.native_numbers, true, 'without TurboFan the frame numbers are written by the native addon');
  t.is(slow.malloc_trim, true, 'free malloc pages go back to the kernel every 10 s');
  const fast = await runningLine(undefined, '--interval', '100ms');
  t.deepEqual(fast.v8_flags, ['--opt', '--semi-space-growth-factor=1']);
  t.is(fast.malloc_arena_max, 1);
  t.is(fast.native_numbers, false, 'with TurboFan the encoder\'s own loop');
  t.deepEqual((await runningLine('')).v8_flags, []);
});

test('a sampler asked for 100 ms that runs once a second at the fastest (cgroup_resources) leaves the agent without TurboFan; a kernel sampler at 100 ms with [kernel] off too', async (t) => {
  const only = (sampler: string, kernel: boolean): string =>
    `[defaults]\nenabled = false\n[kernel]\nenabled = ${kernel}\n[http]\nenabled = false\n[samplers.${sampler}]\nenabled = true\ninterval = "100ms"\n`;
  const cgroups = (await runAgent(undefined, { config: `${only('cgroup_resources', true)}[samplers.cpu_usage]\nenabled = true\n` })).line;
  t.deepEqual(cgroups.v8_flags, ['--no-opt', '--semi-space-growth-factor=1']);
  t.is(cgroups.native_numbers, true);
  const kernelOff = (await runAgent(undefined, { config: `${only('syscall_counts', false)}[samplers.cpu_usage]\nenabled = true\n` })).line;
  t.deepEqual(kernelOff.v8_flags, ['--no-opt', '--semi-space-growth-factor=1']);
});
