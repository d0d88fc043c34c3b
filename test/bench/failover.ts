/**
 * Issue 7's figures: how long publishing stalls and how long the agent
 * takes to catch up when the stream leader of a 3-node cluster is killed,
 * and the agent's memory when its outage buffer is full.
 *
 *   npx tsx test/bench/failover.ts [--kills N] [--buffer-mib M]
 *
 * Part 1 runs an agent in this process (fixture root, 10 Hz, every procfs
 * sampler) against a cluster started from docker/nats/cluster.conf, kills the
 * stream leader N times (restarting it and waiting for it to be current in
 * between) and samples the publisher every 20 ms. stall = the longest time
 * without a single ack around the kill; catch-up = from the kill until the
 * buffer is back to one tick's frames.
 *
 * Part 2 runs the compiled agent as its own process (every procfs sampler
 * at 10 ms, so the buffer fills fast) against a single nats-server, kills
 * the server, and reads the agent's RSS before, and when the buffer is full
 * (frames start being dropped), from /proc/<pid>/status.
 */
import { spawn } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { jetstreamManager } from '@nats-io/jetstream';
import { runAgent } from '../../src/agent/main.js';
import { connectBus } from '../../src/bus/connect.js';
import { retryOnTimeout } from '../../src/bus/retry.js';
import { loadAgentConfig } from '../../src/config/agent.js';
import { silentLogger } from '../../src/log/logger.js';
import { SAMPLER_NAMES } from '../../src/samplers/registry.js';
import { startNatsServer } from '../../src/up/nats-server.js';
import { startCluster, type TestCluster } from '../helpers/cluster.js';
import { selfFigures } from '../helpers/agent-http.js';
import { NO_KERNEL, PROC, SYS } from '../helpers/fixtures.js';
import { ENTRY, ensureBuilt, fmt, memKiB, NATS_SERVER_BIN, say, sleep, stderrTail, stopChild } from './common.js';

const args = process.argv.slice(2);
const flag = (name: string, dflt: number): number => {
  const i = args.indexOf(name);
  const n = i < 0 ? dflt : Number(args[i + 1]);
  if (!Number.isFinite(n) || n <= 0) throw new Error(`${name} takes a positive number`);
  return n;
};
const KILLS = flag('--kills', 3);
const BUFFER_MIB = flag('--buffer-mib', 32);

const watchdog = setTimeout(() => {
  say('watchdog: 10 minutes passed; stopping');
  process.exit(1);
}, 600_000);
watchdog.unref();

async function leaderOf(cluster: TestCluster): Promise<string> {
  const nc = await connectBus({ url: cluster.url, name: 'bench-observer', log: silentLogger() });
  try {
    for (let i = 0; i < 100; i++) {
      // right after a restart any JetStream request may time out: ask again
      const info = await retryOnTimeout(async () => (await jetstreamManager(nc)).streams.info('REZOLUS')).catch(() => undefined);
      const replicas = info?.cluster?.replicas ?? [];
      if (info?.cluster?.leader !== undefined && replicas.length === 2 && replicas.every((r) => r.current)) return info.cluster.leader;
      await sleep(200);
    }
    throw new Error('the stream has no leader with two current replicas after 20 s');
  } finally {
    await nc.close();
  }
}

async function failover(): Promise<void> {
  const cluster = await startCluster();
  try {
    await sleep(2000);
    const config = loadAgentConfig(undefined, SAMPLER_NAMES, { host: 'bench-failover', natsUrl: cluster.url, intervalMs: 100 });
    const agent = await runAgent(
      { ...config, procfs: PROC, sysfs: SYS, kernel: NO_KERNEL, http: undefined, stream: { ...config.stream, replicas: 3 } },
      silentLogger(),
    );
    const stats = agent.publisher.stats;
    await sleep(3000);
    const perTick = agent.agent.status().filter((s) => s.seq > 0).length;
    say(`part 1: agent at 10 Hz with ${perTick} samplers (${perTick * 10} frames/s) on a 3-node cluster, stream R3`);
    say('kill | leader | stall s | catch-up s | max buffered frames | retries');
    const stalls: number[] = [];
    const catchups: number[] = [];
    for (let k = 1; k <= KILLS; k++) {
      const leader = await leaderOf(cluster);
      const retries0 = stats.retries;
      const killedAt = Date.now();
      await cluster.kill(leader);
      let lastAck = killedAt;
      let lastPublished = stats.published;
      let stall = 0;
      let caughtUp: number | undefined;
      let maxBuffered = 0;
      while (Date.now() - killedAt < 30_000) {
        await sleep(20);
        const now = Date.now();
        if (stats.published !== lastPublished) {
          stall = Math.max(stall, now - lastAck);
          lastAck = now;
          lastPublished = stats.published;
        }
        maxBuffered = Math.max(maxBuffered, stats.buffered);
        if (caughtUp === undefined && now - killedAt > 200 && maxBuffered > perTick && stats.buffered <= perTick) caughtUp = now - killedAt;
        if (caughtUp !== undefined && now - killedAt > caughtUp + 1000) break;
      }
      stalls.push(stall / 1000);
      catchups.push((caughtUp ?? Number.NaN) / 1000);
      say(`${k} | ${leader} | ${fmt(stall / 1000)} | ${fmt((caughtUp ?? Number.NaN) / 1000)} | ${maxBuffered} | ${stats.retries - retries0}`);
      await cluster.restart(leader);
      await leaderOf(cluster);
    }
    await agent.stop();
    say(`stall median ${fmt(median(stalls))} s, catch-up median ${fmt(median(catchups))} s; dropped ${stats.dropped}, acked as duplicates ${stats.duplicates}`);
  } finally {
    await cluster.dispose();
  }
}

