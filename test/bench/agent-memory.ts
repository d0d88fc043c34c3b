/**
 * Where the agent's RSS goes over time: one `rezolus agent` (every sampler,
 * at --interval) against a private nats-server, and every second its RSS
 * (anonymous and file-backed, /proc/<pid>/status), every 5 s V8's view from
 * inside the process (heap used and total, external memory, ArrayBuffers:
 * a small preload script with --require), and V8's full GCs (--trace-gc).
 * It shows what rises between full GCs and falls at each: memory that waits
 * for the next one (test/bench/README.md, "the 10 Hz RSS between full GCs").
 * With --alloc, V8's sampling heap profiler runs in the agent from 20 s after
 * start to the end, counting objects a scavenge or a full GC collected too,
 * and the sites that allocate the most bytes a second are printed: what
 * fills the young generation (and so what its scavenges and size follow).
 * With --promoted, the same leaving out what a scavenge collected: what
 * outlived the young generation and fills the old space until a full GC.
 * With --cgroups N, N empty cgroups appear at --cgroups-at seconds (in every
 * v1 hierarchy cgroup_resources reads, or in the v2 one, under
 * rezolus-bench-<pid>) and go --cgroups-for seconds later: the agent's RSS
 * while it publishes them and after (a host starting and stopping many
 * containers at once). With --cgroups-churn S as well, every S seconds of
 * that window the N cgroups are removed and N others made under new names
 * (containers that come and go: what the agent keeps of the ones gone).
 *
 *   npx tsx test/bench/agent-memory.ts [SECONDS] [--interval 100ms] [--cli PATH] [--alloc | --promoted]
 *       [--cgroups N [--cgroups-at S] [--cgroups-for S] [--cgroups-churn S]]
 */
import { spawn } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, openSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import { startNatsServer } from '../../src/up/nats-server.js';
import { cpuModel, ENTRY, ensureBuilt, fmt, intervalsAsShipped, NATS_SERVER_BIN, removeBenchCgroups, samplerNamesOf, say, sleep, treeOf, writeAgentConfig } from './common.js';

const { values: flags, positionals } = parseArgs({
  allowPositionals: true,
  options: {
    interval: { type: 'string', default: '100ms' }, cli: { type: 'string' }, alloc: { type: 'boolean' }, promoted: { type: 'boolean' },
    cgroups: { type: 'string', default: '0' }, 'cgroups-at': { type: 'string', default: '60' }, 'cgroups-for': { type: 'string', default: '120' },
    'cgroups-churn': { type: 'string', default: '0' },
  },
});
const SECONDS = Number(positionals[0] ?? 120);
const CLI = flags.cli ?? ENTRY;
const CGROUPS = Number(flags.cgroups);
const CGROUPS_AT = Number(flags['cgroups-at']);
const CGROUPS_UNTIL = CGROUPS_AT + Number(flags['cgroups-for']);
/** seconds between replacing the cgroups by new ones (0: made once, kept for the window) */
const CGROUPS_CHURN = Number(flags['cgroups-churn']);
for (const [name, n, min] of [
  ['--cgroups', CGROUPS, 0], ['--cgroups-at', CGROUPS_AT, 1], ['--cgroups-for', CGROUPS_UNTIL - CGROUPS_AT, 1], ['--cgroups-churn', CGROUPS_CHURN, 0],
] as const) {
  if (!Number.isInteger(n) || n < min) throw new Error(`${name} takes a whole number ≥ ${min}, not ${n}`);
}

/** the cgroup roots cgroup_resources reads here: the v1 hierarchies, or the v2 root */
const CGROUP_ROOTS = ((): string[] => {
  const v1 = ['cpu', 'cpuacct', 'memory', 'blkio', 'pids'].map((c) => `/sys/fs/cgroup/${c}`).filter((r) => existsSync(join(r, 'cgroup.procs')));
  return v1.length > 0 ? v1 : existsSync('/sys/fs/cgroup/cgroup.controllers') ? ['/sys/fs/cgroup'] : [];
})();
const CGROUP_PARENT = `rezolus-bench-${process.pid}`;

/** `generation` names them: each generation of a churn gets names never used before */
function makeCgroups(n: number, generation = 0): void {
  for (const root of CGROUP_ROOTS) for (let i = 0; i < n; i++) mkdirSync(join(root, CGROUP_PARENT, `g${generation}-c${String(i).padStart(5, '0')}`), { recursive: true });
}

