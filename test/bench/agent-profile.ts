/**
 * Where the agent's CPU goes: runs the compiled agent (all samplers, 1 s,
 * private nats-server) under `node --cpu-prof` for a while and summarises the
 * V8 profile: top functions by self time, by inclusive time, and self time by
 * module (package or dist/ file).
 *
 *   npx tsx test/bench/agent-profile.ts            # 5 s start-up, then 20 s summarised
 *   npx tsx test/bench/agent-profile.ts 30 --keep  # keep the .cpuprofile (open it in Chrome DevTools)
 *
 * The profile covers the JavaScript thread only: GC and libuv show up as
 * "(garbage collector)" and "(program)"; /proc utime+stime is printed beside it.
 * The profiler adds overhead of its own, so read shares, not absolute figures.
 */
import type { ChildProcess } from 'node:child_process';
import { mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { parseArgs } from 'node:util';
import { startNatsServer, type NatsServer } from '../../src/up/nats-server.js';
import {
  alive, CLK_TCK, cpuModel, cpuTicksSplit, ENTRY, ensureBuilt, fmt, NATS_SERVER_BIN, PROCFS_SAMPLERS, intervalsAsShipped, samplerNamesOf, say, sleep, spawnAgent,
  stderrTail, stopChild, treeOf, writeAgentConfig,
  type CallFrame, type CpuProfile, type ProfileNode,
} from './common.js';

const { values: flags, positionals } = parseArgs({
  options: {
    keep: { type: 'boolean' }, top: { type: 'string' }, interval: { type: 'string' }, skip: { type: 'string' },
    cli: { type: 'string' }, samplers: { type: 'string' }, 'sampler-interval': { type: 'string' }, 'node-args': { type: 'string' },
  },
  allowPositionals: true,
});
const SECONDS = Number(positionals[0] ?? 20);
const TOP = Number(flags.top ?? 20);
/** V8 sampling interval, µs (Node's default is 1000: too coarse for an agent that is idle 99 % of the time) */
const SAMPLE_US = Number(flags.interval ?? 250);
/** start-up (module loading, stream and bucket set-up) left out of the summary, s */
const SKIP_S = Number(flags.skip ?? 5);
if (!Number.isInteger(SECONDS) || SECONDS < 3 || SECONDS > 600 || !(SKIP_S >= 0 && SKIP_S <= 900) || !(SAMPLE_US >= 50)) {
  process.stderr.write(
    'usage: npx tsx test/bench/agent-profile.ts [SECONDS=20] [--skip S=5, up to 900] [--interval US=250] [--top N=20] [--keep]\n' +
      '       [--cli PATH (another checkout\'s dist/cli/rezolus.js)] [--samplers all|procfs] [--sampler-interval 1s] [--node-args "FLAGS"]\n',
  );
  process.exit(2);
}


function shortUrl(url: string): string {
  const nm = url.lastIndexOf('/node_modules/');
  if (nm >= 0) return url.slice(nm + '/node_modules/'.length);
  const dist = url.indexOf('/dist/');
  if (dist >= 0) return url.slice(dist + 1);
  return url.replace(/^file:\/\//, '');
}

function moduleOf(f: CallFrame): string {
  if (f.url === '') return f.functionName === '' ? '(anonymous native)' : f.functionName;
  const nm = f.url.lastIndexOf('/node_modules/');
  if (nm >= 0) {
    const parts = f.url.slice(nm + '/node_modules/'.length).split('/');
    return parts[0]?.startsWith('@') === true ? `${parts[0]}/${parts[1]}` : (parts[0] ?? f.url);
  }
  const dist = f.url.indexOf('/dist/');
  if (dist >= 0) return f.url.slice(dist + 1);
  if (f.url.startsWith('node:')) return f.url.split('/').slice(0, 2).join('/');
  return f.url;
}

function keyOf(f: CallFrame): string {
  return `${f.functionName === '' ? '(anonymous)' : f.functionName}  ${f.url === '' ? '' : `${shortUrl(f.url)}:${f.lineNumber + 1}`}`.trim();
}

function summarise(p: CpuProfile, cpuMs: { user: number; system: number }): void {
  const byId = new Map<number, ProfileNode>();
  const parent = new Map<number, number>();
  for (const n of p.nodes) {
    byId.set(n.id, n);
    for (const c of n.children ?? []) parent.set(c, n.id);
  }
  const self = new Map<string, number>();
  const inclusive = new Map<string, number>();
  const modules = new Map<string, number>();
  let busyUs = 0;
  let idleUs = 0;
  let ts = p.startTime;
  const from = p.startTime + SKIP_S * 1e6;
  let first = Number.NaN;
  let counted = 0;
  for (let i = 0; i < p.samples.length; i++) {
    ts += p.timeDeltas[i] ?? 0;
    if (ts < from) continue;
    if (Number.isNaN(first)) first = ts;
    counted++;
    const id = p.samples[i] as number;
    // the time until the next sample is charged to this one
    const dt = (i + 1 < p.timeDeltas.length ? p.timeDeltas[i + 1] : 0) ?? 0;
    const node = byId.get(id);
    if (node === undefined) continue;
    if (node.callFrame.functionName === '(idle)') {
      idleUs += dt;
      continue;
    }
    busyUs += dt;
    const k = keyOf(node.callFrame);
    self.set(k, (self.get(k) ?? 0) + dt);
    const mod = moduleOf(node.callFrame);
    modules.set(mod, (modules.get(mod) ?? 0) + dt);
    const seen = new Set<string>();
    for (let cur: number | undefined = id; cur !== undefined; cur = parent.get(cur)) {
      const f = (byId.get(cur) as ProfileNode).callFrame;
      if (f.functionName === '(root)') break;
      const key = keyOf(f);
      if (seen.has(key)) continue;
      seen.add(key);
      inclusive.set(key, (inclusive.get(key) ?? 0) + dt);
    }
  }
  const wallMs = (p.endTime - first) / 1000;
  say(`profile: the last ${fmt(wallMs / 1000, 1)} s (first ${SKIP_S} s of start-up left out), ${counted} samples every ~${SAMPLE_US} µs; JS thread busy ${fmt(busyUs / 1000, 1)} ms (${fmt((busyUs / 1000 / wallMs) * 100, 3)} %), idle ${fmt(idleUs / 1000, 0)} ms`);
  say(`/proc utime+stime over the same span (all threads, profiler overhead included): ${fmt(cpuMs.user, 0)} + ${fmt(cpuMs.system, 0)} ms`);
  const table = (title: string, m: Map<string, number>, n: number): void => {
    say(`\n${title}`);
    const rows = [...m.entries()].sort((a, b) => b[1] - a[1]).slice(0, n);
    for (const [k, us] of rows) say(`  ${fmt(us / 1000, 1).padStart(8)} ms ${fmt((us / busyUs) * 100, 1).padStart(5)} %  ${k}`);
  };
  table('self time by module (share of busy JS time)', modules, TOP);
  table('top functions by self time', self, TOP);
  table('top functions by inclusive time', inclusive, TOP);
}

let dir: string | undefined;
let nats: NatsServer | undefined;
let agent: ChildProcess | undefined;
let cleaning: Promise<void> | undefined;
const cleanup = (): Promise<void> => {
  cleaning ??= (async () => {
    await stopChild(agent);
    await nats?.stop().catch(() => undefined);
    if (dir !== undefined && flags.keep !== true) rmSync(dir, { recursive: true, force: true });
  })();
  return cleaning;
};
for (const signal of ['SIGINT', 'SIGTERM'] as const) {
  process.once(signal, () => void cleanup().finally(() => process.exit(130)));
}
const watchdog = setTimeout(() => void cleanup().finally(() => process.exit(1)), (SECONDS + 180) * 1000);
watchdog.unref();

const CLI = flags.cli === undefined ? ENTRY : resolve(flags.cli);
const PROCFS_ONLY = flags.samplers === 'procfs';

async function run(): Promise<void> {
  if (CLI === ENTRY) ensureBuilt();
  dir = mkdtempSync(join(tmpdir(), 'rezolus-bench-prof-'));
  const profDir = join(dir, 'prof');
  mkdirSync(profDir);
  nats = await startNatsServer({ binary: NATS_SERVER_BIN, port: 0, dataDir: join(dir, 'nats') });
  const tree = treeOf(CLI);
  const names = PROCFS_ONLY ? PROCFS_SAMPLERS.filter((n) => samplerNamesOf(tree).includes(n)) : samplerNamesOf(tree);
  // the samplers the tree ships slower than 1 s (cpu_perf, rezolus_bpf) keep their interval, as in agent-cpu.ts
  const config = writeAgentConfig(join(dir, 'agent.toml'), tree, {
    samplers: intervalsAsShipped(tree, names, flags['sampler-interval'] ?? '1s'),
    kernel: !PROCFS_ONLY,
  });
  const child = spawnAgent({
    entry: CLI,
    natsUrl: nats.url,
    host: 'bench',
    config,
    nodeArgs: ['--cpu-prof', `--cpu-prof-dir=${profDir}`, `--cpu-prof-interval=${SAMPLE_US}`, ...(flags['node-args'] ?? '').split(/\s+/).filter((x) => x !== '')],
  });
  agent = child;
  const log = stderrTail(child);
  say(`CPU: ${cpuModel()}; profiling ${CLI} (pid ${child.pid}, ${names.length} samplers${PROCFS_ONLY ? ', [kernel] off' : ''}, [http] off) for ${SKIP_S} + ${SECONDS} s against ${nats.url}`);
  const waitUntil = async (deadline: number): Promise<void> => {
    while (Date.now() < deadline) {
      if (!alive(child)) throw new Error(`the agent exited (${child.exitCode ?? child.signalCode}): ${log()}`);
      await sleep(Math.min(500, deadline - Date.now()));
    }
  };
  const t0 = Date.now();
  await waitUntil(t0 + SKIP_S * 1000);
  const t1 = cpuTicksSplit(child.pid as number);
  await waitUntil(t0 + (SKIP_S + SECONDS) * 1000);
  const t2 = cpuTicksSplit(child.pid as number);
  const t = { user: t2.user - t1.user, system: t2.system - t1.system };
  // SIGTERM: the agent stops cleanly and exits, and node writes the profile on the way out.
  await stopChild(child, 10_000);
  const file = readdirSync(profDir).find((f) => f.endsWith('.cpuprofile'));
  if (file === undefined) throw new Error(`no .cpuprofile written in ${profDir} (agent exit ${child.exitCode ?? child.signalCode}): ${log()}`);
  const profile = JSON.parse(readFileSync(join(profDir, file), 'utf8')) as CpuProfile;
  summarise(profile, { user: (t.user * 1000) / CLK_TCK, system: (t.system * 1000) / CLK_TCK });
  if (flags.keep === true) say(`\nprofile kept: ${join(profDir, file)}`);
}

let code = 0;
try {
  await run();
} catch (error) {
  process.stderr.write(`agent-profile failed: ${error instanceof Error ? error.message : String(error)}\n`);
  code = 1;
} finally {
  await cleanup();
}
process.exit(code);
