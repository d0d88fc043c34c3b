/**
 * What one exporter process can take: frames per second decoded and folded
 * into ExporterState on one thread, and the time to render /metrics, for a
 * simulated fleet of agents (default 1000 hosts × 10 samplers at 1 Hz), with
 * the exporter's default configuration (loadExporterConfig(undefined)).
 *
 * Targets: ingest ≥ 50 000 frames/s per core; render of 100k series ≤ 50 ms (p90);
 * GET /metrics of the whole fleet ≤ 250 ms (median; issue 19).
 *
 *   npx tsx test/bench/exporter-ingest.ts                 # about 100 s
 *   npx tsx test/bench/exporter-ingest.ts --hosts 500 --memory-seconds 20 --profile
 *
 * No NATS. The frames are real: every registry sampler is refreshed against
 * test/fixtures/rootfs, its points are described and each (host, second)
 * frame is encoded with encodeFrame(), with values varied per host, series and
 * second. A tenth sampler slot is a copy of cpu_usage under another sampler
 * name and other metric names (so its series are not duplicates of
 * cpu_usage's on /metrics).
 *
 * Phases:
 *  1. memory: the fleet's frames for --memory-seconds are written to a temp
 *     file; two child processes (this script with --replay) play it back, one
 *     ingesting only, one also rendering after each second (a 1 Hz scrape).
 *     They hold no pre-encoded frames, so their RSS is the exporter's.
 *  2. ingest: --warmup + --seconds seconds pre-encoded in memory, then timed
 *     through FrameIntake → ExporterState.ingest on this thread; then
 *     cheaper paths over the same frames for a breakdown.
 *  3. render: state.view + renderExposition until the body is bytes, the whole
 *     fleet and a fleet scaled to --series-target series (also with the
 *     oversampling view off). Peers in the same process: prom-client's
 *     Registry.metrics() holding the same series, and the renderer before
 *     issue 19 (test/helpers/reference-render.ts; --skip-old leaves it out),
 *     taking turns with this tree's on the same states. gzip of the body.
 *  4. GET /metrics: the real fastify app on a free loopback port, fetched by
 *     curl; for the whole fleet also with a new second of frames ingested
 *     before each GET.
 * --profile writes a V8 CPU profile of the timed ingest, render and nothing
 * else to a temp dir and prints its top functions.
 *
 * A measurement, not a test: it exits 0 when a target is missed and says so.
 * It stops the processes it started (curl, its children) on every exit path.
 */
