/**
 * Wire size of the agent's frames against the LIVE /proc and /sys, in process
 * (no NATS): an Agent with every registry sampler and a sink that keeps what it
 * is given, three ticks about a second apart, then per sampler the series count,
 * the size of the last frame, bytes per series and the mean refresh time.
 *
 * Target: at most 12 bytes per series per tick in steady state (the last tick,
 * all frames together).
 *
 *   npx tsx test/bench/frame-bytes.ts
 *
 * A measurement, not a test: it exits 0 when a target is missed and says so.
 */
import { randomInt } from 'node:crypto';
import { Agent, type FrameSink, type SamplerStatus } from '../../src/agent/agent.js';
import { decodeFrame, encodeFrame } from '../../src/frame/codec.js';
import { silentLogger } from '../../src/log/logger.js';
import { SAMPLERS } from '../../src/samplers/registry.js';
import type { AgentIntrospection, PublishStats } from '../../src/samplers/rezolus/introspection.js';
import type { Sampler } from '../../src/samplers/types.js';

const TICKS = 3;
const PAUSE_MS = 1000;
const TARGET_BYTES_PER_SERIES = 12;
/** serial refreshes per sampler for the isolated timing */
const ISOLATED_RUNS = 25;
/**
 * The scheduler inside Agent.start() is given a one-day interval so its own
 * wall-clock ticks never fire during the run: every frame here comes from tickOnce().
 */
const NEVER_MS = 86_400_000;
/** back-to-back ticks for the CPU-per-tick figure without a bus */
const HOT_TICKS = 200;

interface Sent {
  readonly subject: string;
  readonly bytes: number;
  readonly data: Uint8Array;
}

class CollectingSink implements FrameSink {
  readonly frames: Sent[] = [];
  readonly descriptors = new Map<string, number>();
  get stats(): PublishStats {
    return { published: this.frames.length, dropped: 0, retries: 0, buffered: 0, bufferedBytes: 0 };
  }
  publishFrame(subject: string, data: Uint8Array): void {
    this.frames.push({ subject, bytes: data.byteLength, data });
  }
  putDescriptor(key: string, value: string): void {
    this.descriptors.set(key, Buffer.byteLength(value));
  }
}

const sleep = (ms: number): Promise<void> => new Promise((r) => setTimeout(r, ms));

function pad(s: string | number, n: number, left = false): string {
  const t = String(s);
  return left ? t.padEnd(n) : t.padStart(n);
}

function fixed(n: number, digits = 1): string {
  return Number.isFinite(n) ? n.toFixed(digits) : '-';
}

/** Median of the wall time of `runs` serial refreshes of one sampler, µs. */
async function isolatedRefreshUs(sampler: Sampler, runs: number): Promise<{ median: number; mean: number }> {
  const times: number[] = [];
  for (let i = 0; i < runs; i++) {
    const t0 = process.hrtime.bigint();
    await sampler.refresh();
    times.push(Number(process.hrtime.bigint() - t0) / 1000);
  }
  times.sort((a, b) => a - b);
  const mean = times.reduce((a, b) => a + b, 0) / times.length;
  return { median: times[Math.floor(times.length / 2)] ?? Number.NaN, mean };
}

