/**
 * How the agent's cost grows with the CPU count. The procfs samplers read a
 * generated fixture root for each size (test/fixtures/rootfs with /proc/stat
 * and /sys/devices/system/cpu rewritten for N CPUs, cpu-fixture.ts), measured
 * two ways:
 *
 * 1. in process, hot: µs of CPU per refresh + encode of each per-CPU sampler
 *    and of a whole tick of the 9 procfs samplers (Agent.tickOnce, no bus),
 *    series and bytes of the cpu_usage frame;
 * 2. as processes, every size at once in one window: a compiled agent per
 *    size (the 9 procfs samplers at 1 s, [kernel] off, --procfs/--sysfs on
 *    that size's root) and, as the peer, a node_exporter per size with
 *    --path.procfs/--path.sysfs on the same root, scraped once a second.
 *
 *   npx tsx test/bench/cpu-scaling.ts                  # 2,64,256 CPUs, 60 s window
 *   npx tsx test/bench/cpu-scaling.ts --cpus 2,1024 --seconds 30
 *
 * The BPF samplers cannot run on a fixture: their per-CPU banks are sized at
 * load to the possible CPUs (see the README's "agent cost (issue 19)" for the
 * sizes this prints). A measurement, not a test: exits 0.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { randomInt } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import { jetstreamManager } from '@nats-io/jetstream';
import { connect } from '@nats-io/transport-node';
import { Agent, type FrameSink } from '../../src/agent/agent.js';
import { encodeFrame } from '../../src/frame/codec.js';
import { silentLogger } from '../../src/log/logger.js';
import { SAMPLERS } from '../../src/samplers/registry.js';
import type { PublishStats } from '../../src/samplers/rezolus/introspection.js';
import type { SamplerDefinition } from '../../src/samplers/types.js';
import { freePort, startNatsServer, type NatsServer } from '../../src/up/nats-server.js';
import { writeCpuFixture } from './cpu-fixture.js';
import {
  alive, CLK_TCK, cpuModel, cpuTicks, ENTRY, ensureBuilt, fmt, hostSubjectCounts, memKiB, NATS_SERVER_BIN, PROCFS_SAMPLERS, ROOT, say,
  sleep, sleepUntil, spawnAgent, stderrTail, stopChild, waitFor, writeAgentConfig,
} from './common.js';

const NODE_EXPORTER_BIN = '/usr/bin/prometheus-node-exporter';
const { values: flags } = parseArgs({ options: { cpus: { type: 'string' }, seconds: { type: 'string' }, warmup: { type: 'string' } } });
const SIZES = (flags.cpus ?? '2,64,256').split(',').map(Number);
const SECONDS = Number(flags.seconds ?? 60);
const WARMUP_S = Number(flags.warmup ?? 15);
if (!SIZES.every((n) => Number.isInteger(n) && n >= 1 && n <= 4096) || !(SECONDS >= 5) || !(WARMUP_S >= 2)) {
  process.stderr.write('usage: npx tsx test/bench/cpu-scaling.ts [--cpus 2,64,256] [--seconds S=60] [--warmup S=15]\n');
  process.exit(2);
}
/** the samplers whose work grows with the CPU count (the others read files of fixed size) */
const PER_CPU = ['cpu_usage', 'cpu_cores'];
const HOT_TICKS = 300;

class DropSink implements FrameSink {
  frames = 0;
  bytes = new Map<string, number>();
  get stats(): PublishStats {
    return { published: this.frames, dropped: 0, retries: 0, buffered: 0, bufferedBytes: 0 };
  }
  publishFrame(subject: string, data: Uint8Array): void {
    this.frames++;
    this.bytes.set(subject.split('.').pop() as string, data.byteLength);
  }
  putDescriptor(): void {}
}

const cpuUs = (f: () => Promise<unknown>, runs: number): Promise<number> =>
  (async () => {
    for (let i = 0; i < 20; i++) await f();
    const c0 = process.cpuUsage();
    for (let i = 0; i < runs; i++) await f();
    const c = process.cpuUsage(c0);
    return (c.user + c.system) / runs;
  })();

interface InProcess {
  readonly cpus: number;
  readonly perSampler: Map<string, { us: number; series: number }>;
  readonly tickUs: number;
  readonly usageBytes: number;
}

async function inProcess(cpus: number, root: string): Promise<InProcess> {
  const log = silentLogger();
  const ctx = { procRoot: join(root, 'proc'), sysRoot: join(root, 'sys'), log };
  const perSampler = new Map<string, { us: number; series: number }>();
  for (const name of PER_CPU) {
    const def = SAMPLERS.find((s) => s.name === name) as SamplerDefinition;
    const sampler = await def.init(ctx);
    let series = 0;
    let seq = 0;
    const us = await cpuUs(async () => {
      const r = await sampler.refresh();
      series = r.points.length;
      encodeFrame({ host: 'bench', sampler: name, instance: 1, seq: ++seq, beginNs: 0n, endNs: 1n, descriptor: 'x' }, r.points.map((p) => p.value));
    }, 2000);
    perSampler.set(name, { us, series });
    await sampler.close?.();
  }
  const sink = new DropSink();
  const agent = new Agent({
    host: 'bench',
    instance: randomInt(1, 2 ** 32 - 1),
    samplers: SAMPLERS.map((definition) => ({ definition, enabled: PROCFS_SAMPLERS.includes(definition.name), intervalMs: 86_400_000 })),
    context: ctx,
    sink,
    descriptorTtlMs: 86_400_000,
    log,
  });
  await agent.start();
  const tickUs = await cpuUs(() => agent.tickOnce(), HOT_TICKS);
  await agent.stop();
  return { cpus, perSampler, tickUs, usageBytes: sink.bytes.get('cpu_usage') ?? 0 };
}