import { execFile, type ChildProcess } from 'node:child_process';
import { closeSync, mkdtempSync, openSync, readFileSync, readSync, rmSync, writeFileSync, writeSync } from 'node:fs';
import { Session } from 'node:inspector/promises';
import { availableParallelism, loadavg, tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';
import { constants as zlibConstants, gzipSync } from 'node:zlib';
import type { KV } from '@nats-io/kv';
import { Counter, Gauge, Registry } from 'prom-client';
import type { FastifyInstance } from 'fastify';
import { DescriptorCache } from '../../src/sources/descriptors.js';
import { FrameIntake } from '../../src/sources/intake.js';
import { fullGc as gc } from '../helpers/gc.js';
import { emptySkipStats, type SkipStats } from '../../src/sources/checks.js';
import { metricsSubject, subjectMatches } from '../../src/bus/subjects.js';
import { loadExporterConfig, type ExporterConfig } from '../../src/config/exporter.js';
import { renderExposition, type ExtraSeries, type RenderOptions, type RenderResult } from '../../src/exporter/render.js';
import { ownSeries } from '../../src/exporter/self-metrics.js';
import type { RenderPacerOptions } from '../../src/exporter/pacer.js';
import { ExporterState, type ViewEntry } from '../../src/exporter/state.js';
import { renderExpositionReference } from '../helpers/reference-render.js';
import { decodeFrame, encodeFrame, resolveFrame } from '../../src/frame/codec.js';
import { describe, hashDescriptorJson, parseDescriptor, type EncodedDescriptor } from '../../src/frame/descriptor.js';
import type { Descriptor, Frame } from '../../src/frame/types.js';
import { silentLogger } from '../../src/log/logger.js';
import { metric, type MetricDecl } from '../../src/metrics/metric.js';
import { SAMPLERS } from '../../src/samplers/registry.js';
import type { AgentIntrospection, SamplerStats } from '../../src/samplers/rezolus/introspection.js';
import type { Point, Value } from '../../src/samplers/types.js';
import { PROC, SYS } from '../helpers/fixtures.js';
import { fmt, printProfileTable, profileTotals, say, type CallFrame, type CpuProfile } from './common.js';
import { prng } from '../helpers/prng.js';

const { values: flags } = parseArgs({
  options: {
    hosts: { type: 'string', default: '1000' },
    seconds: { type: 'string', default: '10' },
    warmup: { type: 'string', default: '3' },
    renders: { type: 'string', default: '20' },
    'memory-seconds': { type: 'string', default: '70' },
    'series-target': { type: 'string', default: '100000' },
    profile: { type: 'boolean', default: false },
    /** leave out the renderer before issue 19 (timed beside this tree's by default) */
    'skip-old': { type: 'boolean', default: false },
    /** internal: the memory phase's child process replays this file */
    replay: { type: 'string' },
    /** internal: whether the replaying child renders after each second */
    'replay-render': { type: 'boolean', default: false },
  },
});
const HOSTS = Number(flags.hosts);
/** simulated seconds timed in the ingest phase */
const SECONDS = Number(flags.seconds);
/** simulated seconds ingested before the timing starts (JIT warm-up) */
const WARMUP = Number(flags.warmup);
const RENDERS = Number(flags.renders);
const SERIES_TARGET = Number(flags['series-target']);
/** simulated seconds replayed by the memory phase's child processes */
const MEMORY_SECONDS = Number(flags['memory-seconds']);
if (
  ![HOSTS, SECONDS, WARMUP, RENDERS, SERIES_TARGET, MEMORY_SECONDS].every((n) => Number.isInteger(n) && n >= 1) ||
  HOSTS > 20_000 || SECONDS + WARMUP > 120 || MEMORY_SECONDS > 600
) {
  process.stderr.write(
    'usage: npx tsx test/bench/exporter-ingest.ts [--hosts N=1000 (≤ 20000)] [--seconds S=10] [--warmup W=3 (S+W ≤ 120)] [--renders R=20]\n' +
      '         [--memory-seconds M=70 (≤ 600)] [--series-target 100000] [--profile]\n',
  );
  process.exit(2);
}

const TARGET_FRAMES_PER_S = 50_000;
const TARGET_RENDER_MS = 50;
/** GET /metrics of the whole fleet (issue 19) */
const TARGET_GET_MS = 250;
const PROM_CLIENT_VERSION = (JSON.parse(readFileSync(new URL('../../node_modules/prom-client/package.json', import.meta.url), 'utf8')) as { version: string }).version;
/** sampler slots per host: the 9 registry samplers and one copy */
const SLOTS = 10;
const CLONE_OF = 'cpu_usage';
const CLONE_NAME = 'bench_clone_cpu_usage';
/**
 * Messages handed to FrameIntake.take() before the loop yields to the event
 * loop (setImmediate), as nats-core delivers the messages of one socket read
 * and then returns. 64 KiB reads of ~200 B frames are some 300 messages.
 */
const BATCH = 300;
const SECOND_NS = 1_000_000_000n;
/** the simulated timelines end this far in the future (s), so that forget() drops nothing during the run */
const AHEAD_S = 120;
/** render passes before the timed ones */
const RENDER_WARMUP = 3;
/** seconds of the two-replica scrape runs */
const PAIR_SECONDS = 10;
/** a run never takes longer than this */
const WATCHDOG_MS = 10 * 60_000;


/** processes started and not yet ended (curl, the replay children), and the temp dir of the replay file */
const children = new Set<ChildProcess>();
let tempDir: string | undefined;
function cleanup(): void {
  for (const c of children) c.kill('SIGKILL');
  children.clear();
  if (tempDir !== undefined) rmSync(tempDir, { recursive: true, force: true });
  tempDir = undefined;
}
/** execFile that remembers the child until it ends, so cleanup() can stop it. */
function run(file: string, args: readonly string[], timeoutMs: number): Promise<string> {
  return new Promise((resolve, reject) => {
    const child = execFile(file, args, { maxBuffer: 1024 * 1024, timeout: timeoutMs, killSignal: 'SIGKILL' }, (error, stdout, stderr) => {
      children.delete(child);
      if (error === null) resolve(stdout);
      else reject(new Error(`${file} ${args.join(' ')}: ${error.message}\n${stderr.slice(-2000)}`));
    });
    children.add(child);
  });
}
const watchdog = setTimeout(() => {
  process.stderr.write(`exporter-ingest: watchdog after ${WATCHDOG_MS / 1000} s\n`);
  cleanup();
  process.exit(1);
}, WATCHDOG_MS);
watchdog.unref();
for (const signal of ['SIGINT', 'SIGTERM'] as const) {
  process.once(signal, () => {
    cleanup();
    process.exit(130);
  });
}

// ---------------------------------------------------------------- small helpers

const MiB = 1024 * 1024;
/** MiB: RSS, V8 heap used and committed (heapTotal), external (ArrayBuffer backing stores and the like). */
function mem(): { rss: number; heapUsed: number; heapTotal: number; external: number } {
  const m = process.memoryUsage();
  return { rss: m.rss / MiB, heapUsed: m.heapUsed / MiB, heapTotal: m.heapTotal / MiB, external: m.external / MiB };
}
/** A full GC, then a pause: V8 hands freed pages back to the OS on a background thread, so RSS read at once is too high. */
async function settle(): Promise<void> {
  gc();
  await new Promise((r) => setTimeout(r, 1000));
  gc();
}
/** Resets the kernel's peak-RSS mark of this process (VmHWM); false where that is not allowed. */
function resetPeakRss(): boolean {
  try {
    writeFileSync('/proc/self/clear_refs', '5');
    return true;
  } catch {
    return false;
  }
}
/** VmHWM of this process (the peak RSS since start or since resetPeakRss), MiB. */
function peakRss(): number {
  const kb = /^VmHWM:\s+(\d+) kB/m.exec(readFileSync('/proc/self/status', 'latin1'))?.[1];
  return kb === undefined ? Number.NaN : Number(kb) / 1024;
}
function quantile(sorted: readonly number[], q: number): number {
  if (sorted.length === 0) return Number.NaN;
  return sorted[Math.min(sorted.length - 1, Math.max(0, Math.ceil(q * sorted.length) - 1))] as number;
}
const nowNs = (): bigint => process.hrtime.bigint();
const msSince = (t0: bigint): number => Number(process.hrtime.bigint() - t0) / 1e6;
const int = (n: number): string => Math.round(n).toLocaleString('en-US');


// ---------------------------------------------------------------- the fleet

type Vary = 'counter' | 'bigcounter' | 'gauge-int' | 'gauge-float';

interface Slot {
  readonly sampler: string;
  readonly encoded: EncodedDescriptor;
  readonly base: readonly Value[];
  readonly vary: readonly Vary[];
}

/** The agent's self-view as the rezolus_self sampler sees it: ten samplers with plausible figures. */
function fakeIntrospection(names: readonly string[]): AgentIntrospection {
  return {
    samplerStats: (): SamplerStats[] =>
      names.map((name, i) => ({ name, refreshNs: BigInt(40_000 * (i + 1)) * 3600n, refreshes: 3600, errors: i % 3, skipped: 0, overruns: 0 })),
    publishStats: () => ({ published: 32_400, dropped: 0, retries: 2, buffered: 0, bufferedBytes: 0 }),
    samplerStates: () => names.map((name) => ({ name, state: 'active' as const })),
  };
}

/**
 * The samplers of the fleet: the procfs ones that existed when the targets were set (kernel
 * samplers read the live kernel, not the fixtures; cgroup_resources came later), so the
 * figures stay comparable with the earlier runs below.
 */
const FLEET_SAMPLERS = SAMPLERS.filter((d) => d.kernel !== true && d.name !== 'cgroup_resources');

async function buildSlots(): Promise<Slot[]> {
  const log = silentLogger();
  const names = [...FLEET_SAMPLERS.map((s) => s.name), CLONE_NAME];
  const agent = fakeIntrospection(names);
  const readings = new Map<string, Point[]>();
  for (const def of FLEET_SAMPLERS) {
    const sampler = await def.init({ procRoot: PROC, sysRoot: SYS, log, agent });
    await sampler.refresh(); // the first refresh of some samplers primes a delta
    readings.set(def.name, (await sampler.refresh()).points);
    await sampler.close?.();
  }
  // The tenth slot: cpu_usage's points under other metric names, so the exporter sees other families.
  const cloned = new Map<MetricDecl, MetricDecl>();
  const source = readings.get(CLONE_OF);
  if (source === undefined) throw new Error(`sampler ${CLONE_OF} gave no reading against the fixtures`);
  readings.set(
    CLONE_NAME,
    source.map((p) => {
      let m = cloned.get(p.metric);
      if (m === undefined) cloned.set(p.metric, (m = metric({ ...p.metric, name: `bench_clone_${p.metric.name}` })));
      return { metric: m, labels: p.labels, value: p.value };
    }),
  );
  const slots: Slot[] = [];
  for (const name of names) {
    const points = readings.get(name) ?? [];
    if (points.length === 0) throw new Error(`sampler ${name} gave no points against the fixtures`);
    slots.push({
      sampler: name,
      encoded: describe(name, points),
      base: points.map((p) => p.value),
      vary: points.map((p): Vary => {
        if (typeof p.value === 'bigint') return 'bigcounter';
        if (typeof p.value !== 'number') throw new Error(`${name}: histogram values are not simulated`);
        if (p.metric.kind === 'counter') return 'counter';
        return Number.isInteger(p.value) ? 'gauge-int' : 'gauge-float';
      }),
    });
  }
  if (slots.length !== SLOTS) throw new Error(`expected ${SLOTS} sampler slots, built ${slots.length}`);
  return slots;
}

/** The values of one slot on host h at second t: counters grow at a per-host, per-series rate, gauges wobble. */
function valuesAt(slot: Slot, h: number, t: number): Value[] {
  const out = new Array<Value>(slot.base.length);
  for (let i = 0; i < slot.base.length; i++) {
    const b = slot.base[i] as Value;
    const mix = (Math.imul(h + 1, 0x9e3779b1) ^ Math.imul(i + 1, 0x85ebca6b)) >>> 0;
    const rate = 1 + (mix % 50_000);
    switch (slot.vary[i]) {
      case 'counter':
        out[i] = (b as number) + h * 7919 + (t + 1) * rate;
        break;
      case 'bigcounter':
        out[i] = (b as bigint) + BigInt(h * 7919 + (t + 1) * rate);
        break;
      case 'gauge-int':
        out[i] = (b as number) + ((mix + t * 13) % 101);
        break;
      default:
        out[i] = (b as number) * (1 + ((mix + t * 13) % 1000) / 10_000) + 0.001 * (t + 1);
    }
  }
  return out;
}

/** Messages as the subscription callback sees them: payload and subject. */
interface Messages {
  readonly frames: readonly Uint8Array[];
  /** subjects[i] is the subject frames[i] came on */
  readonly subjects: readonly string[];
}

interface Second extends Messages {
  /** every frame of this simulated second, as subarrays of one buffer (like the payloads of one socket read) */
  readonly frames: Uint8Array[];
  readonly subjects: string[];
  readonly bytes: number;
}

/**
 * The frames of `hosts` hosts for seconds [from, from + count): every host
 * sends one frame per slot per second; within a second the (host, slot)
 * order is shuffled, as 1000 agents interleave on the bus.
 */
function encodeSeconds(slots: readonly Slot[], hosts: number, from: number, count: number, t0Ns: bigint): Second[] {
  const rnd = prng(0x5eed);
  const instances = Array.from({ length: hosts }, () => 1 + Math.floor(rnd() * (2 ** 32 - 2)));
  const hostNames = Array.from({ length: hosts }, (_, h) => `host-${String(h).padStart(5, '0')}`);
  const subjectOf = hostNames.map((host) => slots.map((slot) => metricsSubject(host, slot.sampler)));
  const order = Array.from({ length: hosts * slots.length }, (_, k) => k);
  const out: Second[] = [];
  for (let t = from; t < from + count; t++) {
    for (let k = order.length - 1; k > 0; k--) {
      const j = Math.floor(rnd() * (k + 1));
      [order[k], order[j]] = [order[j] as number, order[k] as number];
    }
    const parts: Uint8Array[] = [];
    const subjects: string[] = [];
    for (const k of order) {
      const h = Math.floor(k / slots.length);
      const slot = slots[k % slots.length] as Slot;
      // each host ticks at its own phase within the second; a refresh takes 50–300 µs
      const endNs = t0Ns + BigInt(t) * SECOND_NS + BigInt((h * 7_919_000) % 900_000_000);
      const beginNs = endNs - BigInt(50_000 + ((h + k) % 250) * 1000);
      subjects.push((subjectOf[h] as string[])[k % slots.length] as string);
      parts.push(
        encodeFrame(
          { host: hostNames[h] as string, sampler: slot.sampler, instance: instances[h] as number, seq: t + 1, beginNs, endNs, descriptor: slot.encoded.hash },
          valuesAt(slot, h, t),
        ),
      );
    }
    const all = Buffer.concat(parts);
    const frames: Uint8Array[] = [];
    let at = 0;
    for (const p of parts) {
      frames.push(all.subarray(at, at + p.byteLength));
      at += p.byteLength;
    }
    out.push({ frames, subjects, bytes: all.byteLength });
  }
  return out;
}

/** A KV stand-in that serves the descriptors the agents would have put: DescriptorCache's first miss goes through it. */
function fakeDescriptorBucket(descriptors: readonly string[]): KV {
  const json = new Map(descriptors.map((j) => [hashDescriptorJson(j), j]));
  const kv = {
    async get(key: string) {
      const j = json.get(key);
      return j === undefined ? null : { value: Buffer.from(j), string: () => j };
    },
  };
  return kv as unknown as KV;
}

// ---------------------------------------------------------------- profiling (--profile)


let session: Session | undefined;
let profileDir: string | undefined;

async function profileStart(): Promise<void> {
  if (!flags.profile) return;
  if (session === undefined) {
    session = new Session();
    session.connect();
    await session.post('Profiler.enable');
    await session.post('Profiler.setSamplingInterval', { interval: 100 });
    profileDir = mkdtempSync(join(tmpdir(), 'rezolus-bench-ingest-prof-'));
  }
  await session.post('Profiler.start');
}

function where(f: CallFrame): string {
  const name = f.functionName === '' ? '(anonymous)' : f.functionName;
  if (f.url === '') return name;
  const nm = f.url.lastIndexOf('/node_modules/');
  const src = f.url.indexOf('/src/');
  const test = f.url.indexOf('/test/');
  const short = nm >= 0 ? f.url.slice(nm + 14) : src >= 0 ? f.url.slice(src + 1) : test >= 0 ? f.url.slice(test + 1) : f.url;
  return `${name}  ${short}:${f.lineNumber + 1}`;
}

async function profileStop(phase: string, top = 15): Promise<void> {
  if (session === undefined || profileDir === undefined) return;
  const { profile } = (await session.post('Profiler.stop')) as unknown as { profile: CpuProfile };
  const file = join(profileDir, `${phase}.cpuprofile`);
  writeFileSync(file, JSON.stringify(profile));
  const { self, inclusive, busy } = profileTotals(profile, where);
  say(`\nprofile of ${phase} (${fmt(busy / 1000, 0)} ms busy, sampled every 100 µs; ${file})`);
  printProfileTable('self time', self, busy, top);
  printProfileTable('inclusive time', inclusive, busy, top);
}

// ---------------------------------------------------------------- ingest

interface IngestRun {
  readonly frames: number;
  readonly wallMs: number;
  readonly cpuMs: number;
  /** wall ms of each timed simulated second */
  readonly perSecondMs: readonly number[];
}

type Consumer = (messages: Messages) => Promise<void> | void;

async function timed(seconds: readonly Second[], warm: number, consume: Consumer): Promise<IngestRun> {
  for (const s of seconds.slice(0, warm)) await consume(s);
  gc();
  const perSecondMs: number[] = [];
  let frames = 0;
  const cpu0 = process.cpuUsage();
  const t0 = nowNs();
  for (const s of seconds.slice(warm)) {
    const ts = nowNs();
    await consume(s);
    perSecondMs.push(msSince(ts));
    frames += s.frames.length;
  }
  const wallMs = msSince(t0);
  const cpu = process.cpuUsage(cpu0);
  return { frames, wallMs, cpuMs: (cpu.user + cpu.system) / 1000, perSecondMs };
}

const yieldToLoop = (): Promise<void> => new Promise((r) => setImmediate(r));

/**
 * The exporter's path, as subscribeFrames' callback does it: FrameIntake.take
 * (decode, subject check, descriptor, resolve; then in order per subject, the
 * seq guard and ingest), in socket-read-sized batches.
 */
function asyncConsumer(state: ExporterState, cache: DescriptorCache, skipped: SkipStats): Consumer {
  const intake = new FrameIntake(cache, skipped, (frame) => state.ingest(frame), silentLogger());
  // A take that settles later has its failure caught, as in subscribeFrames' callback; here it fails the bench.
  const takeFailed = (error: unknown): void => {
    say(`frame handling failed: ${String(error)}`);
    process.exitCode = 1;
  };
  return async ({ frames, subjects }) => {
    for (let i = 0; i < frames.length; i += BATCH) {
      const end = Math.min(frames.length, i + BATCH);
      for (let j = i; j < end; j++) intake.take(subjects[j] as string, frames[j] as Uint8Array)?.catch(takeFailed);
      await yieldToLoop();
    }
  };
}

/** The same work without promises: decodeFrame → Map lookup → resolveFrame → subject check → ingest. */
function syncConsumer(state: ExporterState, known: ReadonlyMap<string, Descriptor>): Consumer {
  return ({ frames, subjects }) => {
    for (let i = 0; i < frames.length; i++) {
      const frame = resolveFrameOf(frames[i] as Uint8Array, known);
      if (subjectMatches(subjects[i] as string, frame.host, frame.sampler)) state.ingest(frame);
    }
  };
}
function resolveFrameOf(data: Uint8Array, known: ReadonlyMap<string, Descriptor>): Frame {
  const raw = decodeFrame(data);
  return resolveFrame(raw, known.get(raw.descriptor) as Descriptor);
}

let sink = 0;
function decodeOnly(): Consumer {
  return ({ frames }) => {
    for (const data of frames) sink += decodeFrame(data).values.length;
  };
}
function decodeResolve(known: ReadonlyMap<string, Descriptor>): Consumer {
  return ({ frames }) => {
    for (const data of frames) {
      const raw = decodeFrame(data);
      sink += resolveFrame(raw, known.get(raw.descriptor) as Descriptor).values.length;
    }
  };
}

// ---------------------------------------------------------------- render

/** The exporter's own series, as /metrics appends them. */
function selfSeries(state: ExporterState, skipped: SkipStats, dropped: number, nowMs: number): ExtraSeries[] {
  return ownSeries({ state, skipped, dropped, reused: 0, nowMs, natsConnected: true });
}

/** The render options runExporter derives from the config. */
function renderOptionsOf(c: ExporterConfig): Omit<RenderOptions, 'extra'> {
  return {
    summaries: c.summaries,
    percentiles: c.percentiles,
    histograms: c.histograms,
    histogramGroupingPower: c.histogramGroupingPower,
    ratePercentiles: c.oversamplePercentiles,
  };
}

/** ExporterState as runExporter builds it. */
function newState(c: ExporterConfig): ExporterState {
  return new ExporterState({ intervalNs: BigInt(c.intervalMs) * 1_000_000n, oversample: c.oversampleMetrics });
}

interface RenderRun {
  readonly result: RenderResult;
  /** the body of the last render */
  readonly body: Buffer;
  readonly textBytes: number;
  /** view + render, until the body is bytes ready to send (Buffer.from(text) for a renderer that returns only text) */
  readonly totalMs: readonly number[];
  /** process CPU time of the same (incl. GC threads) */
  readonly cpuMs: readonly number[];
  readonly viewMs: readonly number[];
  readonly renderMs: readonly number[];
}

/** A renderer under test: this tree's renderExposition, or the one before issue 19 (test/helpers/reference-render.ts). */
type Renderer = (entries: ViewEntry[], options: RenderOptions) => RenderResult;

const RENDERERS: readonly { readonly name: string; readonly render: Renderer }[] = [
  { name: 'this tree', render: renderExposition },
  ...(flags['skip-old'] ? [] : [{ name: "before issue 19 (main's cb7fd86, test/helpers/reference-render.ts)", render: renderExpositionReference as unknown as Renderer }]),
];

/**
 * Times view + render of `state` with each renderer, `runs` rounds after
 * RENDER_WARMUP, the renderers taking turns (which goes first alternates),
 * so that both see the same machine load.
 */
function renderRuns(state: ExporterState, skipped: SkipStats, config: ExporterConfig, runs: number, renderers: typeof RENDERERS = RENDERERS.slice(0, 1)): RenderRun[] {
  const options = renderOptionsOf(config);
  const intervalNs = BigInt(config.intervalMs) * 1_000_000n;
  const acc = renderers.map(() => ({ totalMs: [] as number[], cpuMs: [] as number[], viewMs: [] as number[], renderMs: [] as number[], result: undefined as RenderResult | undefined, body: undefined as Buffer | undefined }));
  let dropped = 0;
  for (let k = 0; k < RENDER_WARMUP + runs; k++) {
    for (let j = 0; j < renderers.length; j++) {
      const which = (j + k) % renderers.length;
      const a = acc[which] as (typeof acc)[number];
      const render = (renderers[which] as (typeof renderers)[number]).render;
      const c0 = process.cpuUsage();
      const t0 = nowNs();
      const view = state.view(intervalNs);
      const t1 = nowNs();
      const result = render(view, { ...options, extra: selfSeries(state, skipped, dropped, Date.now()) });
      // what /metrics sends: the body (issue 19 on), else the text encoded, as fastify does with a string
      a.body = bodyOf(result);
      const t2 = nowNs();
      const c = process.cpuUsage(c0);
      a.result = result;
      dropped = result.duplicates + result.conflicts + result.invalid;
      if (k < RENDER_WARMUP) continue;
      a.viewMs.push(Number(t1 - t0) / 1e6);
      a.renderMs.push(Number(t2 - t1) / 1e6);
      a.totalMs.push(Number(t2 - t0) / 1e6);
      a.cpuMs.push((c.user + c.system) / 1000);
    }
  }
  const by = (x: number, y: number): number => x - y;
  return acc.map((a) => ({
    result: a.result as RenderResult,
    body: a.body as Buffer,
    textBytes: (a.body as Buffer).length,
    totalMs: a.totalMs.sort(by),
    cpuMs: a.cpuMs.sort(by),
    viewMs: a.viewMs.sort(by),
    renderMs: a.renderMs.sort(by),
  }));
}

/** The bytes a render sends: its body, or (the renderer before issue 19) its text as UTF-8. */
function bodyOf(r: RenderResult): Buffer {
  const body = (r as { body?: Buffer }).body;
  return body ?? Buffer.from(r.text, 'utf8');
}

// ---------------------------------------------------------------- the peer: prom-client

interface Sample {
  readonly labels: Record<string, string>;
  readonly value: number;
}

/** Sample lines `name{k="v",…} value` of an exposition, by family (the HELP/TYPE before them). */
function parseExposition(text: string): Map<string, { type: string; help: string; samples: Sample[] }> {
  const families = new Map<string, { type: string; help: string; samples: Sample[] }>();
  let current: { type: string; help: string; samples: Sample[] } | undefined;
  let help = '';
  for (const line of text.split('\n')) {
    if (line === '') continue;
    if (line.startsWith('# HELP ')) {
      help = line.slice(line.indexOf(' ', 7) + 1);
      continue;
    }
    if (line.startsWith('# TYPE ')) {
      const [name, type] = line.slice(7).split(' ') as [string, string];
      current = { type, help, samples: [] };
      families.set(name, current);
      continue;
    }
    if (current === undefined) throw new Error(`sample before TYPE: ${line}`);
    const brace = line.indexOf('{');
    const labels: Record<string, string> = {};
    let at = brace;
    if (brace >= 0) {
      at++;
      while (line[at] !== '}') {
        const eq = line.indexOf('=', at);
        const key = line.slice(at, eq);
        let value = '';
        let k = eq + 2;
        for (; line[k] !== '"'; k++) {
          if (line[k] === '\\') {
            k++;
            value += line[k] === 'n' ? '\n' : line[k];
          } else value += line[k];
        }
        labels[key] = value;
        at = line[k + 1] === ',' ? k + 2 : k + 1;
      }
    }
    current.samples.push({ labels, value: Number(line.slice(line.lastIndexOf(' ') + 1)) });
  }
  return families;
}

/** A prom-client registry holding the series of an exposition: gauges and counters with the same names, labels and values. */
function promClientRegistry(text: string): { registry: Registry; series: number } {
  const registry = new Registry();
  let series = 0;
  for (const [name, f] of parseExposition(text)) {
    const labelNames = Object.keys(f.samples[0]?.labels ?? {});
    if (f.type === 'counter') {
      const c = new Counter({ name, help: f.help, labelNames, registers: [registry] });
      for (const s of f.samples) c.inc(s.labels, s.value);
    } else {
      const g = new Gauge({ name, help: f.help, labelNames, registers: [registry] });
      for (const s of f.samples) g.set(s.labels, s.value);
    }
    series += f.samples.length;
  }
  return { registry, series };
}

/** registry.metrics() timed like renderRuns: warm-up, then `runs`, wall and CPU ms, with Buffer.from of its text (what a server sends). */
async function promClientRuns(registry: Registry, runs: number): Promise<{ totalMs: number[]; cpuMs: number[]; bytes: number }> {
  const totalMs: number[] = [];
  const cpuMs: number[] = [];
  let bytes = 0;
  for (let k = 0; k < RENDER_WARMUP + runs; k++) {
    const c0 = process.cpuUsage();
    const t0 = nowNs();
    const body = Buffer.from(await registry.metrics(), 'utf8');
    const ms = msSince(t0);
    const c = process.cpuUsage(c0);
    bytes = body.length;
    if (k < RENDER_WARMUP) continue;
    totalMs.push(ms);
    cpuMs.push((c.user + c.system) / 1000);
  }
  const by = (a: number, b: number): number => a - b;
  return { totalMs: totalMs.sort(by), cpuMs: cpuMs.sort(by), bytes };
}

function renderLine(label: string, r: RenderRun): void {
  const q = (a: readonly number[], p: number): string => fmt(quantile(a, p), 1);
  say(
    `  ${label}: ${int(r.result.series)} series, ${fmt(r.textBytes / MiB, 2)} MiB of text; ` +
      `view+render median ${q(r.totalMs, 0.5)} ms, p90 ${q(r.totalMs, 0.9)} ms, min ${q(r.totalMs, 0)} ms, max ${q(r.totalMs, 1)} ms, CPU median ${q(r.cpuMs, 0.5)} ms ` +
      `(view() median ${q(r.viewMs, 0.5)} ms, renderExposition median ${q(r.renderMs, 0.5)} ms); ` +
      `dropped: ${r.result.duplicates} duplicate, ${r.result.conflicts} conflict, ${r.result.invalid} invalid`,
  );
}

// ---------------------------------------------------------------- main

function machine(): string {
  const cpuinfo = readFileSync('/proc/cpuinfo', 'utf8');
  const model = /^model name\s*:\s*(.+)$/m.exec(cpuinfo)?.[1]?.trim() ?? 'unknown CPU';
  return `nproc ${availableParallelism()}, ${model}, node ${process.version}, load ${loadavg().map((l) => fmt(l, 2)).join(' ')}`;
}

// ---------------------------------------------------------------- memory phase (a child process replays a file)

type Mem = ReturnType<typeof mem>;

interface ReplayResult {
  readonly start: Mem;
  /** after the last second, the last render's text dropped, GC */
  readonly ingested: Mem;
  /** right after one more render, its text alive, no GC */
  readonly rendered: Mem;
  /** VmHWM over the replay (reset after start-up), MiB */
  readonly peakRss: number;
  /** per second after the first REPLAY_SKIP: ingest wall ms, render (view + renderExposition) wall ms */
  readonly ingestMs: readonly number[];
  readonly renderMs: readonly number[];
  readonly series: number;
  readonly tracks: number;
}

/** seconds of the replay left out of its timings (JIT warm-up) */
const REPLAY_SKIP = 5;

const u32 = (n: number): Buffer => {
  const b = Buffer.allocUnsafe(4);
  b.writeUInt32LE(n);
  return b;
};

/**
 * Encodes MEMORY_SECONDS seconds of the fleet into a temporary file, second by
 * second, and has a fresh process (this script with --replay) play it back:
 * that process holds no pre-encoded frames and does no encoding, so its memory
 * is the exporter's. Layout: u32 header length, header JSON; per second u32
 * block length, then per message u32 length and the subject, u32 length and the frame.
 */
async function replayPhase(slots: readonly Slot[]): Promise<{ ingestOnly: ReplayResult; withRenders: ReplayResult }> {
  const dir = mkdtempSync(join(tmpdir(), 'rezolus-bench-ingest-'));
  tempDir = dir;
  const file = join(dir, 'frames.bin');
  try {
    const tw = nowNs();
    const fd = openSync(file, 'w');
    let bytes = 0;
    try {
      const header = Buffer.from(JSON.stringify({ seconds: MEMORY_SECONDS, descriptors: slots.map((s) => s.encoded.json) }));
      writeSync(fd, u32(header.byteLength));
      writeSync(fd, header);
      const t0Ns = BigInt(Date.now() - MEMORY_SECONDS * 1000) * 1_000_000n;
      for (let t = 0; t < MEMORY_SECONDS; t++) {
        const { frames, subjects } = encodeSeconds(slots, HOSTS, t, 1, t0Ns)[0] as Second;
        const parts: Uint8Array[] = [];
        for (let i = 0; i < frames.length; i++) {
          const subject = Buffer.from(subjects[i] as string, 'latin1');
          const f = frames[i] as Uint8Array;
          parts.push(u32(subject.byteLength), subject, u32(f.byteLength), f);
        }
        const block = Buffer.concat(parts);
        writeSync(fd, u32(block.byteLength));
        writeSync(fd, block);
        bytes += block.byteLength;
      }
    } finally {
      closeSync(fd);
    }
    say(
      `\nmemory phase: ${MEMORY_SECONDS} s of the fleet encoded to a file (${fmt(bytes / MiB, 0)} MiB, ${fmt(msSince(tw) / 1000, 1)} s); ` +
        'two child processes replay it: one only ingests, the other also renders after each second (a 1 Hz scrape)',
    );
    const script = fileURLToPath(import.meta.url);
    const child = async (render: boolean): Promise<ReplayResult> => {
      const stdout = await run(process.execPath, [...process.execArgv, script, '--replay', file, ...(render ? ['--replay-render'] : [])], WATCHDOG_MS / 3);
      return JSON.parse(stdout.trim().split('\n').pop() ?? '') as ReplayResult;
    };
    const ingestOnly = await child(false);
    const withRenders = await child(true);
    return { ingestOnly, withRenders };
  } finally {
    rmSync(dir, { recursive: true, force: true });
    tempDir = undefined;
  }
}

/** The child of replayPhase: an exporter without NATS and HTTP, fed from the file. Prints one JSON line. */
async function replayMain(file: string, render: boolean): Promise<void> {
  const config = loadExporterConfig(undefined);
  const intervalNs = BigInt(config.intervalMs) * 1_000_000n;
  const options = renderOptionsOf(config);
  gc();
  const start = mem();
  const fd = openSync(file, 'r');
  let pos = 0;
  const read = (n: number): Buffer => {
    const b = Buffer.allocUnsafe(n);
    if (readSync(fd, b, 0, n, pos) !== n) throw new Error(`${file}: short read at ${pos}`);
    pos += n;
    return b;
  };
  const header = JSON.parse(read(read(4).readUInt32LE()).toString()) as { seconds: number; descriptors: string[] };
  const cache = new DescriptorCache(fakeDescriptorBucket(header.descriptors), silentLogger());
  const state = newState(config);
  const skipped = emptySkipStats();
  const consume = asyncConsumer(state, cache, skipped);
  const ingestMs: number[] = [];
  const renderMs: number[] = [];
  /** the last render's body stays referenced until the next render, as a reply would hold it */
  let text: Buffer | undefined;
  let series = 0;
  resetPeakRss();
  for (let t = 0; t < header.seconds; t++) {
    // one second of messages, as the socket would deliver them
    const block = read(read(4).readUInt32LE());
    const frames: Uint8Array[] = [];
    const subjects: string[] = [];
    for (let at = 0; at < block.byteLength; ) {
      const s = block.readUInt32LE(at);
      subjects.push(block.toString('latin1', at + 4, at + 4 + s));
      at += 4 + s;
      const n = block.readUInt32LE(at);
      frames.push(block.subarray(at + 4, at + 4 + n));
      at += 4 + n;
    }
    const t0 = nowNs();
    await consume({ frames, subjects });
    const t1 = nowNs();
    if (render) {
      const r = renderExposition(state.view(intervalNs), { ...options, extra: selfSeries(state, skipped, 0, Date.now()) });
      text = bodyOf(r);
      series = r.series;
    }
    const t2 = nowNs();
    if (t >= REPLAY_SKIP) {
      ingestMs.push(Number(t1 - t0) / 1e6);
      renderMs.push(Number(t2 - t1) / 1e6);
    }
  }
  closeSync(fd);
  const peak = peakRss();
  if (state.stats.ingested === 0 || (render && text === undefined)) throw new Error('nothing replayed');
  text = undefined;
  await settle();
  const ingested = mem();
  const again = renderExposition(state.view(intervalNs), { ...options, extra: selfSeries(state, skipped, 0, Date.now()) });
  const rendered = mem();
  const by = (a: number, b: number): number => a - b;
  const result: ReplayResult = {
    start,
    ingested,
    rendered,
    peakRss: peak,
    ingestMs: ingestMs.sort(by),
    renderMs: renderMs.sort(by),
    series: Math.max(series, again.series),
    tracks: state.size,
  };
  say(JSON.stringify(result));
}

// ---------------------------------------------------------------- HTTP

interface HttpRun {
  readonly ms: readonly number[];
  /** CPU time of this process (the exporter's side: render, fastify, the socket writes; GC threads too) per GET */
  readonly cpuMs: readonly number[];
  readonly bytes: number;
}

/**
 * GET /metrics over loopback: the exporter's fastify app (buildExporterApp, as
 * runExporter builds it) listening on a free port of 127.0.0.1, fetched by curl
 * (time_total: connect to last byte). curl runs in its own process, so the
 * figure is the server's work plus the transfer, not a client's parsing.
 */
async function httpRuns(
  state: ExporterState, skipped: SkipStats, config: ExporterConfig, runs: number, before?: (k: number) => Promise<void>, reuseBodies = true,
): Promise<HttpRun> {
  // every GET renders: back to back, the pacer would answer most of them with the render before
  const app = await appOf(state, skipped, config, { reuseFactor: 0 }, reuseBodies);
  const ms: number[] = [];
  const cpuMs: number[] = [];
  let bytes = 0;
  try {
    await app.listen({ host: '127.0.0.1', port: 0 });
    const { port } = app.server.address() as { port: number };
    const url = `http://127.0.0.1:${port}/metrics`;
    for (let k = 0; k < RENDER_WARMUP + runs; k++) {
      await before?.(k);
      const c0 = process.cpuUsage();
      const stdout = await run('curl', ['-sS', '-o', '/dev/null', '--max-time', '60', '-w', '%{http_code} %{time_total} %{size_download}', url], 70_000);
      const [code, seconds, size] = stdout.trim().split(' ');
      if (code !== '200') throw new Error(`GET ${url}: HTTP ${code}`);
      const c = process.cpuUsage(c0);
      if (k >= RENDER_WARMUP) {
        ms.push(Number(seconds) * 1000);
        cpuMs.push((c.user + c.system) / 1000);
      }
      bytes = Number(size);
    }
  } finally {
    await app.close();
  }
  return { ms: ms.sort((a, b) => a - b), cpuMs: cpuMs.sort((a, b) => a - b), bytes };
}

async function appOf(state: ExporterState, skipped: SkipStats, config: ExporterConfig, pacing: RenderPacerOptions, reuseBodies = true): Promise<FastifyInstance> {
  const { buildExporterApp } = await import('../../src/exporter/app.js');
  return buildExporterApp({
    state,
    skipped,
    intervalMs: config.intervalMs,
    forgetAfterMs: config.forgetAfterMs,
    render: renderOptionsOf(config),
    natsConnected: () => true,
    pacing,
    ...(reuseBodies ? {} : { bodies: false as const }),
    log: silentLogger(),
  });
}

interface PairRun {
  /** CPU of this process (renders, fastify, socket writes) per second of scraping */
  readonly cpuMsPerS: number;
  readonly gets: number;
  /** answered with the render before (rezolus_exporter_scrapes_reused_total at the end) */
  readonly reused: number;
  readonly medianMs: number;
}

/**
 * Two Prometheus replicas scraping the exporter every second (the second
 * 300 ms after the first, each GET by curl), for `seconds`: what the render
 * pacer (src/exporter/pacer.ts) saves when its default is on, against a
 * render per GET.
 */
async function pairRuns(state: ExporterState, skipped: SkipStats, config: ExporterConfig, seconds: number, pacing: RenderPacerOptions): Promise<PairRun> {
  const app = await appOf(state, skipped, config, pacing);
  try {
    await app.listen({ host: '127.0.0.1', port: 0 });
    const { port } = app.server.address() as { port: number };
    const url = `http://127.0.0.1:${port}/metrics`;
    const ms: number[] = [];
    const t0 = Date.now() + 1000 - (Date.now() % 1000);
    const replica = async (offsetMs: number): Promise<void> => {
      for (let k = 0; k < seconds; k++) {
        const at = t0 + k * 1000 + offsetMs;
        if (at > Date.now()) await new Promise((r) => setTimeout(r, at - Date.now()));
        const out = await run('curl', ['-sS', '-o', '/dev/null', '--max-time', '60', '-w', '%{http_code} %{time_total}', url], 70_000);
        const [code, s] = out.trim().split(' ');
        if (code !== '200') throw new Error(`GET ${url}: HTTP ${code}`);
        ms.push(Number(s) * 1000);
      }
    };
    await new Promise((r) => setTimeout(r, t0 - Date.now()));
    const c0 = process.cpuUsage();
    const w0 = Date.now();
    await Promise.all([replica(0), replica(300)]);
    const c = process.cpuUsage(c0);
    const wallS = (Date.now() - w0) / 1000;
    const last = (await app.inject({ method: 'GET', url: '/metrics' })).body;
    const reused = Number(/^rezolus_exporter_scrapes_reused_total (\d+)$/m.exec(last)?.[1] ?? Number.NaN);
    return { cpuMsPerS: (c.user + c.system) / 1000 / wallS, gets: ms.length, reused, medianMs: quantile(ms.sort((a, b) => a - b), 0.5) };
  } finally {
    await app.close();
  }
}

async function main(): Promise<void> {
  const config = loadExporterConfig(undefined);
  const intervalNs = BigInt(config.intervalMs) * 1_000_000n;
  say(`exporter-ingest: ${HOSTS} hosts × ${SLOTS} sampler slots at 1 Hz`);
  say(`machine: ${machine()}`);
  say(
    `exporter defaults: interval ${config.intervalMs} ms, summaries ${config.summaries}, histograms ${config.histograms}, ` +
      `oversample [${config.oversampleMetrics.join(', ')}] at [${config.oversamplePercentiles.join(', ')}]`,
  );
  const slots = await buildSlots();
  const seriesPerHost = slots.reduce((a, s) => a + s.base.length, 0);
  say(`  fleet: ${SLOTS} slots, ${seriesPerHost} series per host in frames (${slots.map((s) => `${s.sampler} ${s.base.length}`).join(', ')})`);

  // ---- memory and the 1 Hz duty cycle, in a child process that only ingests and renders
  const { ingestOnly, withRenders: replay } = await replayPhase(slots);
  gc();

  // ---- ingest timing, over pre-encoded frames
  const tBuild = nowNs();
  const totalSeconds = WARMUP + SECONDS;
  // The simulated timeline ends AHEAD_S seconds from now, so the /metrics handler's forget()
  // (forget_after, 1 min by default) keeps every host until the end of the run.
  const t0Ns = BigInt(Date.now() + (AHEAD_S - totalSeconds) * 1000) * 1_000_000n;
  const seconds = encodeSeconds(slots, HOSTS, 0, totalSeconds, t0Ns);
  const frameCount = seconds.reduce((a, s) => a + s.frames.length, 0);
  const frameBytes = seconds.reduce((a, s) => a + s.bytes, 0);
  say(
    `\n${int(frameCount)} frames pre-encoded (${WARMUP} s warm-up + ${SECONDS} s timed), ${fmt(frameBytes / frameCount, 0)} B per frame on average, ` +
      `in ${fmt(msSince(tBuild) / 1000, 1)} s`,
  );
  const known = new Map<string, Descriptor>(slots.map((s) => [s.encoded.hash, parseDescriptor(s.encoded.json)]));
  const cache = new DescriptorCache(fakeDescriptorBucket(slots.map((s) => s.encoded.json)), silentLogger());
  const skipped = emptySkipStats();
  const state = newState(config);
  const consumer = asyncConsumer(state, cache, skipped);
  for (const s of seconds.slice(0, WARMUP)) await consumer(s);
  await profileStart();
  const main = await timed(seconds.slice(WARMUP), 0, consumer);
  await profileStop('ingest');
  if (state.stats.ingested !== frameCount || skipped.garbage + skipped.invalid + skipped.unknownDescriptor + skipped.wrongSubject > 0) {
    throw new Error(`ingested ${state.stats.ingested} of ${frameCount} frames; skipped ${JSON.stringify(skipped)}, state ${JSON.stringify(state.stats)}`);
  }
  // the same frames through cheaper paths, each into a fresh state: where the time goes
  const syncRun = await timed(seconds, WARMUP, syncConsumer(newState(config), known));
  const noRatesRun = await timed(seconds, WARMUP, syncConsumer(new ExporterState({ intervalNs }), known));
  const decodeRun = await timed(seconds, WARMUP, decodeOnly());
  const resolveRun = await timed(seconds, WARMUP, decodeResolve(known));
  seconds.length = 0;
  gc();

  // ---- render timing: the whole fleet, then a fleet scaled to about SERIES_TARGET series
  await profileStart();
  const [full] = renderRuns(state, skipped, config, RENDERS) as [RenderRun];
  await profileStop('render');
  const scaledHosts = Math.max(1, Math.round(SERIES_TARGET / (full.result.series / HOSTS)));
  const scaledState = newState(config);
  const scaledSkipped = emptySkipStats();
  {
    const scaledConsumer = asyncConsumer(scaledState, cache, scaledSkipped);
    for (const s of encodeSeconds(slots, scaledHosts, 0, 3, BigInt(Date.now() + (AHEAD_S - 3) * 1000) * 1_000_000n)) await scaledConsumer(s);
  }
  gc();
  const [scaled] = renderRuns(scaledState, scaledSkipped, config, RENDERS) as [RenderRun];
  // the peer in the same process: prom-client holding the same series (parsed back from the scaled render)
  let peer: { totalMs: number[]; cpuMs: number[]; bytes: number; series: number };
  {
    const { registry, series } = promClientRegistry(scaled.body.toString('utf8'));
    gc();
    peer = { ...(await promClientRuns(registry, RENDERS)), series };
    registry.clear();
  }
  // the same target with the oversampling view off ([oversample] metrics = []): fewer lines per host, more hosts
  const plainConfig: ExporterConfig = { ...config, oversampleMetrics: [] };
  const plainHosts = Math.max(1, Math.round(SERIES_TARGET / (seriesPerHost + 1)));
  let plain: RenderRun;
  {
    const plainState = newState(plainConfig);
    const plainSkipped = emptySkipStats();
    const plainConsumer = asyncConsumer(plainState, cache, plainSkipped);
    for (const s of encodeSeconds(slots, plainHosts, 0, 3, BigInt(Date.now() + (AHEAD_S - 3) * 1000) * 1_000_000n)) await plainConsumer(s);
    gc();
    [plain] = renderRuns(plainState, plainSkipped, plainConfig, RENDERS) as [RenderRun];
  }

  // ---- this tree's renderer and the one before issue 19, taking turns on the same states
  const paired = RENDERERS.length < 2 ? undefined : { scaled: renderRuns(scaledState, scaledSkipped, config, RENDERS, RENDERERS), full: renderRuns(state, skipped, config, RENDERS, RENDERERS) };

  // ---- gzip of the fleet's body (what Accept-Encoding: gzip would cost the exporter)
  const gzipRuns = [1, 6].map((level) => {
    const cpu: number[] = [];
    let size = 0;
    for (let k = 0; k < 3; k++) {
      const c0 = process.cpuUsage();
      size = gzipSync(full.body, { level, strategy: zlibConstants.Z_DEFAULT_STRATEGY }).length;
      const c = process.cpuUsage(c0);
      cpu.push((c.user + c.system) / 1000);
    }
    return { level, cpuMs: cpu.sort((a, b) => a - b)[1] as number, size };
  });

  // ---- GET /metrics over loopback
  gc();
  const httpScaled = await httpRuns(scaledState, scaledSkipped, config, RENDERS);
  gc();
  const httpFull = await httpRuns(state, skipped, config, Math.min(RENDERS, 10));
  // the same with a new body buffer per render (before body-buffers.ts), then with reuse again: a same-run ratio
  gc();
  const httpNewBodies = await httpRuns(state, skipped, config, Math.min(RENDERS, 10), undefined, false);
  gc();
  const httpFullAgain = await httpRuns(state, skipped, config, Math.min(RENDERS, 10));
  // again with one new second of the fleet's frames ingested before each GET (not timed), as
  // between two scrapes: no line of the last render can be reused
  let httpFresh: HttpRun;
  {
    const freshRuns = Math.min(RENDERS, 10);
    const more = encodeSeconds(slots, HOSTS, totalSeconds, RENDER_WARMUP + freshRuns, t0Ns);
    const before = state.stats.ingested;
    httpFresh = await httpRuns(state, skipped, config, freshRuns, async (k) => {
      await consumer(more[k] as Second);
      gc();
    });
    if (state.stats.ingested - before !== more.reduce((a, x) => a + x.frames.length, 0)) throw new Error('fresh frames were not all ingested');
  }
  // two replicas scraping at 1 Hz: a render per GET, then the default pacing
  gc();
  const pairs = [
    { label: 'a render per GET', run: await pairRuns(state, skipped, config, PAIR_SECONDS, { reuseFactor: 0 }) },
    { label: 'default pacing', run: await pairRuns(state, skipped, config, PAIR_SECONDS, {}) },
  ];
  const forgotten = state.stats.forgotten + scaledState.stats.forgotten;
  if (forgotten > 0) say(`warning: forget() dropped ${forgotten} tracks during the HTTP runs (the run took more than ${AHEAD_S} s?)`);

  // ---- report
  const rate = (r: IngestRun): number => r.frames / (r.wallMs / 1000);
  const perSec = [...main.perSecondMs].sort((a, b) => a - b);
  const usPer = (r: IngestRun): number => (r.wallMs * 1000) / r.frames;
  const q = (a: readonly number[], p: number): string => fmt(quantile(a, p), 1);
  say(`\nmemory phase (child processes: ${int(replay.tracks)} tracks, ${int(replay.series)} series per render, ${MEMORY_SECONDS} s, the first ${REPLAY_SKIP} s left out of the timings)`);
  const memRow = (label: string, m: Mem): void =>
    say(
      `  ${label.padEnd(50)} RSS ${fmt(m.rss, 1).padStart(7)} MiB   heapUsed ${fmt(m.heapUsed, 1).padStart(6)} MiB of ${fmt(m.heapTotal, 1).padStart(6)} MiB committed   ` +
        `external ${fmt(m.external, 1).padStart(5)} MiB`,
    );
  memRow('at start (modules loaded)', replay.start);
  memRow('ingest only: at the end, GC, 1 s pause', ingestOnly.ingested);
  say(`  ${'ingest only: peak RSS (VmHWM)'.padEnd(50)} ${fmt(ingestOnly.peakRss, 1)} MiB`);
  memRow('ingest + 1 Hz renders: at the end, GC, 1 s pause', replay.ingested);
  memRow('ingest + 1 Hz renders: right after a render', replay.rendered);
  say(`  ${'ingest + 1 Hz renders: peak RSS (VmHWM)'.padEnd(50)} ${fmt(replay.peakRss, 1)} MiB`);
  say(`  per second: ingest median ${q(replay.ingestMs, 0.5)} ms (p90 ${q(replay.ingestMs, 0.9)}), render median ${q(replay.renderMs, 0.5)} ms (p90 ${q(replay.renderMs, 0.9)}, max ${q(replay.renderMs, 1)})`);
  say(`\ningest (one thread; ${int(main.frames)} frames over ${SECONDS} simulated seconds, after ${WARMUP} s warm-up)`);
  say(
    `  FrameIntake (as subscribeFrames) → ingest, batches of ${BATCH}: ${int(rate(main))} frames/s wall, ` +
      `${int(main.frames / (main.cpuMs / 1000))} frames/s per CPU-second (process CPU incl. GC threads ${fmt(main.cpuMs, 0)} ms for ${fmt(main.wallMs, 0)} ms wall); ` +
      `${fmt(usPer(main), 2)} µs per frame; one simulated second (${int(HOSTS * SLOTS)} frames) took ${fmt(quantile(perSec, 0), 0)}–${fmt(quantile(perSec, 1), 0)} ms, median ${fmt(quantile(perSec, 0.5), 0)} ms`,
  );
  say('  breakdown, µs per frame (sync passes over the same frames, each into a fresh state):');
  const step = (label: string, us: number, r: IngestRun): void => say(`    ${label.padEnd(58)} ${fmt(us, 2).padStart(6)}  (${int(rate(r))} frames/s cumulative)`);
  step('decodeFrame', usPer(decodeRun), decodeRun);
  step('+ resolveFrame', usPer(resolveRun) - usPer(decodeRun), resolveRun);
  step('+ subject check + ExporterState.ingest, no oversampling', usPer(noRatesRun) - usPer(resolveRun), noRatesRun);
  step('+ oversampling rates (default metrics)', usPer(syncRun) - usPer(noRatesRun), syncRun);
  step('+ FrameIntake: promises, cache, order per subject, seq guard', usPer(main) - usPer(syncRun), main);

  say("\nrender (state.view(interval) + renderExposition with the config defaults and the exporter's own series)");
  renderLine(`${HOSTS} hosts`, full);
  renderLine(`${scaledHosts} hosts`, scaled);
  renderLine(`${plainHosts} hosts, oversampling off`, plain);
  say(
    `  peer, prom-client ${PROM_CLIENT_VERSION} Registry.metrics() + Buffer.from, the same ${int(peer.series)} series (${fmt(peer.bytes / MiB, 2)} MiB): ` +
      `median ${fmt(quantile(peer.totalMs, 0.5), 1)} ms, p90 ${fmt(quantile(peer.totalMs, 0.9), 1)} ms, CPU median ${fmt(quantile(peer.cpuMs, 0.5), 1)} ms; ` +
      `ratio of the exporter's ${scaledHosts}-host render to it: median ${fmt(quantile(scaled.totalMs, 0.5) / quantile(peer.totalMs, 0.5), 2)}, ` +
      `p90 ${fmt(quantile(scaled.totalMs, 0.9) / quantile(peer.totalMs, 0.9), 2)}, CPU ${fmt(quantile(scaled.cpuMs, 0.5) / quantile(peer.cpuMs, 0.5), 2)}`,
  );
  if (paired !== undefined) {
    say(`\nthis tree's renderer and the one before issue 19, taking turns (${RENDERS} rounds each, the same state, view + render until the body is bytes):`);
    for (const [label, [a, b]] of [[`${scaledHosts} hosts`, paired.scaled], [`${HOSTS} hosts`, paired.full]] as [string, [RenderRun, RenderRun]][]) {
      renderLine(`${label}, this tree`, a);
      renderLine(`${label}, before issue 19`, b);
      const r = (x: readonly number[], y: readonly number[], p: number): string => fmt(quantile(x, p) / quantile(y, p), 2);
      say(`  ${label}: new/old wall median ${r(a.totalMs, b.totalMs, 0.5)}, p90 ${r(a.totalMs, b.totalMs, 0.9)}, CPU median ${r(a.cpuMs, b.cpuMs, 0.5)}`);
    }
  }
  for (const g of gzipRuns) {
    say(
      `  gzip level ${g.level} of the ${HOSTS}-host body (${fmt(full.body.length / MiB, 2)} MiB): ${fmt(g.cpuMs, 0)} ms CPU (median of 3), ` +
        `${fmt(g.size / MiB, 2)} MiB (${fmt(full.body.length / g.size, 1)}×)`,
    );
  }
  const httpLine = (label: string, r: HttpRun): void =>
    say(
      `  GET /metrics over loopback (curl), ${label}: median ${fmt(quantile(r.ms, 0.5), 1)} ms, p90 ${fmt(quantile(r.ms, 0.9), 1)} ms, ` +
        `exporter CPU median ${fmt(quantile(r.cpuMs, 0.5), 1)} ms, ${r.ms.length} runs, ${fmt(r.bytes / MiB, 2)} MiB body`,
    );
  httpLine(`${scaledHosts} hosts`, httpScaled);
  httpLine(`${HOSTS} hosts`, httpFull);
  httpLine(`${HOSTS} hosts, a new body buffer per render`, httpNewBodies);
  httpLine(`${HOSTS} hosts, bodies in reused memory again`, httpFullAgain);
  httpLine(`${HOSTS} hosts, a new second of frames ingested before each`, httpFresh);
  for (const { label, run: r } of pairs) {
    say(
      `  two replicas scraping ${HOSTS} hosts at 1 Hz for ${PAIR_SECONDS} s, ${label}: exporter CPU ${fmt(r.cpuMsPerS, 0)} ms a second, ` +
        `${r.reused} of ${r.gets} GETs answered with the render before, GET median ${fmt(r.medianMs, 1)} ms`,
    );
  }

  const ingestMet = rate(main) >= TARGET_FRAMES_PER_S;
  const scaledP50 = quantile(scaled.totalMs, 0.5);
  const scaledP90 = quantile(scaled.totalMs, 0.9);
  const renderMet = scaledP90 <= TARGET_RENDER_MS;
  const row = (a: string, b: string, c: string, d: string): void => say(`  ${a.padEnd(46)} ${b.padStart(26)}  ${c.padEnd(12)} ${d}`);
  say('\nsummary');
  row('figure', 'measured', 'target', 'verdict');
  row('ingest, frames/s on one thread', int(rate(main)), '≥ 50,000', ingestMet ? 'met' : 'NOT MET');
  row(`render ${int(scaled.result.series)} series (${scaledHosts} hosts), ms`, `${fmt(scaledP50, 1)} median, ${fmt(scaledP90, 1)} p90`, '≤ 50', renderMet ? 'met (p90)' : 'NOT MET (p90)');
  row(
    `render ${int(full.result.series)} series (${HOSTS} hosts), ms`,
    `${fmt(quantile(full.totalMs, 0.5), 1)} median, ${fmt(quantile(full.totalMs, 0.9), 1)} p90`,
    '',
    `${fmt((quantile(full.totalMs, 0.5) / full.result.series) * 1e6, 0)} ns per series`,
  );
  row(
    `render ${int(plain.result.series)} series, oversampling off, ms`,
    `${fmt(quantile(plain.totalMs, 0.5), 1)} median, ${fmt(quantile(plain.totalMs, 0.9), 1)} p90`,
    '(≤ 50)',
    quantile(plain.totalMs, 0.9) <= TARGET_RENDER_MS ? 'met (p90)' : 'not met (p90)',
  );
  row(
    `prom-client, the same ${int(peer.series)} series, ms`,
    `${fmt(quantile(peer.totalMs, 0.5), 1)} median, ${fmt(quantile(peer.totalMs, 0.9), 1)} p90`,
    '',
    `exporter/prom-client ${fmt(quantile(scaled.totalMs, 0.5) / quantile(peer.totalMs, 0.5), 2)} (median)`,
  );
  const httpFullMet = quantile(httpFull.ms, 0.5) <= TARGET_GET_MS;
  row(`GET /metrics, ${scaledHosts} hosts, ms`, `${fmt(quantile(httpScaled.ms, 0.5), 1)} median, ${fmt(quantile(httpScaled.ms, 0.9), 1)} p90`, '', '');
  row(
    `GET /metrics, ${HOSTS} hosts, ms`,
    `${fmt(quantile(httpFull.ms, 0.5), 1)} median, ${fmt(quantile(httpFull.ms, 0.9), 1)} p90`,
    `≤ ${TARGET_GET_MS}`,
    `${httpFullMet ? 'met (median)' : 'NOT MET (median)'}; exporter CPU ${fmt(quantile(httpFull.cpuMs, 0.5), 1)} ms`,
  );
  row(
    `GET /metrics, ${HOSTS} hosts, new frames before each, ms`,
    `${fmt(quantile(httpFresh.ms, 0.5), 1)} median, ${fmt(quantile(httpFresh.ms, 0.9), 1)} p90`,
    '',
    `exporter CPU ${fmt(quantile(httpFresh.cpuMs, 0.5), 1)} ms`,
  );
  row(`exporter process at start (tsx loaded), MiB`, fmt(replay.start.rss, 1), '', `heapUsed ${fmt(replay.start.heapUsed, 1)}`);
  row(`RSS, ${HOSTS} hosts ingested (${MEMORY_SECONDS} s), GC, MiB`, fmt(replay.ingested.rss, 1), '', `heapUsed ${fmt(replay.ingested.heapUsed, 1)}`);
  row('RSS right after a render, MiB', fmt(replay.rendered.rss, 1), '', `heapUsed ${fmt(replay.rendered.heapUsed, 1)}`);
  row(`peak RSS, ${MEMORY_SECONDS} s of ingest only, MiB`, fmt(ingestOnly.peakRss, 1), '', '');
  row(`peak RSS, ${MEMORY_SECONDS} s of ingest + 1 Hz renders, MiB`, fmt(replay.peakRss, 1), '', '');
  row('one core busy at 1 Hz (ingest + render)', `${fmt(((quantile(replay.ingestMs, 0.5) + quantile(replay.renderMs, 0.5)) / 10), 0)} %`, '', 'median second');
  say('');
  if (!ingestMet) say(`TARGET MISSED: ingest ${int(rate(main))} frames/s < ${int(TARGET_FRAMES_PER_S)}`);
  if (!httpFullMet) say(`TARGET MISSED: GET /metrics for ${HOSTS} hosts median ${fmt(quantile(httpFull.ms, 0.5), 1)} ms > ${TARGET_GET_MS} ms`);
  if (!renderMet) say(`TARGET MISSED: render of ${int(scaled.result.series)} series p90 ${fmt(scaledP90, 1)} ms > ${TARGET_RENDER_MS} ms`);
  if (ingestMet && renderMet && httpFullMet) say('all targets met');
  if (sink < 0) say(String(sink));
}

(flags.replay === undefined ? main() : replayMain(flags.replay, flags['replay-render'])).then(
  () => process.exit(0),
  (error: unknown) => {
    process.stderr.write(`exporter-ingest failed: ${error instanceof Error ? (error.stack ?? error.message) : String(error)}\n`);
    cleanup();
    process.exit(1);
  },
);