async function main(): Promise<void> {
  const sink = new CollectingSink();
  const log = silentLogger();
  const agent = new Agent({
    host: 'bench',
    instance: randomInt(1, 2 ** 32 - 1),
    samplers: SAMPLERS.map((definition) => ({ definition, enabled: true, intervalMs: NEVER_MS })),
    context: { procRoot: '/proc', sysRoot: '/sys' },
    sink,
    descriptorTtlMs: 86_400_000,
    log,
  });
  await agent.start();
  let lastTickStart = 0;
  let beforeLast: SamplerStatus[] = [];
  const tickMs: number[] = [];
  try {
    for (let i = 0; i < TICKS; i++) {
      if (i > 0) await sleep(PAUSE_MS);
      lastTickStart = sink.frames.length;
      beforeLast = agent.status();
      const t0 = process.hrtime.bigint();
      await agent.tickOnce();
      tickMs.push(Number(process.hrtime.bigint() - t0) / 1e6);
    }
  } catch (error) {
    await agent.stop();
    throw error;
  }
  const status: SamplerStatus[] = agent.status();

  // CPU of sampling + describe + encode per tick, without a bus: back-to-back
  // ticks in a hot loop (JIT-warm, so a lower bound for a 1 s agent).
  const keep = sink.frames.length;
  const cpu0 = process.cpuUsage();
  const wall0 = process.hrtime.bigint();
  for (let i = 0; i < HOT_TICKS; i++) await agent.tickOnce();
  const cpu = process.cpuUsage(cpu0);
  const hot = {
    userMs: cpu.user / 1000 / HOT_TICKS,
    systemMs: cpu.system / 1000 / HOT_TICKS,
    wallMs: Number(process.hrtime.bigint() - wall0) / 1e6 / HOT_TICKS,
  };
  sink.frames.length = keep;

  // Isolated timing: each sampler built on its own and refreshed serially, so
  // the figure is not inflated by the other samplers interleaving in tickOnce().
  const introspection: AgentIntrospection = agent;
  const isolated = new Map<string, { median: number; mean: number }>();
  for (const definition of SAMPLERS) {
    let sampler: Sampler | undefined;
    try {
      sampler = await definition.init({ procRoot: '/proc', sysRoot: '/sys', log, agent: introspection });
    } catch {
      continue;
    }
    try {
      await sampler.refresh(); // warm
      isolated.set(definition.name, await isolatedRefreshUs(sampler, ISOLATED_RUNS));
    } finally {
      await sampler.close?.();
    }
  }
  await agent.stop();

  // Envelope (header) bytes of each sampler's last frame: the same header with no values.
  const lastFrames = sink.frames.slice(lastTickStart);
  const envelope = new Map<string, number>();
  for (const f of lastFrames) {
    const raw = decodeFrame(f.data);
    const empty = encodeFrame(
      { host: raw.host, sampler: raw.sampler, instance: raw.instance, seq: raw.seq, beginNs: raw.beginNs, endNs: raw.endNs, descriptor: raw.descriptor },
      [],
    );
    envelope.set(raw.sampler, empty.byteLength);
  }

  process.stdout.write(`frame-bytes: ${TICKS} ticks against live /proc and /sys, ${PAUSE_MS} ms apart (node ${process.version})\n\n`);
  const header =
    `${pad('sampler', 20, true)} ${pad('state', 9, true)} ${pad('series', 6)} ${pad('frame B', 8)} ${pad('env B', 6)} ` +
    `${pad('B/series', 8)} ${pad('vals B/s', 8)} ${pad('refresh µs', 10)} ${pad('last µs', 8)} ${pad('isol. µs', 9)}\n`;
  process.stdout.write(header);
  process.stdout.write(`${'-'.repeat(header.length - 1)}\n`);
  let bytes = 0;
  let series = 0;
  let envBytes = 0;
  for (const s of status) {
    const env = envelope.get(s.name);
    const active = s.status.state === 'active';
    const meanUs = s.refreshes > 0 ? Number(s.refreshNs) / s.refreshes / 1000 : Number.NaN;
    const iso = isolated.get(s.name);
    const prev = beforeLast.find((b) => b.name === s.name);
    const lastUs = prev !== undefined && s.refreshes > prev.refreshes
      ? Number(s.refreshNs - prev.refreshNs) / (s.refreshes - prev.refreshes) / 1000
      : Number.NaN;
    if (active && s.lastSeries > 0) {
      bytes += s.lastFrameBytes;
      series += s.lastSeries;
      envBytes += env ?? 0;
    }
    process.stdout.write(
      `${pad(s.name, 20, true)} ${pad(s.status.state, 9, true)} ${pad(s.lastSeries, 6)} ${pad(s.lastFrameBytes, 8)} ` +
        `${pad(env ?? '-', 6)} ${pad(fixed(s.lastFrameBytes / s.lastSeries, 2), 8)} ` +
        `${pad(env === undefined ? '-' : fixed((s.lastFrameBytes - env) / s.lastSeries, 2), 8)} ` +
        `${pad(fixed(meanUs), 10)} ${pad(fixed(lastUs), 8)} ${pad(iso === undefined ? '-' : fixed(iso.median), 9)}\n`,
    );
    if (!active) process.stdout.write(`${' '.repeat(21)}(${JSON.stringify(s.status)})\n`);
  }
  const perSeries = bytes / series;
  process.stdout.write(`${'-'.repeat(header.length - 1)}\n`);
  process.stdout.write(
    `${pad('TOTAL (last tick)', 20, true)} ${pad('', 9, true)} ${pad(series, 6)} ${pad(bytes, 8)} ${pad(envBytes, 6)} ` +
      `${pad(fixed(perSeries, 2), 8)} ${pad(fixed((bytes - envBytes) / series, 2), 8)}\n`,
  );
  const allBytes = sink.frames.reduce((a, f) => a + f.bytes, 0);
  const allSeries = status.reduce((a, s) => a + s.lastSeries, 0) * TICKS;
  process.stdout.write(
    `\nall ${sink.frames.length} frames of the ${TICKS} ticks: ${allBytes} B for ~${allSeries} series-values ` +
      `= ${fixed(allBytes / allSeries, 2)} B/series\n`,
  );
  process.stdout.write(`tickOnce wall time per tick (ms): ${tickMs.map((t) => fixed(t, 2)).join(', ')}\n`);
  process.stdout.write(
    `hot loop, ${HOT_TICKS} back-to-back ticks (sampling + describe + encode, no bus): ` +
      `${fixed(hot.userMs + hot.systemMs, 3)} ms CPU per tick (user ${fixed(hot.userMs, 3)} + sys ${fixed(hot.systemMs, 3)}), ${fixed(hot.wallMs, 3)} ms wall\n`,
  );
  const descBytes = [...sink.descriptors.values()].reduce((a, b) => a + b, 0);
  process.stdout.write(
    `descriptors put: ${sink.descriptors.size} (${descBytes} B of JSON in total, re-put every ttl/4, not per tick)\n`,
  );
  process.stdout.write(
    '\ncolumns: frame B = last frame; env B = the same header with no values (host, sampler, instance, seq, begin, end, hash);\n' +
      '  B/series = frame B / series; vals B/s = (frame B - env B) / series;\n' +
      '  refresh µs = agent refreshNs/refreshes over all ticks (the first is JIT-cold; samplers run concurrently in tickOnce,\n' +
      '    so each figure spans the interleaved work of the others); last µs = the same for the last tick only;\n' +
      `  isol. µs = median of ${ISOLATED_RUNS} serial refreshes of that sampler alone (parse only, no encode)\n\n`,
  );
  if (perSeries <= TARGET_BYTES_PER_SERIES) {
    process.stdout.write(`target met: ${fixed(perSeries, 2)} B/series per tick <= ${TARGET_BYTES_PER_SERIES}\n`);
  } else {
    process.stdout.write(`TARGET MISSED: ${fixed(perSeries, 2)} B/series per tick > ${TARGET_BYTES_PER_SERIES}\n`);
    const worst = status
      .filter((s) => s.lastSeries > 0)
      .map((s) => ({ name: s.name, excess: s.lastFrameBytes - TARGET_BYTES_PER_SERIES * s.lastSeries, per: s.lastFrameBytes / s.lastSeries }))
      .sort((a, b) => b.excess - a.excess);
    for (const w of worst.filter((x) => x.excess > 0)) {
      process.stdout.write(`  ${w.name}: ${fixed(w.per, 2)} B/series, ${w.excess} B over the budget of its series\n`);
    }
  }
}

main().then(
  () => process.exit(0),
  (error: unknown) => {
    process.stderr.write(`frame-bytes failed: ${error instanceof Error ? (error.stack ?? error.message) : String(error)}\n`);
    process.exit(1);
  },
);
