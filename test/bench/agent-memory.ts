/**
 * Where the agent's RSS goes over time: one `rezolus agent` (every sampler,
 * at --interval) against a private nats-server, and every second its RSS
 * (anonymous and file-backed, /proc/<pid>/status), every 5 s V8's view from
 * inside the process (heap used and total, external memory, ArrayBuffers:
 * a small preload script with --require), and V8's full GCs (--trace-gc).
 * It shows what rises between full GCs and falls at each: memory that waits
 * for the next one (test/bench/README.md, "the 10 Hz RSS between full GCs").
 *
 *   npx tsx test/bench/agent-memory.ts [SECONDS] [--interval 100ms] [--cli PATH]
 */
import { spawn } from 'node:child_process';
import { mkdtempSync, openSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import { startNatsServer } from '../../src/up/nats-server.js';
import { cpuModel, ENTRY, ensureBuilt, fmt, intervalsAsShipped, NATS_SERVER_BIN, samplerNamesOf, say, sleep, treeOf, writeAgentConfig } from './common.js';

const { values: flags, positionals } = parseArgs({
  allowPositionals: true,
  options: { interval: { type: 'string', default: '100ms' }, cli: { type: 'string' } },
});
const SECONDS = Number(positionals[0] ?? 120);
const CLI = flags.cli ?? ENTRY;

const PRELOAD = `
const { writeSync } = require('node:fs');
const fd = Number(process.env.REZOLUS_BENCH_MEMORY_FD);
const t0 = Date.now();
setInterval(() => {
  const m = process.memoryUsage();
  const mib = (n) => (n / 1048576).toFixed(1);
  writeSync(fd, 'v8 ' + ((Date.now() - t0) / 1000).toFixed(0) + ' ' + mib(m.heapUsed) + ' ' + mib(m.heapTotal) + ' ' + mib(m.external) + ' ' + mib(m.arrayBuffers) + '\\n');
}, 5000).unref();
`;

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
      // fd 3 carries the preload's lines; --trace-gc and the log go to the file too
      stdio: ['ignore', out, out, out],
      env: { ...process.env, REZOLUS_NATS_URL: '', REZOLUS_BENCH_MEMORY_FD: '3' },
    });
    say(`CPU: ${cpuModel()}; node ${process.version}; ${CLI}, every sampler at ${flags.interval}, ${SECONDS} s`);
    const rss: string[] = [];
    for (let s = 1; s <= SECONDS && agent.exitCode === null; s++) {
      await sleep(1000);
      const status = readFileSync(`/proc/${agent.pid}/status`, 'utf8');
      const kib = (k: string): number => Number(new RegExp(`${k}:\\s+(\\d+)`).exec(status)?.[1] ?? 0);
      rss.push(`${s}s ${fmt(kib('VmRSS') / 1024, 1)} (anon ${fmt(kib('RssAnon') / 1024, 1)}, file ${fmt(kib('RssFile') / 1024, 1)})`);
    }
    agent.kill('SIGTERM');
    await new Promise((r) => agent.once('exit', r));
    const lines = readFileSync(log, 'utf8').split('\n');
    say('RSS, MiB, every 5 s:');
    for (let i = 4; i < rss.length; i += 5) say(`  ${rss[i]}`);
    say('inside V8 (process.memoryUsage), MiB: seconds, heap used, heap total, external, ArrayBuffers');
    for (const l of lines.filter((x) => x.startsWith('v8 '))) say(`  ${l.slice(3)}`);
    const scavenges = lines.filter((l) => l.includes('Scavenge')).length;
    say(`full GCs (${scavenges} scavenges besides):`);
    for (const l of lines.filter((x) => x.includes('Mark-Compact'))) say(`  ${/\d+ ms: Mark-Compact[^,]*/.exec(l)?.[0] ?? l}`);
  } finally {
    await nats.stop();
    rmSync(dir, { recursive: true, force: true });
  }
}

main().catch((error: unknown) => {
  process.stderr.write(`agent-memory failed: ${error instanceof Error ? error.message : String(error)}\n`);
  process.exit(1);
});
