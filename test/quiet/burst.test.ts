/**
 * The oversampling view on this very machine: the agent samples /proc at
 * 100 ms, the exporter interval is 15 s. A 300 ms CPU burst on one core and
 * a loopback transfer burst must stand out in p100 of the per-sample rate
 * while the 15 s average (what rate() over two scrapes gives) hides them.
 * Runs in the quiet suite (alone), pinned away from the burst CPU.
 */
import test from 'ava';
import { spawn, spawnSync } from 'node:child_process';
import { once } from 'node:events';
import { createServer, connect as tcpConnect, type AddressInfo } from 'node:net';
import { cpus } from 'node:os';
import { runAgent, type RunningAgent } from '../../src/agent/main.js';
import { loadAgentConfig } from '../../src/config/agent.js';
import { loadExporterConfig } from '../../src/config/exporter.js';
import { runExporter, type RunningExporter } from '../../src/exporter/main.js';
import { silentLogger } from '../../src/log/logger.js';
import { SAMPLER_NAMES } from '../../src/samplers/registry.js';
import { readFileSync } from 'node:fs';
import { parseCpuStat } from '../../src/samplers/cpu/usage/parse.js';
import { checkExposition } from '../helpers/exposition-check.js';
import { startTestNats, type TestNats } from '../helpers/nats.js';

const INTERVAL_MS = 15_000;
/** chosen in before(): the least busy CPU */
let BURST_CPU = cpus().length - 1;

let server: TestNats;
let agent: RunningAgent;
let exporter: RunningExporter;

async function scrape(): Promise<{ text: string; atMs: number }> {
  const atMs = Date.now();
  const r = await exporter.app.inject({ method: 'GET', url: '/metrics' });
  return { text: r.body, atMs };
}

/** The value of the one sample line starting with `series` (family and labels up to the closing brace). */
function value(text: string, series: string): number {
  const line = text.split('\n').find((l) => l.startsWith(`${series} `));
  if (line === undefined) throw new Error(`no series ${series}`);
  return Number(line.slice(series.length + 1));
}

/** Spins one core at 100 % for `ms`, in a child pinned to `cpu`. */
async function cpuBurst(cpu: number, ms: number): Promise<void> {
  const child = spawn('taskset', ['-c', String(cpu), process.execPath, '-e', `const end = Date.now() + ${ms}; while (Date.now() < end);`], {
    stdio: 'ignore',
  });
  const [code] = (await once(child, 'exit')) as [number | null];
  if (code !== 0) throw new Error(`burst child exited with ${code}`);
}

/** Sends `bytes` over a loopback TCP connection as fast as it goes; resolves with the duration in ms. */
async function loopbackBurst(bytes: number): Promise<number> {
  let received = 0;
  let done!: () => void;
  const finished = new Promise<void>((r) => (done = r));
  const srv = createServer((sock) => {
    sock.on('data', (b: Buffer) => {
      received += b.length;
      if (received >= bytes) done();
    });
  });
  srv.listen(0, '127.0.0.1');
  await once(srv, 'listening');
  const sock = tcpConnect((srv.address() as AddressInfo).port, '127.0.0.1');
  await once(sock, 'connect');
  const chunk = Buffer.alloc(1 << 20, 7);
  const start = performance.now();
  for (let sent = 0; sent < bytes; sent += chunk.length) {
    if (!sock.write(chunk)) await once(sock, 'drain');
  }
  await finished;
  const ms = performance.now() - start;
  sock.destroy();
  srv.close();
  return ms;
}

/** Busy ticks (all but idle and iowait) per CPU id. */
function busyTicks(): Map<number, number> {
  const out = new Map<number, number>();
  for (const c of parseCpuStat(readFileSync('/proc/stat', 'utf8')).cpus) {
    out.set(c.id, c.ticks.reduce<number>((sum, v, i) => (i === 3 || i === 4 ? sum : sum + Number(v)), 0));
  }
  return out;
}

/** The CPU that was least busy over the last `ms`. */
async function quietestCpu(ms: number): Promise<number> {
  const a = busyTicks();
  await new Promise((r) => setTimeout(r, ms));
  const b = busyTicks();
  let best = BURST_CPU;
  let least = Number.POSITIVE_INFINITY;
  for (const [id, ticks] of b) {
    const d = ticks - (a.get(id) ?? 0);
    if (d < least) [best, least] = [id, d];
  }
  return best;
}

