/**
 * What the live viewer costs with a fleet: N simulated hosts (default 100,
 * every procfs sampler of the registry on the fixture root, as SimFleet
 * publishes them) at 1 Hz into a private nats-server, and `rezolus view`
 * (the compiled CLI, a process of its own) following them.
 *
 *  1. The window first: --window-minutes of ticks published at once (their
 *     frames' times in the past), so the viewer's window is full from the
 *     start; the viewer's --window is set to that.
 *  2. Then live at 1 Hz for --seconds, with --open host pages open (their
 *     queries asked every second, as the page does): viewer RSS and CPU, and
 *     the delay from a tick's publish to the fleet page (GET /api/v1/hosts)
 *     showing it: p50 and max over the ticks.
 *
 * Targets (issue 16): RSS ≤ 300 MB with the window full, a frame on screen
 * ≤ 2 s after it was published. A measurement, not a test: prints the
 * figures with the CPU model and exits 0 when a target is missed.
 *
 *   npx tsx test/bench/viewer-live.ts                      # 100 hosts, about 4 min
 *   npx tsx test/bench/viewer-live.ts --hosts 20 --window-minutes 2 --seconds 20
 */
import { spawn } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import { loadAgentConfig } from '../../src/config/agent.js';
import { SAMPLER_NAMES } from '../../src/samplers/registry.js';
import { freePort, startNatsServer } from '../../src/up/nats-server.js';
import type { HostSummary } from '../../src/viewer/api.js';
import { SimFleet } from '../helpers/sim-fleet.js';
import { CLK_TCK, ENTRY, NATS_SERVER_BIN, cpuTicks, ensureBuilt, fmt, memKiB, say, sleep, sleepUntil, stderrTail, stopChild } from './common.js';

const { values: args } = parseArgs({
  options: {
    hosts: { type: 'string', default: '100' },
    'window-minutes': { type: 'string', default: '15' },
    seconds: { type: 'string', default: '60' },
    open: { type: 'string', default: '3' },
  },
});
const HOSTS = Number(args.hosts);
const WINDOW_MIN = Number(args['window-minutes']);
const SECONDS = Number(args.seconds);
const OPEN = Number(args.open);

const cpuModel = /model name\s*:\s*(.*)/.exec(readFileSync('/proc/cpuinfo', 'utf8'))?.[1] ?? 'unknown CPU';

async function json<T>(url: string): Promise<T> {
  const r = await fetch(url);
  if (!r.ok) throw new Error(`${url}: ${r.status} ${await r.text()}`);
  return (await r.json()) as T;
}

