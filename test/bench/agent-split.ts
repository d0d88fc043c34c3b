/**
 * Splits the agent's CPU per tick into sampling and bus at the real 1 s
 * cadence. Each phase runs in a fresh Node process (so both start equally
 * JIT-cold), one after the other:
 *   A. sampling only: an Agent with every sampler and a sink that drops frames;
 *   B. the whole agent: runAgent() (the code `rezolus agent` runs) publishing to
 *      a private nats-server.
 * B - A is what publishing costs per tick (JetStream publish + ack per frame,
 * descriptor and status KV puts, the NATS client's timers and pings).
 *
 *   npx tsx test/bench/agent-split.ts          # 60 s per phase
 *   npx tsx test/bench/agent-split.ts 30
 *
 * CPU is process.cpuUsage() of the phase's process (all threads, the tsx
 * loader included, idle after start-up) from t=5 s to the end; ticks are the
 * refreshes the agent counted. Also printed: CPU per tick in 10 s slices, which
 * shows how long the JIT takes to warm up when the code runs once a second.
 */
import { spawn } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';
import { Agent, type FrameSink, type SamplerStatus } from '../../src/agent/agent.js';
import { runAgent, type RunningAgent } from '../../src/agent/main.js';
import { loadAgentConfig } from '../../src/config/agent.js';
import { silentLogger } from '../../src/log/logger.js';
import { SAMPLER_NAMES, SAMPLERS } from '../../src/samplers/registry.js';
import { startNatsServer, type NatsServer } from '../../src/up/nats-server.js';
import { fmt, NATS_SERVER_BIN, ROOT, say, sleepUntil, stopChild } from './common.js';

const WARMUP_S = 5;
const SLICE_S = 10;
const RESULT = 'AGENT-SPLIT-RESULT ';

const { values: flags, positionals } = parseArgs({ options: { phase: { type: 'string' } }, allowPositionals: true });
const SECONDS = Number(positionals[0] ?? 60);
if (!Number.isInteger(SECONDS) || SECONDS < WARMUP_S + SLICE_S || SECONDS > 900) {
  process.stderr.write(`usage: npx tsx test/bench/agent-split.ts [SECONDS per phase, ${WARMUP_S + SLICE_S}..900, default 60]\n`);
  process.exit(2);
}

interface PhaseResult {
  readonly name: string;
  readonly ticks: number;
  readonly userMs: number;
  readonly systemMs: number;
  /** CPU ms per tick in each SLICE_S slice from the start */
  readonly slices: readonly number[];
  readonly samplers: readonly { name: string; refreshUs: number }[];
}

function ticksOf(a: readonly SamplerStatus[], b: readonly SamplerStatus[]): number {
  const d = b.filter((s) => s.status.state === 'active').map((s) => s.refreshes - (a.find((x) => x.name === s.name)?.refreshes ?? 0));
  d.sort((x, y) => x - y);
  return d[Math.floor(d.length / 2)] ?? 0;
}

const cpuMs = (): number => {
  const c = process.cpuUsage();
  return (c.user + c.system) / 1000;
};

/**
 * Samples CPU every second (half-way between ticks) for SECONDS from the first
 * whole second, and measures the window from WARMUP_S to the end.
 */
async function measure(name: string, agent: Agent): Promise<PhaseResult> {
  const S = Math.ceil(Date.now() / 1000) * 1000;
  const perSecond: number[] = [];
  let s0: SamplerStatus[] = [];
  let c0 = process.cpuUsage();
  for (let k = 0; k <= SECONDS; k++) {
    await sleepUntil(S + k * 1000 + 500);
    perSecond.push(cpuMs());
    if (k === WARMUP_S) {
      s0 = agent.status();
      c0 = process.cpuUsage();
    }
  }
  const c = process.cpuUsage(c0);
  const s1 = agent.status();
  const slices: number[] = [];
  for (let i = 0; i + SLICE_S < perSecond.length; i += SLICE_S) {
    slices.push(((perSecond[i + SLICE_S] as number) - (perSecond[i] as number)) / SLICE_S);
  }
  const samplers = s1.map((s) => {
    const p = s0.find((x) => x.name === s.name);
    const n = s.refreshes - (p?.refreshes ?? 0);
    return { name: s.name, refreshUs: n > 0 ? Number(s.refreshNs - (p?.refreshNs ?? 0n)) / n / 1000 : Number.NaN };
  });
  return { name, ticks: ticksOf(s0, s1), userMs: c.user / 1000, systemMs: c.system / 1000, slices, samplers };
}