test.before(async () => {
  // burst on the quietest CPU and keep this process (agent, exporter, loopback sender) off it
  BURST_CPU = await quietestCpu(1000);
  const others = [...busyTicks().keys()].filter((id) => id !== BURST_CPU);
  if (others.length > 0) spawnSync('taskset', ['-a', '-p', '-c', others.join(','), String(process.pid)], { stdio: 'ignore' });
  server = await startTestNats();
  const base = loadAgentConfig(undefined, SAMPLER_NAMES, { host: 'burst', natsUrl: server.url });
  const samplers = Object.fromEntries(SAMPLER_NAMES.map((n) => [n, { enabled: n === 'cpu_usage' || n === 'network_interfaces', intervalMs: 100 }]));
  agent = await runAgent({ ...base, samplers }, silentLogger());
  exporter = await runExporter(
    loadExporterConfig(undefined, { natsUrl: server.url, listen: { host: '127.0.0.1', port: 0 }, hosts: 'burst', intervalMs: INTERVAL_MS }),
    silentLogger(),
  );
  const deadline = Date.now() + 10_000;
  while (exporter.state.size < 2 && Date.now() < deadline) await new Promise((r) => setTimeout(r, 100));
  if (exporter.state.size < 2) throw new Error('the exporter did not receive both samplers');
});

test.after.always(async () => {
  await exporter?.stop();
  await agent?.stop();
  await server?.dispose();
});

test('a 300 ms CPU burst and a loopback burst show in p100 of the per-sample rate, not in the 15 s average', async (t) => {
  const user = `cpu_usage_seconds_total{host="burst",state="user",id="${BURST_CPU}"}`;
  const userRate = `cpu_usage_seconds_rate{host="burst",state="user",id="${BURST_CPU}",percentile="1"}`;
  const userP50 = `cpu_usage_seconds_rate{host="burst",state="user",id="${BURST_CPU}",percentile="0.5"}`;
  const lo = 'network_device_bytes_total{host="burst",device="lo",direction="receive"}';
  const loRate = 'network_device_bytes_rate{host="burst",device="lo",direction="receive",percentile="1"}';

  const s0 = await scrape();
  await new Promise((r) => setTimeout(r, 3000));
  await cpuBurst(BURST_CPU, 300);
  await new Promise((r) => setTimeout(r, 3000));
  const bytes = 256 << 20;
  const burstMs = await loopbackBurst(bytes);
  const wait = s0.atMs + INTERVAL_MS - Date.now();
  t.true(wait > 1000, `the bursts took too long (${wait} ms left of the interval)`);
  await new Promise((r) => setTimeout(r, wait));
  const s1 = await scrape();
  t.deepEqual(checkExposition(s1.text), []);

  const seconds = (s1.atMs - s0.atMs) / 1000;
  const cpuAvg = (value(s1.text, user) - value(s0.text, user)) / seconds;
  const cpuMax = value(s1.text, userRate);
  const cpuP50 = value(s1.text, userP50);
  t.log(`CPU ${BURST_CPU} user: 15 s average ${(cpuAvg * 100).toFixed(1)} %, p50 ${(cpuP50 * 100).toFixed(1)} %, p100 ${(cpuMax * 100).toFixed(1)} %`);
  t.true(cpuMax >= 0.8, `p100 ${cpuMax} should show the burst at ≥ 80 % of a core`);
  if (cpuP50 >= 0.5) {
    // Every CPU was kept busy by other processes (two busy loops on two cores give p50 100 %): a 300 ms
    // burst cannot stand out of a saturated CPU, so only the order of the figures is checked here.
    t.log(`CPU ${BURST_CPU} was busy with other processes for most of the interval: the burst cannot stand out, the CPU half is not measurable`);
    t.true(cpuMax >= cpuP50, `p100 ${cpuMax} is at least p50 ${cpuP50}`);
  } else {
    // relative, not absolute: other processes on a busy machine raise the average on every CPU (23 % seen
    // with two test runs beside this one, 39 % with bursty tests beside it: p50 20 %), while the 300 ms burst
    // alone adds only ~2 % to it; p100 stands well above the average, a third of a core at least
    t.true(cpuMax - cpuAvg >= 0.35, `the 15 s average ${cpuAvg} should hide the burst (p100 ${cpuMax} at least 0.35 of a core above it)`);
  }

  const netAvg = (value(s1.text, lo) - value(s0.text, lo)) / seconds;
  const netMax = value(s1.text, loRate);
  const burstRate = bytes / (Math.max(burstMs, 200) / 1000);
  t.log(`lo receive: ${bytes} B in ${burstMs.toFixed(0)} ms; 15 s average ${(netAvg / 1e6).toFixed(1)} MB/s, p100 ${(netMax / 1e6).toFixed(1)} MB/s`);
  // a burst of up to 200 ms spans at most three 100 ms samples, so one of them carries ≥ 1/3 of it
  t.true(netMax >= 0.4 * burstRate, `p100 ${netMax} B/s should be near the burst rate ${burstRate} B/s`);
  t.true(netMax >= 5 * netAvg, `p100 ${netMax} B/s should stand far above the 15 s average ${netAvg} B/s`);
  t.true(netAvg * seconds >= bytes, 'the raw counter counted the whole transfer');
});