function removeCgroups(): void {
  removeBenchCgroups(CGROUP_ROOTS, CGROUP_PARENT);
}

const PRELOAD = `
const { openSync, writeSync } = require('node:fs');
// a file of its own, opened here: the agent restarts itself (execv) with its node flags at 1 Hz, and
// only stdin, stdout and stderr survive that
const fd = openSync(process.env.REZOLUS_BENCH_MEMORY_FILE, 'a');
const t0 = Date.now();
setInterval(() => {
  const m = process.memoryUsage();
  const mib = (n) => (n / 1048576).toFixed(1);
  writeSync(fd, 'v8 ' + ((Date.now() - t0) / 1000).toFixed(0) + ' ' + mib(m.heapUsed) + ' ' + mib(m.heapTotal) + ' ' + mib(m.external) + ' ' + mib(m.arrayBuffers) + '\\n');
}, 5000).unref();
const profileTo = process.env.REZOLUS_BENCH_ALLOC_PROFILE;
if (profileTo) {
  const { Session } = require('node:inspector');
  const session = new Session();
  session.connect();
  let started = 0;
  setTimeout(() => {
    started = Date.now();
    session.post('HeapProfiler.startSampling', { samplingInterval: 4096, includeObjectsCollectedByMajorGC: true, includeObjectsCollectedByMinorGC: process.env.REZOLUS_BENCH_ALLOC_PROMOTED !== '1' });
  }, 20000).unref();
  process.once('SIGTERM', () => {
    if (!started) process.exit(0);
    session.post('HeapProfiler.stopSampling', (err, result) => {
      if (!err) require('node:fs').writeFileSync(profileTo, JSON.stringify({ seconds: (Date.now() - started) / 1000, profile: result.profile }));
      process.exit(0);
    });
  });
}
`;

interface AllocNode {
  callFrame: { functionName: string; url: string; lineNumber: number };
  selfSize: number;
  children: AllocNode[];
}