async function main(): Promise<void> {
  ensureBuilt();
  const dir = mkdtempSync(join(tmpdir(), 'rezolus-bench-view-'));
  const server = await startNatsServer({ binary: NATS_SERVER_BIN, port: 0, dataDir: join(dir, 'nats') });
  let viewer: ReturnType<typeof spawn> | undefined;
  try {
    say(`viewer live: ${HOSTS} hosts at 1 Hz, window ${WINDOW_MIN} min, ${OPEN} host pages open, ${SECONDS} s live; ${cpuModel}, ${String(readFileSync('/proc/cpuinfo', 'utf8').match(/^processor/gm)?.length)} CPUs`);
    const ticks = WINDOW_MIN * 60;
    const agent = loadAgentConfig(undefined, SAMPLER_NAMES, { host: 'bench', natsUrl: server.url });
    const startNs = BigInt(Date.now() - ticks * 1000) * 1_000_000n;
    const fleet = await SimFleet.start({ natsUrl: server.url, hosts: HOSTS, agent, startNs });
    const began = Date.now();
    let frames = 0;
    for (let tick = 1; tick <= ticks; tick++) frames += await fleet.publishTick(tick);
    say(`  window: ${frames} frames (${fleet.samplers.length} samplers per host) published in ${fmt((Date.now() - began) / 1000, 1)} s`);

    const port = await freePort();
    viewer = spawn(process.execPath, [ENTRY, 'view', '--nats', server.url, '--listen', `127.0.0.1:${port}`, '--window', `${WINDOW_MIN + 1}m`, '--log-level', 'warn'], { stdio: ['ignore', 'ignore', 'pipe'] });
    const tail = stderrTail(viewer);
    const base = `http://127.0.0.1:${port}`;
    const pid = viewer.pid as number;
    const startedAt = Date.now();
    // the fleet page fills from the stream's last half minute and then live
    for (;;) {
      if (viewer.exitCode !== null) throw new Error(`the viewer exited: ${tail()}`);
      const hosts = await json<HostSummary[]>(`${base}/api/v1/hosts`).catch(() => []);
      if (hosts.length === HOSTS) break;
      if (Date.now() - startedAt > 120_000) throw new Error(`the fleet page lists ${hosts.length} of ${HOSTS} hosts after 2 min`);
      await sleep(200);
    }
    say(`  fleet page with every host ${fmt((Date.now() - startedAt) / 1000, 1)} s after the viewer started`);
    const open = fleet.hosts.slice(0, OPEN);
    const opened = Date.now();
    for (const h of open) await json(`${base}/api/v1/sections?host=${h}`);
    say(`  ${OPEN} host pages opened (each host's window replayed from the stream) in ${fmt((Date.now() - opened) / 1000, 1)} s; RSS ${fmt(memKiB(pid).rss / 1024, 0)} MiB`);

    const cpu0 = cpuTicks(pid);
    const t0 = Date.now();
    const delays: number[] = [];
    const liveStart = Date.now();
    for (let s = 1; s <= SECONDS; s++) {
      await sleepUntil(liveStart + s * 1000);
      const tick = ticks + s;
      // live ticks end now (the sim's clock is shifted so tick `ticks` ended when publishing began)
      await fleet.publishTick(tick);
      const published = Date.now();
      const wantMs = Number(fleet.endNs(tick) / 1_000_000n);
      const probe = fleet.hosts[s % HOSTS] as string;
      for (;;) {
        const hosts = await json<HostSummary[]>(`${base}/api/v1/hosts`);
        if ((hosts.find((h) => h.host === probe)?.lastMs ?? 0) >= wantMs) break;
        if (Date.now() - published > 10_000) break;
        await sleep(20);
      }
      delays.push(Date.now() - published);
      for (const h of open) {
        await json(`${base}/api/v1/query?host=${h}&metric=cpu_usage&fn=rate&budget=600&start=${Date.now() - WINDOW_MIN * 60_000}&end=${Date.now()}`);
      }
    }
    const cpuS = (cpuTicks(pid) - cpu0) / CLK_TCK;
    const wall = (Date.now() - t0) / 1000;
    const mem = memKiB(pid);
    delays.sort((a, b) => a - b);
    say(`  live: viewer CPU ${fmt((100 * cpuS) / wall, 1)} % of a core; RSS ${fmt(mem.rss / 1024, 0)} MiB (peak ${fmt(mem.hwm / 1024, 0)} MiB)`);
    say(`  publish → fleet page: p50 ${delays[Math.floor(delays.length / 2)]} ms, max ${delays[delays.length - 1]} ms over ${delays.length} ticks`);
    if (mem.hwm / 1024 > 300) say(`  TARGET MISSED: peak RSS ${fmt(mem.hwm / 1024, 0)} MiB > 300 MB`);
    if ((delays[delays.length - 1] ?? 0) > 2000) say('  TARGET MISSED: a frame took more than 2 s to reach the page');
    await fleet.close();
  } finally {
    await stopChild(viewer);
    await server.stop();
    rmSync(dir, { recursive: true, force: true });
  }
}

main().then(
  () => process.exit(0),
  (error: unknown) => {
    say(`bench failed: ${error instanceof Error ? (error.stack ?? error.message) : String(error)}`);
    process.exit(1);
  },
);