/** Bytes of the per-CPU BPF maps of each BPF sampler at `cpus` possible CPUs (sizes set at load, kernel/load.ts). */
function bpfBanks(cpus: number): { sampler: string; bytes: number }[] {
  const out: { sampler: string; bytes: number }[] = [];
  for (const s of SAMPLERS) {
    let bytes = 0;
    for (const layout of s.layouts ?? []) {
      for (const m of Object.values(layout.maps)) {
        if (m.kind === 'counters') bytes += m.width * 8 * cpus;
        else if (m.kind === 'per-cpu') bytes += m.valueSize * cpus;
      }
    }
    if (bytes > 0) out.push({ sampler: s.name, bytes });
  }
  return out;
}

interface Pair {
  readonly cpus: number;
  readonly root: string;
  agent?: ChildProcess;
  agentLog?: () => string;
  exporter?: ChildProcess;
  url?: string;
}

const dir = mkdtempSync(join(tmpdir(), 'rezolus-cpu-scaling-'));
const pairs: Pair[] = SIZES.map((cpus) => ({ cpus, root: join(dir, `cpus-${cpus}`) }));
let nats: NatsServer | undefined;
const stopAll = async (): Promise<void> => {
  await Promise.all(pairs.flatMap((p) => [stopChild(p.agent), stopChild(p.exporter)]));
  await nats?.stop().catch(() => undefined);
  rmSync(dir, { recursive: true, force: true });
};
process.once('SIGINT', () => void stopAll().then(() => process.exit(130)));
const watchdog = setTimeout(() => {
  process.stderr.write('cpu-scaling: watchdog expired, cleaning up\n');
  void stopAll().finally(() => process.exit(1));
}, (SECONDS + WARMUP_S + 240) * 1000);
watchdog.unref();