function median(xs: readonly number[]): number {
  const s = [...xs].sort((a, b) => a - b);
  return s.length === 0 ? Number.NaN : (s[Math.floor((s.length - 1) / 2)] as number);
}

async function fullBuffer(): Promise<void> {
  ensureBuilt();
  const dir = mkdtempSync(join(tmpdir(), 'rezolus-bench-buffer-'));
  const server = await startNatsServer({ binary: NATS_SERVER_BIN, port: 0, dataDir: join(dir, 'nats') });
  const httpPort = 40000 + Math.floor(Math.random() * 20000);
  const config = join(dir, 'agent.toml');
  writeFileSync(
    config,
    [
      '[general]', `procfs = ${JSON.stringify(PROC)}`, `sysfs = ${JSON.stringify(SYS)}`,
      '[kernel]', 'enabled = false',
      '[defaults]', 'interval = "10ms"',
      '[buffer]', `max_bytes = "${BUFFER_MIB}MiB"`,
      '[http]', `listen = "127.0.0.1:${httpPort}"`,
    ].join('\n'),
  );
  const child = spawn(process.execPath, [ENTRY, 'agent', '--config', config, '--nats', server.url, '--host', 'bench-buffer', '--log-level', 'error'], {
    stdio: ['ignore', 'ignore', 'pipe'],
  });
  const tail = stderrTail(child);
  try {
    await sleep(8000);
    const before = memKiB(child.pid ?? 0);
    const f0 = await selfFigures(httpPort);
    say(`part 2: agent process at 10 ms, buffer ${BUFFER_MIB} MiB; before the outage RSS ${fmt(before.rss / 1024, 1)} MiB, buffered ${f0.rezolus_publish_buffered ?? '?'}`);
    server.process.kill('SIGKILL');
    const killedAt = Date.now();
    let f: Record<string, number> = {};
    while (Date.now() - killedAt < 240_000) {
      await sleep(1000);
      f = await selfFigures(httpPort);
      if ((f.rezolus_publish_dropped ?? 0) > 0) break;
    }
    if ((f.rezolus_publish_dropped ?? 0) === 0) throw new Error(`the buffer did not fill in 240 s: ${JSON.stringify(f)} ${tail()}`);
    const filledS = (Date.now() - killedAt) / 1000;
    await sleep(10_000); // full and dropping for a while
    f = await selfFigures(httpPort);
    const full = memKiB(child.pid ?? 0);
    const bufferedMiB = (f.rezolus_publish_buffered_size ?? Number.NaN) / 1048576;
    const growthMiB = (full.rss - before.rss) / 1024;
    say(`full after ${fmt(filledS, 0)} s: ${f.rezolus_publish_buffered} frames, ${fmt(bufferedMiB, 1)} MiB buffered, ${f.rezolus_publish_dropped} dropped`);
    say(`RSS at full buffer ${fmt(full.rss / 1024, 1)} MiB (peak ${fmt(full.hwm / 1024, 1)}): +${fmt(growthMiB, 1)} MiB for ${fmt(bufferedMiB, 1)} MiB of frames = ${fmt(growthMiB / bufferedMiB)}× the buffer bound`);
  } finally {
    await stopChild(child, 3000);
    await server.stop().catch(() => undefined);
    rmSync(dir, { recursive: true, force: true });
  }
}

const parts = args.includes('--only-buffer') ? [fullBuffer] : args.includes('--only-failover') ? [failover] : [failover, fullBuffer];
try {
  for (const part of parts) await part();
} finally {
  clearTimeout(watchdog);
}