/** bytes a second by allocation site (function, file, line), highest first */
function allocationSites(root: AllocNode, seconds: number): Array<[string, number]> {
  const bySite = new Map<string, number>();
  const walk = (node: AllocNode): void => {
    const { functionName, url, lineNumber } = node.callFrame;
    const file = url.replace(/^.*\/(dist|node_modules)\//, '$1/').replace(/^node:/, '');
    const site = `${functionName || '(anonymous)'} ${file}:${lineNumber + 1}`;
    if (node.selfSize > 0) bySite.set(site, (bySite.get(site) ?? 0) + node.selfSize);
    for (const child of node.children) walk(child);
  };
  walk(root);
  return [...bySite].map(([site, bytes]): [string, number] => [site, bytes / seconds]).sort((a, b) => b[1] - a[1]);
}

async function main(): Promise<void> {
  if (CLI === ENTRY) ensureBuilt();
  const tree = treeOf(CLI);
  const dir = mkdtempSync(join(tmpdir(), 'rezolus-bench-memory-'));
  const nats = await startNatsServer({ binary: NATS_SERVER_BIN, port: 0, dataDir: dir });
  try {
    const config = writeAgentConfig(join(dir, 'agent.toml'), tree, { samplers: intervalsAsShipped(tree, samplerNamesOf(tree), flags.interval), kernel: true });
    const preload = join(dir, 'preload.cjs');
    writeFileSync(preload, PRELOAD);
    const log = join(dir, 'agent.out');
    const out = openSync(log, 'w');
    const agent = spawn(process.execPath, ['--trace-gc', '--require', preload, CLI, 'agent', '--config', config, '--nats', nats.url, '--host', 'memory', '--log-level', 'warn'], {
      cwd: tree,
      // --trace-gc and the log go to the file; the preload's lines to one of their own
      stdio: ['ignore', out, out],
      env: {
        ...process.env, REZOLUS_NATS_URL: '', REZOLUS_BENCH_MEMORY_FILE: join(dir, 'v8.lines'),
        ...(flags.alloc || flags.promoted ? { REZOLUS_BENCH_ALLOC_PROFILE: join(dir, 'alloc.json') } : {}),
        ...(flags.promoted ? { REZOLUS_BENCH_ALLOC_PROMOTED: '1' } : {}),
      },
    });
    say(`CPU: ${cpuModel()}; node ${process.version}; ${CLI}, every sampler at ${flags.interval}, ${SECONDS} s`);
    if (CGROUPS > 0) {
      if (CGROUP_ROOTS.length === 0) throw new Error('--cgroups: no cgroup hierarchy found under /sys/fs/cgroup');
      const churn = CGROUPS_CHURN > 0 ? `, replaced by ${CGROUPS} new ones every ${CGROUPS_CHURN} s` : '';
      say(`${CGROUPS} cgroups under ${CGROUP_PARENT} in ${CGROUP_ROOTS.join(' ')} from ${CGROUPS_AT} s to ${CGROUPS_UNTIL} s${churn}`);
    }
    const rss: string[] = [];
    for (let s = 1; s <= SECONDS && agent.exitCode === null; s++) {
      await sleep(1000);
      if (CGROUPS > 0 && s === CGROUPS_AT) makeCgroups(CGROUPS);
      const churned = CGROUPS_CHURN > 0 && s > CGROUPS_AT && s < CGROUPS_UNTIL && (s - CGROUPS_AT) % CGROUPS_CHURN === 0;
      if (CGROUPS > 0 && churned) {
        removeCgroups();
        makeCgroups(CGROUPS, (s - CGROUPS_AT) / CGROUPS_CHURN);
      }
      if (CGROUPS > 0 && s === CGROUPS_UNTIL) removeCgroups();
      const status = readFileSync(`/proc/${agent.pid}/status`, 'utf8');
      const kib = (k: string): number => Number(new RegExp(`${k}:\\s+(\\d+)`).exec(status)?.[1] ?? 0);
      const cgroups = CGROUPS > 0 && s >= CGROUPS_AT && s < CGROUPS_UNTIL ? `, ${CGROUPS} cgroups made` : '';
      rss.push(`${s}s ${fmt(kib('VmRSS') / 1024, 1)} (anon ${fmt(kib('RssAnon') / 1024, 1)}, file ${fmt(kib('RssFile') / 1024, 1)})${cgroups}`);
    }
    agent.kill('SIGTERM');
    await new Promise((r) => agent.once('exit', r));
    const lines = readFileSync(log, 'utf8').split('\n');
    say('RSS, MiB, every 5 s:');
    for (let i = 4; i < rss.length; i += 5) say(`  ${rss[i]}`);
    say('inside V8 (process.memoryUsage), MiB: seconds, heap used, heap total, external, ArrayBuffers');
    for (const l of readFileSync(join(dir, 'v8.lines'), 'utf8').split('\n').filter((x) => x.startsWith('v8 '))) say(`  ${l.slice(3)}`);
    const scavenges = lines.filter((l) => l.includes('Scavenge')).length;
    say(`full GCs (${scavenges} scavenges besides):`);
    for (const l of lines.filter((x) => x.includes('Mark-Compact'))) say(`  ${/\d+ ms: Mark-Compact[^,]*/.exec(l)?.[0] ?? l}`);
    if (flags.alloc || flags.promoted) {
      const { seconds, profile } = JSON.parse(readFileSync(join(dir, 'alloc.json'), 'utf8')) as { seconds: number; profile: { head: AllocNode } };
      const sites = allocationSites(profile.head, seconds);
      const total = sites.reduce((sum, [, b]) => sum + b, 0);
      const what = flags.promoted ? 'allocated and outliving the scavenges (promoted, or still live)' : 'allocated';
      say(`${what}, sampled over the last ${fmt(seconds, 0)} s: ${fmt(total / 1024, 0)} kB a second; the sites above 1 %:`);
      for (const [site, bytes] of sites) if (bytes >= total / 100) say(`  ${fmt(bytes / 1024, 1).padStart(7)} kB/s ${fmt((100 * bytes) / total, 1).padStart(5)} %  ${site}`);
    }
  } finally {
    removeCgroups();
    await nats.stop();
    rmSync(dir, { recursive: true, force: true });
  }
}

process.once('SIGINT', () => {
  removeCgroups();
  process.exit(130);
});

main().catch((error: unknown) => {
  process.stderr.write(`agent-memory failed: ${error instanceof Error ? error.message : String(error)}\n`);
  process.exit(1);
});