try {
  ensureBuilt();
  say(`CPU: ${cpuModel()}; node ${process.version}`);
  for (const p of pairs) writeCpuFixture(join(ROOT, 'test', 'fixtures', 'rootfs'), p.root, p.cpus);

  say('\n1. in process, JIT-warm, CPU µs per refresh + encode (no bus)');
  // Two passes over the sizes, the second one kept: the first warms the JIT for all of them alike.
  let hot: InProcess[] = [];
  for (let pass = 0; pass < 2; pass++) {
    hot = [];
    for (const p of pairs) hot.push(await inProcess(p.cpus, p.root));
  }
  say(`  ${'CPUs'.padStart(5)}  ${PER_CPU.map((n) => `${n} µs (series)`.padStart(24)).join('')}  ${'9 procfs samplers µs/tick'.padStart(26)}  ${'cpu_usage frame B'.padStart(18)}`);
  for (const h of hot) {
    const cells = PER_CPU.map((n) => {
      const x = h.perSampler.get(n) as { us: number; series: number };
      return `${fmt(x.us, 1)} (${x.series})`.padStart(24);
    });
    say(`  ${String(h.cpus).padStart(5)}  ${cells.join('')}  ${fmt(h.tickUs, 1).padStart(26)}  ${String(h.usageBytes).padStart(18)}`);
  }

  say('\n   BPF per-CPU banks (counters width x 8 B x possible CPUs, per-cpu maps; sized at load), KiB:');
  const banks = SIZES.map((n) => bpfBanks(n));
  for (const [i, b] of (banks[0] ?? []).entries()) {
    say(`  ${b.sampler.padEnd(22)} ${banks.map((x, j) => `${SIZES[j]}: ${fmt((x[i]?.bytes ?? 0) / 1024, 1)}`.padStart(14)).join('')}`);
  }
  say(`  ${'total'.padEnd(22)} ${banks.map((x, j) => `${SIZES[j]}: ${fmt(x.reduce((s, y) => s + y.bytes, 0) / 1024, 1)}`.padStart(14)).join('')}`);

  say(`\n2. processes, every size at once: agent (9 procfs samplers, 1 s) and node_exporter (--path.procfs/--path.sysfs) on each root`);
  nats = await startNatsServer({ binary: NATS_SERVER_BIN, port: 0, dataDir: join(dir, 'nats') });
  for (const p of pairs) {
    const host = `cpus${p.cpus}`;
    const config = writeAgentConfig(join(dir, `${host}.toml`), ROOT, { samplers: new Map(PROCFS_SAMPLERS.map((n) => [n, '1s'])), kernel: false });
    p.agent = spawnAgent({ entry: ENTRY, natsUrl: nats.url, host, config, extraArgs: ['--procfs', join(p.root, 'proc'), '--sysfs', join(p.root, 'sys')] });
    p.agentLog = stderrTail(p.agent);
    const port = await freePort();
    p.exporter = spawn(
      NODE_EXPORTER_BIN,
      [`--web.listen-address=127.0.0.1:${port}`, `--path.procfs=${join(p.root, 'proc')}`, `--path.sysfs=${join(p.root, 'sys')}`, `--path.rootfs=${p.root}`],
      { stdio: 'ignore' },
    );
    p.url = `http://127.0.0.1:${port}/metrics`;
  }
  const nc = await connect({ servers: nats.url });
  const jsm = await jetstreamManager(nc);
  const failed = (): string | undefined => {
    for (const p of pairs) {
      if (!alive(p.agent as ChildProcess)) return `agent on ${p.cpus} CPUs exited: ${p.agentLog?.()}`;
      if (!alive(p.exporter as ChildProcess)) return `node_exporter on ${p.cpus} CPUs exited`;
    }
    return undefined;
  };
  for (const p of pairs) {
    await waitFor(`agent on ${p.cpus} CPUs`, 30_000, async () => (await hostSubjectCounts(jsm, `cpus${p.cpus}`)).size > 0, failed);
    await waitFor(`node_exporter on ${p.cpus} CPUs`, 10_000, async () => (await fetch(p.url as string)).ok, failed);
  }
  const S = Math.ceil(Date.now() / 1000) * 1000 + 1000;
  const tA = S + WARMUP_S * 1000 + 550;
  const tB = tA + SECONDS * 1000;
  const scrapes = new Map<number, number>(pairs.map((p) => [p.cpus, 0]));
  const neBytes = new Map<number, number>();
  const scraper = (async () => {
    for (let k = 0; ; k++) {
      const at = S + k * 1000 + 250;
      if (at > tB) return;
      await sleepUntil(at);
      await Promise.all(
        pairs.map(async (p) => {
          const body = await (await fetch(p.url as string, { signal: AbortSignal.timeout(5000) })).text().catch(() => '');
          if (at > tA && body !== '') {
            scrapes.set(p.cpus, (scrapes.get(p.cpus) ?? 0) + 1);
            neBytes.set(p.cpus, body.length);
          }
        }),
      );
    }
  })();
  const frames = async (p: Pair): Promise<number> => {
    const m = await hostSubjectCounts(jsm, `cpus${p.cpus}`);
    const n = [...m.values()].sort((a, b) => a - b);
    return n[Math.floor(n.length / 2)] ?? 0;
  };
  const reading = async (): Promise<{ agent: number; exporter: number; ticks: number }[]> =>
    Promise.all(pairs.map(async (p) => ({ agent: cpuTicks(p.agent?.pid as number), exporter: cpuTicks(p.exporter?.pid as number), ticks: await frames(p) })));
  await sleepUntil(tA);
  const a = await reading();
  while (Date.now() < tB) {
    const f = failed();
    if (f !== undefined) throw new Error(f);
    await sleep(Math.min(1000, tB - Date.now()));
  }
  const b = await reading();
  await scraper;
  await nc.close();
  say(`  window ${SECONDS} s after ${WARMUP_S} s warm-up; CPU from /proc/<pid>/stat (${CLK_TCK} ticks/s)`);
  say(`  ${'CPUs'.padStart(5)}  ${'agent ms/tick'.padStart(14)}  ${'node_exporter ms/scrape'.padStart(24)}  ${'ratio'.padStart(6)}  ${'agent RSS MiB'.padStart(14)}  ${'ticks / scrapes'.padStart(16)}  ${'scrape KiB'.padStart(10)}`);
  pairs.forEach((p, i) => {
    const x = a[i] as { agent: number; exporter: number; ticks: number };
    const y = b[i] as { agent: number; exporter: number; ticks: number };
    const ticks = y.ticks - x.ticks;
    const n = scrapes.get(p.cpus) ?? 0;
    const agentMs = ((y.agent - x.agent) * 1000) / CLK_TCK / ticks;
    const neMs = ((y.exporter - x.exporter) * 1000) / CLK_TCK / n;
    say(
      `  ${String(p.cpus).padStart(5)}  ${fmt(agentMs, 2).padStart(14)}  ${fmt(neMs, 2).padStart(24)}  ${fmt(agentMs / neMs, 2).padStart(6)}  ` +
        `${fmt(memKiB(p.agent?.pid as number).rss / 1024, 1).padStart(14)}  ${`${ticks} / ${n}`.padStart(16)}  ${fmt((neBytes.get(p.cpus) ?? 0) / 1024, 0).padStart(10)}`,
    );
  });
} catch (error) {
  process.stderr.write(`cpu-scaling failed: ${error instanceof Error ? error.message : String(error)}\n`);
} finally {
  await stopAll();
}
process.exit(0);
