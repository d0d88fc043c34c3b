/**
 * What starting the CLI costs, the way tests start it: `node --import tsx
 * src/cli/rezolus.ts` (src/ transformed on load) against `node
 * dist/cli/rezolus.js` (the build), per mode, from spawn to the first useful
 * output:
 *
 *   version       `--version` to its exit (module graph only)
 *   since         `record --since 2s` of a live host to its exit (the e2e test's replay)
 *   duration      `record --duration 1s` to its exit (1 s of it is the window)
 *   recording     `record` live to its "recording" log line, then SIGTERM to exit
 *   agent         `agent` to its first frame on the bus
 *   exporter      `exporter` to its "following frames" log line
 *
 * `--parallel N` starts N of each at once (a test file's tests run
 * concurrently, and ava runs two files at a time on 2 vCPUs). Run it idle
 * and with busy loops beside it (`while :; do :; done &`).
 *
 *   npx tsx test/bench/cli-start.ts
 *   npx tsx test/bench/cli-start.ts --parallel 4 --runs 2 --variants dist
 *
 * Its own nats-server on a free loopback port and an in-process agent
 * publishing the fixture host; never the shared server. A measurement, not
 * a test.
 */
import { spawn } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { cpus, tmpdir } from 'node:os';
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import { connect } from '@nats-io/transport-node';
import { runAgent } from '../../src/agent/main.js';
import { loadAgentConfig } from '../../src/config/agent.js';
import { silentLogger } from '../../src/log/logger.js';
import { SAMPLER_NAMES } from '../../src/samplers/registry.js';
import { NO_KERNEL, PROC, SYS } from '../helpers/fixtures.js';
import { startTestNats } from '../helpers/nats.js';
import { ENTRY, ROOT, ensureBuilt, fmt, say, sleep } from './common.js';

const { values: args } = parseArgs({
  options: {
    runs: { type: 'string', default: '3' },
    parallel: { type: 'string', default: '1' },
    variants: { type: 'string', default: 'tsx,dist' },
    modes: { type: 'string', default: 'version,since,duration,recording,agent,exporter' },
  },
});
const RUNS = Number(args.runs);
const PARALLEL = Number(args.parallel);
const VARIANTS = args.variants.split(',');
const MODES = args.modes.split(',');

const ARGV: Record<string, string[]> = {
  tsx: ['--import', 'tsx', join(ROOT, 'src', 'cli', 'rezolus.ts')],
  dist: [ENTRY],
};

const server = await startTestNats();
const dir = mkdtempSync(join(tmpdir(), 'rezolus-cli-start-'));
const base = loadAgentConfig(undefined, SAMPLER_NAMES, { host: 'fixture', natsUrl: server.url });
const samplers = Object.fromEntries(SAMPLER_NAMES.map((n) => [n, { enabled: ['cpu_usage', 'memory_meminfo'].includes(n), intervalMs: 100 }]));
const agent = await runAgent({ ...base, procfs: PROC, sysfs: SYS, kernel: NO_KERNEL, samplers }, silentLogger());
const agentToml = join(dir, 'agent.toml');
writeFileSync(
  agentToml,
  `[kernel]\nenabled = false\n[http]\nenabled = false\n${SAMPLER_NAMES.map((n) => `[samplers.${n}]\nenabled = ${n === 'cpu_usage' || n === 'memory_meminfo'}\n`).join('')}`,
);
const nc = await connect({ servers: server.url });
let seq = 0;

