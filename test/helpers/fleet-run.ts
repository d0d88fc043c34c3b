/**
 * One fleet run end to end on real NATS (issue 19): N simulated hosts
 * published through the real Publisher by forked load processes
 * (fleet-worker.ts) into a private nats-server with JetStream (or the
 * 3-node cluster at R3), the stream and descriptor bucket made as the agent
 * makes them, and the consumers as separate CLI processes
 * (fleet-consumers.ts). The exporter is scraped at 1 Hz; each scrape falls
 * at another phase of the second, so the sim_publish_time every host shows
 * tells how long after publishing a frame was visible. CPU and RSS of every
 * process over the measured window, stream bytes over it, then the audits
 * of fleet-audit.ts. Used by test/bench/fleet.ts and
 * test/e2e/fleet-scale.test.ts.
 */
import { MAX_LAG_WAIT_NS } from '../../src/sources/window-end.js';
import { fork, type ChildProcess } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { jetstreamManager } from '@nats-io/jetstream';
import { connect } from '@nats-io/transport-node';
import { descriptorBucket } from '../../src/bus/kv.js';
import { ensureStream } from '../../src/bus/stream.js';
import { loadAgentConfig } from '../../src/config/agent.js';
import { silentLogger } from '../../src/log/logger.js';
import { SAMPLER_NAMES } from '../../src/samplers/registry.js';
import { cpuTicks, CLK_TCK, memKiB } from '../bench/common.js';
import { clusterHealthy, startCluster } from './cluster.js';
import { retryOnTimeout } from '../../src/bus/retry.js';
import { type Consumer, killOnExit, removeOnExit, startAlert, startExporter, startHindsight, startRecorder, startViewer } from './fleet-consumers.js';
import { exporterTally, parquetMissing, parseScrape, type ExporterScrape, type Tally } from './fleet-audit.js';
import { fleetSamplers } from './fleet-shape.js';
import type { FrameRef, WorkerMessage, WorkerStart } from './fleet-worker.js';
import { startTestNats } from './nats.js';
import { simHost } from './sim-fleet.js';

export type ConsumerName = 'exporter' | 'recorder' | 'hindsight' | 'alert' | 'viewer';
export const ALL_CONSUMERS: readonly ConsumerName[] = ['exporter', 'recorder', 'hindsight', 'alert', 'viewer'];

export interface FleetRunOptions {
  readonly hosts: number;
  /** ticks published; the measured window is the ticks after `warmup` */
  readonly seconds: number;
  readonly warmup: number;
  /** load processes */
  readonly workers: number;
  /** one connection per load process instead of one per host */
  readonly shared: boolean;
  /** each host's frames of a tick in one message (the agent's [stream] bundle) */
  readonly bundle?: boolean;
  /** 1: one exporter of '*'; 2: two, hosts with an even and an odd last digit */
  readonly exporterShards: 1 | 2;
  /**
   * how the two shards name their hosts: globs (`sim-*0,sim-*2,…`: matched in the exporter, so
   * each still receives every frame) or the list of host names (one subject filter per host:
   * NATS delivers each shard only its hosts' frames). Default glob.
   */
  readonly shardBy?: 'glob' | 'list';
  readonly cluster: boolean;
  readonly consumers: readonly ConsumerName[];
  readonly drop?: FrameRef;
  readonly double?: FrameRef;
  readonly say: (line: string) => void;
}

export interface ProcFigures {
  readonly name: string;
  /** share of one core over the window */
  readonly cpu: number;
  readonly rssMiB: number;
  readonly hwmMiB: number;
}

export interface FleetResult {
  readonly hosts: number;
  readonly samplers: number;
  readonly ticks: number;
  readonly expected: number;
  readonly tallies: Record<string, Tally>;
  readonly procs: ProcFigures[];
  /** publish → visible in the exporter, ms (upper edge of the 25 ms bin where that share of frames was visible) */
  readonly latencyMs: { readonly p50: number; readonly p99: number; readonly samples: number };
  readonly scrapeMs: { readonly p50: number; readonly max: number; readonly bytes: number; readonly late: number };
  readonly streamBytesPerHostHour: number;
  readonly streamMsgsPerSecond: number;
  /** messages in the stream at the end (the schedule's frames, each stored once: JetStream deduplicates retries) */
  readonly streamMessages: number;
  /** the load processes' worst tick start lag behind the schedule, ms */
  readonly loadLagMs: number;
  readonly publisher: { readonly published: number; readonly dropped: number; readonly duplicates: number; readonly retries: number; readonly flushed: boolean };
  /** wall seconds past the last tick until the recorder's file was written, the dump took, the exporter caught up */
  readonly after: Record<string, number>;
}