/** One phase, in this (child) process; prints its result as one JSON line. */
async function phase(which: string): Promise<void> {
  const log = silentLogger();
  let result: PhaseResult;
  if (which === 'A') {
    const drop: FrameSink = {
      stats: { published: 0, dropped: 0, retries: 0, buffered: 0, bufferedBytes: 0 },
      publishFrame() {},
      putDescriptor() {},
    };
    const agent = new Agent({
      host: 'bench',
      instance: 1,
      samplers: SAMPLERS.map((definition) => ({ definition, enabled: true, intervalMs: 1000 })),
      context: { procRoot: '/proc', sysRoot: '/sys' },
      sink: drop,
      descriptorTtlMs: 86_400_000,
      log,
    });
    await agent.start();
    try {
      result = await measure('A sampling only (frames dropped)', agent);
    } finally {
      await agent.stop();
    }
  } else {
    const dir = mkdtempSync(join(tmpdir(), 'rezolus-bench-split-'));
    let nats: NatsServer | undefined;
    let running: RunningAgent | undefined;
    const cleanup = async (): Promise<void> => {
      await running?.stop().catch(() => undefined);
      await nats?.stop().catch(() => undefined);
      rmSync(dir, { recursive: true, force: true });
    };
    process.once('SIGTERM', () => void cleanup().finally(() => process.exit(143)));
    try {
      nats = await startNatsServer({ binary: NATS_SERVER_BIN, port: 0, dataDir: dir });
      const config = loadAgentConfig(undefined, SAMPLER_NAMES, { host: 'bench', natsUrl: nats.url, intervalMs: 1000, logLevel: 'warn' });
      running = await runAgent(config, log);
      result = await measure('B runAgent -> nats-server', running.agent);
    } finally {
      await cleanup();
    }
  }
  process.stdout.write(`${RESULT}${JSON.stringify(result)}\n`);
}

/** Runs a phase in a fresh process and returns its result. */
async function child(which: string): Promise<PhaseResult> {
  const self = fileURLToPath(import.meta.url);
  const p = spawn(process.execPath, [...process.execArgv, self, String(SECONDS), '--phase', which], {
    cwd: ROOT,
    stdio: ['ignore', 'pipe', 'inherit'],
  });
  let out = '';
  p.stdout?.on('data', (d: Buffer) => {
    out += d.toString();
  });
  const exited = new Promise<number | null>((r) => p.once('exit', (code) => r(code)));
  const timer = setTimeout(() => void stopChild(p), (SECONDS + 60) * 1000);
  const onSignal = (): void => void stopChild(p).finally(() => process.exit(130));
  process.once('SIGINT', onSignal);
  const code = await exited;
  clearTimeout(timer);
  process.off('SIGINT', onSignal);
  const line = out.split('\n').find((l) => l.startsWith(RESULT));
  if (line === undefined) throw new Error(`phase ${which} failed (exit ${code}): ${out.trim()}`);
  return JSON.parse(line.slice(RESULT.length)) as PhaseResult;
}

async function main(): Promise<void> {
  say(`agent-split: ${SECONDS} s per phase, each in a fresh process, measuring from t=${WARMUP_S} s (node ${process.version})`);
  const a = await child('A');
  const b = await child('B');
  const perTick = (r: PhaseResult): number => (r.userMs + r.systemMs) / r.ticks;
  const rows = [a, b].map((r) => [r.name, String(r.ticks), fmt(perTick(r), 3), fmt(r.userMs / r.ticks, 3), fmt(r.systemMs / r.ticks, 3)]);
  rows.unshift(['phase', 'ticks', 'CPU ms/tick', 'user', 'sys']);
  rows.push([
    'B - A: publishing',
    '',
    fmt(perTick(b) - perTick(a), 3),
    fmt(b.userMs / b.ticks - a.userMs / a.ticks, 3),
    fmt(b.systemMs / b.ticks - a.systemMs / a.ticks, 3),
  ]);
  say('');
  const w = [0, 1, 2, 3, 4].map((i) => Math.max(...rows.map((r) => (r[i] as string).length)));
  for (const r of rows) say(r.map((c, i) => (i === 0 ? c.padEnd(w[0] as number) : c.padStart(w[i] as number))).join('  '));
  say(`\nCPU ms per tick in ${SLICE_S} s slices from the start (JIT warm-up at one tick a second):`);
  for (const r of [a, b]) say(`  ${r.name.padEnd(34)} ${r.slices.map((x) => fmt(x, 1)).join('  ')}`);
  say('\nper-sampler refresh wall time, µs (refreshNs/refreshes over the window; samplers run concurrently, so each spans the others):');
  say(`  ${'sampler'.padEnd(20)} ${'A'.padStart(9)} ${'B'.padStart(9)}`);
  for (const s of a.samplers) {
    const sb = b.samplers.find((x) => x.name === s.name);
    say(`  ${s.name.padEnd(20)} ${fmt(s.refreshUs, 1).padStart(9)} ${fmt(sb?.refreshUs ?? Number.NaN, 1).padStart(9)}`);
  }
}

let code = 0;
try {
  if (flags.phase !== undefined) await phase(flags.phase);
  else await main();
} catch (error) {
  process.stderr.write(`agent-split failed: ${error instanceof Error ? (error.stack ?? error.message) : String(error)}\n`);
  code = 1;
}
process.exit(code);