/** Spawns the CLI in a mode; resolves with the ms from spawn to its first useful output. */
async function once(variant: string, mode: string): Promise<number> {
  const n = seq++;
  const out = join(dir, `r${n}.parquet`);
  const host = `start-${n}`;
  const modeArgs: Record<string, string[]> = {
    version: ['--version'],
    since: ['record', '--nats', server.url, '--host', 'fixture', '--since', '2s', '--interval', '500ms', '-o', out, '--log-level', 'warn'],
    duration: ['record', '--nats', server.url, '--host', 'fixture', '--duration', '1s', '--interval', '200ms', '-o', out, '--log-level', 'warn'],
    recording: ['record', '--nats', server.url, '--host', 'fixture', '--interval', '200ms', '-o', out, '--log-level', 'info'],
    agent: ['agent', '--config', agentToml, '--nats', server.url, '--host', host, '--interval', '100ms', '--procfs', PROC, '--sysfs', SYS, '--log-level', 'warn'],
    exporter: ['exporter', '--nats', server.url, '--listen', '127.0.0.1:0', '--hosts', 'fixture', '--log-level', 'info'],
  };
  const argv = [...(ARGV[variant] ?? []), ...(modeArgs[mode] ?? [])];
  const firstFrame = mode === 'agent' ? nc.subscribe(`rezolus.metrics.${host}.>`, { max: 1 }) : undefined;
  const began = performance.now();
  const child = spawn(process.execPath, argv, { cwd: ROOT, stdio: ['ignore', 'ignore', 'pipe'] });
  let stderr = '';
  let onData = (): void => {};
  child.stderr.on('data', (d: Buffer) => {
    stderr += d.toString();
    onData();
  });
  const exited = new Promise<number | null>((r) => child.once('exit', (code) => r(code)));
  const logged = (msg: string): Promise<void> =>
    new Promise((resolve) => {
      onData = () => {
        if (stderr.includes(`"msg":"${msg}"`)) resolve();
      };
    });
  let ms: number;
  if (mode === 'agent' && firstFrame !== undefined) {
    for await (const _ of firstFrame) break;
    ms = performance.now() - began;
    child.kill('SIGTERM');
    await exited;
  } else if (mode === 'recording' || mode === 'exporter') {
    const ready = logged(mode === 'recording' ? 'recording' : 'following frames');
    const r = await Promise.race([ready.then(() => 'ready'), exited.then(() => 'exited')]);
    if (r !== 'ready') throw new Error(`${variant} ${mode} exited before it was ready: ${stderr}`);
    ms = performance.now() - began;
    child.kill('SIGTERM');
    await exited;
  } else {
    const code = await exited;
    if (code !== 0) throw new Error(`${variant} ${mode} exited ${code}: ${stderr}`);
    ms = performance.now() - began;
  }
  rmSync(out, { force: true });
  return ms;
}

const median = (xs: number[]): number => {
  const s = [...xs].sort((a, b) => a - b);
  return s[Math.floor(s.length / 2)] ?? Number.NaN;
};

ensureBuilt();
const cpu = /model name\s*:\s*(.*)/.exec(readFileSync('/proc/cpuinfo', 'utf8'))?.[1] ?? '?';
say(`rezolus CLI start-up; ${cpu}, ${cpus().length} CPUs; node ${process.version}; ${PARALLEL} at once, ${RUNS} runs; load ${readFileSync('/proc/loadavg', 'utf8').split(' ').slice(0, 3).join(' ')}`);
await sleep(2500); // 2 s of frames in the stream for --since
say(`${'mode'.padEnd(10)} ${VARIANTS.map((v) => `${v} median ms (max)`.padStart(24)).join(' ')}`);
for (const mode of MODES) {
  const cells: string[] = [];
  for (const variant of VARIANTS) {
    const all: number[] = [];
    for (let r = 0; r < RUNS; r++) {
      const batch = await Promise.all(Array.from({ length: PARALLEL }, () => once(variant, mode)));
      all.push(...batch);
    }
    cells.push(`${fmt(median(all), 0)} (${fmt(Math.max(...all), 0)})`.padStart(24));
  }
  say(`${mode.padEnd(10)} ${cells.join(' ')}`);
}
say(`load after ${readFileSync('/proc/loadavg', 'utf8').split(' ').slice(0, 3).join(' ')}`);
await nc.close();
await agent.stop();
await server.dispose();
rmSync(dir, { recursive: true, force: true });