const sleep = (ms: number): Promise<void> => new Promise((r) => setTimeout(r, Math.max(0, ms)));
const LOAD_WORKER = join(import.meta.dirname, 'fleet-worker.ts');
const BIN = 25;
/** ages followed for the latency, ms */
const MAX_AGE_MS = 10_000;
const RECORD_LEAD_S = 15;

/** Share of visible frames per 25 ms age bin: the smallest age by which a share ≥ q was visible. */
function latencyQuantile(seen: number[], visible: number[], q: number): number {
  for (let b = 0; b < seen.length; b++) {
    if ((seen[b] ?? 0) > 0 && (visible[b] ?? 0) / (seen[b] as number) >= q) return (b + 1) * BIN;
  }
  return Number.POSITIVE_INFINITY;
}

export async function runFleet(o: FleetRunOptions): Promise<FleetResult> {
  const dir = mkdtempSync(join(tmpdir(), 'rezolus-fleet-'));
  const stops: (() => Promise<unknown>)[] = [];
  // the finally below removes it; on a watchdog or Ctrl-C (process.exit) the exit hook does
  const keepDir = removeOnExit(dir);
  const workers: ChildProcess[] = [];
  try {
    // ---- the bus, the stream and the bucket as the agent makes them
    let url: string;
    let natsPids: number[];
    if (o.cluster) {
      const cluster = await startCluster();
      stops.push(() => cluster.dispose());
      if (!(await clusterHealthy(cluster))) throw new Error('the cluster did not become healthy in 60 s');
      url = cluster.url;
      natsPids = cluster.nodes.map((n) => n.process.pid as number);
      const forgetDir = removeOnExit(dirname(cluster.nodes[0]?.configFile ?? dir));
      stops.push(async () => forgetDir());
      for (const pid of natsPids) {
        const forget = killOnExit(pid);
        stops.push(async () => forget());
      }
    } else {
      const server = await startTestNats();
      stops.push(() => server.dispose());
      // run before the dispose (stops run in reverse): a live subscriber the server cut off lost what it held for it
      stops.push(async () => {
        const slow = readFileSync(server.logFile, 'utf8').split('\n').filter((l) => /Slow Consumer/i.test(l));
        if (slow.length > 0) o.say(`  nats-server: ${slow.length} slow consumer events, e.g. ${slow[0]?.slice(0, 300)}`);
      });
      url = server.url;
      natsPids = [server.process.pid as number];
      const forget = killOnExit(natsPids[0] as number);
      const forgetDir = removeOnExit(server.dataDir);
      stops.push(async () => {
        forget();
        forgetDir();
      });
    }
    const agent = loadAgentConfig(undefined, SAMPLER_NAMES, { host: 'fleet-bench', natsUrl: url });
    // the window must hold the whole run for the recorder and hindsight: 4 GiB, 15 min; the cluster config caps each store at 8 GB (an operator sizes max_bytes from the table this prints)
    const stream = { ...agent.stream, maxBytes: 4 * 1024 ** 3, replicas: o.cluster ? 3 : 1 };
    const nc = await connect({ servers: url.split(','), name: 'fleet-bench' });
    stops.push(() => nc.close());
    const jsm = await retryOnTimeout(() => jetstreamManager(nc));
    await retryOnTimeout(() => ensureStream(jsm, stream, silentLogger()));
    await retryOnTimeout(() => descriptorBucket(nc, { ttlMs: agent.descriptorTtlMs, replicas: stream.replicas }));
    const samplers = await fleetSamplers();

    // ---- consumers
    const ticks = o.seconds;
    const consumers = new Map<string, Consumer>();
    const add = (c: Consumer): void => {
      consumers.set(c.name, c);
      stops.push(() => c.stop(3000));
    };
    const has = (c: ConsumerName): boolean => o.consumers.includes(c);
    const exporters: Consumer[] = [];
    if (has('exporter')) {
      const list = (parity: number): string => Array.from({ length: o.hosts }, (_, i) => i).filter((i) => i % 2 === parity).map(simHost).join(',');
      const patterns =
        o.exporterShards === 1 ? ['*']
        : o.shardBy === 'list' ? [list(0), list(1)]
        : ['sim-*0,sim-*2,sim-*4,sim-*6,sim-*8', 'sim-*1,sim-*3,sim-*5,sim-*7,sim-*9'];
      for (const [i, p] of patterns.entries()) {
        const c = await startExporter(patterns.length === 1 ? 'exporter' : `exporter ${i + 1}/2`, url, p, dir);
        add(c);
        exporters.push(c);
      }
    }
    // the recorder's window is fixed when it starts: it starts last, and tick 1 comes at most RECORD_LEAD_S later
    const recordSeconds = RECORD_LEAD_S + ticks + 3;
    const recordOut = join(dir, 'fleet.parquet');
    const dumpOut = join(dir, 'hindsight.parquet');
    if (has('hindsight')) add(await startHindsight(url, dumpOut, dir));
    if (has('alert')) add(await startAlert(url, dir));
    if (has('viewer')) add(await startViewer(url, dir));

    // ---- load processes
    const publishMs = new Map<number, Float64Array>(); // tick -> per host
    let loadLagMs = 0;
    const done: Extract<WorkerMessage, { type: 'done' }>[] = [];
    const per = Math.ceil(o.hosts / o.workers);
    const readyAll: Promise<void>[] = [];
    for (let first = 0; first < o.hosts; first += per) {
      const w = fork(LOAD_WORKER, [], { execArgv: ['--import', 'tsx'], stdio: ['ignore', 'inherit', 'inherit', 'ipc'] });
      workers.push(w);
      const forgetWorker = killOnExit(w.pid as number);
      stops.push(async () => forgetWorker());
      readyAll.push(new Promise((resolve, reject) => {
        w.on('message', (m: WorkerMessage) => {
          if (m.type === 'ready') resolve();
          else if (m.type === 'tick') {
            let row = publishMs.get(m.tick);
            if (row === undefined) publishMs.set(m.tick, (row = new Float64Array(o.hosts)));
            row.set(m.publishMs, m.first);
            loadLagMs = Math.max(loadLagMs, m.lagMs);
          } else done.push(m);
        });
        w.once('exit', (code) => (code === 0 ? undefined : reject(new Error(`load process ${first} exited ${code}`))));
      }));
      const start: WorkerStart = { url, first, count: Math.min(per, o.hosts - first), ticks, shared: o.shared, bundle: o.bundle ?? false, drop: o.drop, double: o.double };
      w.send(start);
    }
    await Promise.all(readyAll);
    const recordStart = Date.now();
    if (has('recorder')) add(await startRecorder(url, recordSeconds, recordOut, dir));
    const t1Ms = Math.ceil((Date.now() + 1500) / 1000) * 1000;
    if (t1Ms - recordStart > RECORD_LEAD_S * 1000) o.say(`  note: the recorder took ${t1Ms - recordStart} ms to start: its window ends before the last ticks`);
    for (const w of workers) w.send({ t1Ms });
    o.say(`  ${o.hosts} hosts × ${samplers.length} samplers on ${o.cluster ? 'the 3-node cluster, R3' : 'one nats-server'}; consumers up: ${[...consumers.keys()].join(', ')}`);

    // ---- the run: scrapes at 1 Hz at a phase that moves by 50 ms a scrape, figures over the window
    const seen = new Array<number>(MAX_AGE_MS / BIN).fill(0);
    const visible = new Array<number>(MAX_AGE_MS / BIN).fill(0);
    const scrapeMs: number[] = [];
    let scrapeBytes = 0;
    let late = 0;
    const scrape = async (c: Consumer): Promise<ExporterScrape> => {
      const r = await fetch(`http://127.0.0.1:${c.port}/metrics`, { signal: AbortSignal.timeout(30_000) });
      return parseScrape(await r.text());
    };
    const pids = (): [string, number][] => [
      ...natsPids.map((p, i): [string, number] => [natsPids.length === 1 ? 'nats-server' : `nats-server n${i + 1}`, p]),
      ...[...consumers].map(([n, c]): [string, number] => [n, c.pid]),
      ...workers.map((w, i): [string, number] => [`load ${i + 1}/${workers.length}`, w.pid as number]),
      ['bench (scrapes)', process.pid],
    ];
    const cpuAt = (): Map<string, number> => new Map(pids().map(([n, p]) => [n, (() => { try { return cpuTicks(p); } catch { return Number.NaN; } })()]));
    const winStart = t1Ms + o.warmup * 1000;
    const winEnd = t1Ms + (ticks - 1) * 1000 + 500;
    let cpu0: Map<string, number> | undefined;
    let cpu1: Map<string, number> | undefined;
    let stream0: { bytes: number; messages: number; at: number } | undefined;
    let stream1: { bytes: number; messages: number; at: number } | undefined;
    const streamState = async (): Promise<{ bytes: number; messages: number; at: number }> => {
      const at = Date.now();
      const s = (await jsm.streams.info(stream.name)).state;
      return { bytes: s.bytes, messages: s.messages, at };
    };
    let lastReport = Date.now();
    for (let j = 0; ; j++) {
      const phase = ((j * 7) % 20) * 50;
      const at = t1Ms + j * 1000 + phase;
      if (at > winEnd + 1000) break;
      if (Date.now() > at) {
        late++;
        continue;
      }
      await sleep(at - Date.now());
      if (cpu0 === undefined && Date.now() >= winStart) {
        cpu0 = cpuAt();
        stream0 = await streamState();
      }
      if (cpu1 === undefined && Date.now() >= winEnd) {
        cpu1 = cpuAt();
        stream1 = await streamState();
      }
      if (exporters.length === 0) continue;
      const sentAt = Date.now();
      const got = await Promise.all(exporters.map(scrape)).catch((error: unknown) => {
        o.say(`  scrape failed: ${String(error)}`);
        return undefined;
      });
      if (got === undefined) continue;
      scrapeMs.push(Date.now() - sentAt);
      scrapeBytes = got.reduce((n, s) => n + s.bytes, 0);
      for (const s of got) {
        for (const [host, v] of s.clock) {
          const index = Number(host.slice(4));
          for (const [, row] of publishMs) {
            const p = row[index] ?? 0;
            if (p === 0 || p > sentAt || p <= sentAt - MAX_AGE_MS) continue;
            const b = Math.floor((sentAt - p) / BIN);
            seen[b] = (seen[b] ?? 0) + 1;
            if (p <= v) visible[b] = (visible[b] ?? 0) + 1;
          }
        }
      }
      if (Date.now() - lastReport > 10_000) {
        lastReport = Date.now();
        const used = got.reduce((n, s) => n + s.used, 0);
        o.say(`  … tick ${Math.floor((Date.now() - t1Ms) / 1000) + 1}/${ticks}: exporter used ${used} frames, scrape ${scrapeMs.at(-1)} ms`);
      }
    }
    cpu1 ??= cpuAt();
    stream1 ??= await streamState();
    cpu0 ??= cpu1;
    stream0 ??= stream1;
    const mem = new Map(pids().map(([n, p]) => [n, (() => { try { return memKiB(p); } catch { return { rss: Number.NaN, hwm: Number.NaN }; } })()]));
    const cpuOf = (c: Consumer): number => {
      try {
        return cpuTicks(c.pid) / CLK_TCK;
      } catch {
        return Number.NaN;
      }
    };

    // ---- after the last tick: the load flushed, then each consumer's audit
    const finished = Date.now();
    // the recorder writes its file after its window: its CPU from the window's end to its exit, sampled as it may exit any time
    const recorderAtEnd = consumers.get('recorder');
    let recorderCpuLast = recorderAtEnd === undefined ? Number.NaN : cpuOf(recorderAtEnd);
    const recorderCpuFrom = recorderCpuLast;
    const sampler = setInterval(() => {
      if (recorderAtEnd?.alive) recorderCpuLast = cpuOf(recorderAtEnd) || recorderCpuLast;
    }, 100);
    stops.push(async () => clearInterval(sampler));
    while (done.length < workers.length && Date.now() - finished < 90_000 + o.hosts * 200) await sleep(200);
    for (const w of workers) if (w.connected) w.send('exit');
    const published = done.reduce((n, d) => n + d.published, 0);
    const publisher = {
      published, dropped: done.reduce((n, d) => n + d.dropped, 0), duplicates: done.reduce((n, d) => n + d.duplicates, 0),
      retries: done.reduce((n, d) => n + d.retries, 0), flushed: done.length === workers.length && done.every((d) => d.flushed),
    };
    const expected = o.hosts * samplers.length * ticks;
    const lastRow = publishMs.get(ticks) ?? new Float64Array(o.hosts);
    const lastClock = new Map(Array.from({ length: o.hosts }, (_, i) => [simHost(i), lastRow[i] as number]));
    const tallies: Record<string, Tally> = {};
    const after: Record<string, number> = {};

    if (exporters.length > 0) {
      // caught up: frames used stop moving (or reach the schedule), up to 60 s
      let last: ExporterScrape[] = [];
      let prev = -1;
      for (const began = Date.now(); Date.now() - began < 60_000; await sleep(1000)) {
        last = await Promise.all(exporters.map(scrape));
        const used = last.reduce((n, s) => n + s.used, 0);
        if (used >= expected || used === prev) break;
        prev = used;
      }
      after.exporter = (Date.now() - finished) / 1000;
      tallies[exporters.length === 1 ? 'exporter' : 'exporter ×2'] = exporterTally(last, expected, lastClock);
    }
    const alert = consumers.get('alert');
    if (alert !== undefined) {
      await alert.stop(30_000);
      const s = alert.logged('alert evaluator stopped') as { frames?: number; skipped?: Record<string, number> } | undefined;
      if (s?.frames === undefined) tallies.alert = { lost: Number.NaN, doubled: Number.NaN, repeats: Number.NaN, note: `no stop line: ${alert.output.slice(-500)}` };
      else {
        const out = s.skipped?.outOfOrder ?? 0;
        const skips = Object.values(s.skipped ?? {}).reduce((n, v) => n + v, 0);
        tallies.alert = { lost: Math.max(0, expected - s.frames), doubled: Math.max(0, s.frames - expected), repeats: out, note: `fed ${s.frames} of ${expected}, skipped ${skips} (out of order ${out})` };
      }
    }
    const hindsight = consumers.get('hindsight');
    if (hindsight !== undefined) {
      const began = Date.now();
      const cpuBefore = cpuOf(hindsight);
      const r = await fetch(`http://127.0.0.1:${hindsight.port}/dump`, { method: 'POST', signal: AbortSignal.timeout(600_000) });
      const d = (await r.json()) as { frames?: number; skipped?: Record<string, number>; written?: boolean; error?: string };
      after.hindsightDump = (Date.now() - began) / 1000;
      after.hindsightDumpCpu = cpuOf(hindsight) - cpuBefore;
      if (d.frames === undefined || !existsSync(dumpOut)) tallies.hindsight = { lost: Number.NaN, doubled: Number.NaN, repeats: Number.NaN, note: `dump failed: ${JSON.stringify(d).slice(0, 300)}` };
      else {
        const p = await parquetMissing(dumpOut, samplers, o.hosts, ticks);
        const out = d.skipped?.outOfOrder ?? 0;
        // frames it used = the schedule's less the missing, plus any taken twice
        tallies.hindsight = { lost: p.missing, doubled: d.frames - (expected - p.missing), repeats: out, note: `dump: ${d.frames} frames read, ${p.rows} rows, out of order ${out}; ${p.examples.join('; ')}` };
      }
    }
    const recorder = consumers.get('recorder');
    if (recorder !== undefined) {
      // its window ends recordSeconds after it started; it writes the file once it has read that far
      const until = Date.now() + 150_000;
      while (recorder.alive && Date.now() < until) await sleep(200);
      clearInterval(sampler);
      after.recorderFileCpu = recorderCpuLast - recorderCpuFrom;
      after.recorderFile = (Date.now() - finished) / 1000;
      if (recorder.alive) o.say('  the recorder had not finished 150 s after the last tick: stopping it');
      await recorder.stop(60_000);
      const s = recorder.logged('recorded') as { frames?: number; spooledMessages?: number; rows?: number } | undefined;
      if (s?.frames === undefined || !existsSync(recordOut)) tallies.recorder = { lost: Number.NaN, doubled: Number.NaN, repeats: Number.NaN, note: `no file: ${recorder.output.slice(-800)}` };
      else {
        const p = await parquetMissing(recordOut, samplers, o.hosts, ticks);
        // frames it used = the schedule's less the missing, plus any taken twice; spooled = every message the durable consumer
        // delivered: a bundle holds a host's frames of a tick, less the one --drop leaves out; --double's repeat is a message of one frame
        const spooled = s.spooledMessages ?? Number.NaN;
        const doubles = o.double === undefined ? 0 : 1;
        const delivered = o.bundle === true ? (spooled - doubles) * samplers.length - (o.drop === undefined ? 0 : 1) + doubles : spooled;
        const repeats = delivered - s.frames;
        // the window's end is in frame time (src/sources/window-end.ts): frames of it that a lagging load
        // published after the end are recorded; only those published after the longest wait for them
        // (the end + 2 s + 2 min of lateness) are not its loss. The window starts about when it logs "recording".
        const windowEnd = Number(recorder.logged('recording')?.time ?? recordStart) + recordSeconds * 1000;
        let late = 0;
        let beyond = 0;
        for (const row of publishMs.values()) {
          for (const p of row) {
            if (p > windowEnd) late += samplers.length;
            if (p > windowEnd + 2000 + Number(MAX_LAG_WAIT_NS / 1_000_000n)) beyond += samplers.length;
          }
        }
        tallies.recorder = { lost: p.missing - beyond, doubled: s.frames - (expected - p.missing), repeats, note: `${late} frames published after its window's end (${beyond} after the longest wait, not counted as lost); recorded ${s.frames} frames of ${delivered} delivered (${spooled} messages spooled), ${p.rows} rows; ${p.examples.join('; ')}` };
      }
    }

    const streamMessages = (await streamState()).messages;
    const windowS = (stream1.at - stream0.at) / 1000;
    const procs: ProcFigures[] = pids().map(([n]) => {
      const m = mem.get(n) ?? { rss: Number.NaN, hwm: Number.NaN };
      const ticksUsed = (cpu1?.get(n) ?? Number.NaN) - (cpu0?.get(n) ?? Number.NaN);
      return { name: n, cpu: ticksUsed / CLK_TCK / windowS, rssMiB: m.rss / 1024, hwmMiB: m.hwm / 1024 };
    });
    return {
      hosts: o.hosts, samplers: samplers.length, ticks, expected, tallies, streamMessages, procs, after, publisher, loadLagMs,
      latencyMs: { p50: latencyQuantile(seen, visible, 0.5), p99: latencyQuantile(seen, visible, 0.99), samples: seen.reduce((a, b) => a + b, 0) },
      scrapeMs: { p50: scrapeMs.length ? [...scrapeMs].sort((a, b) => a - b)[Math.floor(scrapeMs.length / 2)] as number : Number.NaN, max: Math.max(...scrapeMs), bytes: scrapeBytes, late },
      streamBytesPerHostHour: windowS > 0 ? ((stream1.bytes - stream0.bytes) / o.hosts / windowS) * 3600 : Number.NaN,
      streamMsgsPerSecond: windowS > 0 ? (stream1.messages - stream0.messages) / windowS : Number.NaN,
    };
  } finally {
    for (const w of workers) if (w.exitCode === null) w.kill('SIGKILL');
    for (const stop of stops.reverse()) await stop().catch(() => undefined);
    rmSync(dir, { recursive: true, force: true });
    keepDir();
  }
}
