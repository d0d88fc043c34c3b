/**
 * What `rezolus alert` (issue 17) costs, against a private nats-server:
 *
 *  1. Latency: one host publishes a gauge (memory_available) and a latency
 *     histogram (scheduler_runqueue_latency) once a second, as an agent does;
 *     at a known frame both cross a threshold. Four rules watch them: `last`
 *     of the gauge and `p99` of the histogram, each with for = "0s" and
 *     for = "2s". The evaluator is the real CLI in a child process
 *     (`node dist/cli/rezolus.js alert --config F --nats URL`; with
 *     --evaluator tsx, `node --import tsx src/cli/rezolus.ts alert …`).
 *     Figure: from the publish of the first crossing frame to the arrival of
 *     the firing event on rezolus.alerts.>, minus `for`; p50 and max over the
 *     repeats. Split into publish → judged (the event's `at`: when the
 *     evaluator decided, at a tick or on the frame's arrival) and judged →
 *     event (KV compare-and-set, JetStream publish, delivery). Two frame
 *     phases: `agent`, frames at 20 ms past the whole second, as an agent's
 *     (an evaluator deciding only on whole-second ticks sees them ~1 s late);
 *     `spread`, the repeats' phases spread evenly over the second.
 *  2. Scale: SimFleet's 1000 hosts (9 procfs samplers on the fixture root, plus
 *     scheduler_runqueue and blockio_latency histograms added here: 11 frames a
 *     host a second) at 1 Hz, and 20 rules (histogram percentiles, counter
 *     rate / rate_max / increase, gauge min / max / avg / last, one `age`, 7 of
 *     them group = "each": 34 alerts a host). The evaluator runs in a child
 *     process of its own (CHILD_JS below: the same loadAlertsConfig +
 *     runAlert as `rezolus alert`, over the compiled modules, plus an IPC
 *     channel that reports its frames counter), so /proc/<pid>/stat and
 *     status are its own. The warm-up (65 s) fills the longest window (1m).
 *     Over the measured window: CPU as % of one core (utime+stime), VmRSS
 *     and VmHWM, event-loop utilisation, frames/s the evaluator counted
 *     beside frames/s published; then the live heap after a full GC; and the
 *     CPU of this process (the publisher), of nats-server and of the whole
 *     machine, so a reader can tell whether the 2 vCPUs were saturated.
 *     With --profile, a V8 profile of the measured window only, summarised
 *     by module and function (the profiler adds ~5 points of CPU; read
 *     shares). No alert fires in steady state: every
 *     threshold is past what the simulated hosts send (each counter grows
 *     1000 a second, each gauge 1000 a tick), so the figure is evaluation,
 *     not transitions.
 *
 * Targets (issue 17): firing event ≤ 1 s beyond `for`; 1000 hosts × 20 rules
 * at 1 Hz ≤ 25 % of one core. A measurement, not a test: prints the figures
 * with the CPU model and exits 0 when a target is missed (`TARGET MISSED`).
 *
 *   npx tsx test/bench/alert.ts                                  # both parts, about 7 min
 *   npx tsx test/bench/alert.ts --part latency --repeats 10 --phases agent
 *   npx tsx test/bench/alert.ts --part scale [--warmup 65] [--seconds 60] [--profile]
 *   npx tsx test/bench/alert.ts --part scale --hosts 200 --seconds 20
 *   npx tsx test/bench/alert.ts --evaluator tsx     # src/ through tsx instead of dist/
 *   npx tsx test/bench/alert.ts --part scale --dist /tmp/other/dist   # another build (A/B)
 *
 * With dist (the default), dist/ is built first when it is missing or older
 * than a source file (ensureBuilt, as the other process benches do).
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { performance } from 'node:perf_hooks';
import { pathToFileURL } from 'node:url';
import { parseArgs } from 'node:util';
import { jetstreamManager } from '@nats-io/jetstream';
import { headers, type NatsConnection } from '@nats-io/nats-core';
import { connect } from '@nats-io/transport-node';
import type { AlertEvent } from '../../src/alert/contract.js';
import { ALERTS_PREFIX } from '../../src/alert/contract.js';
import { descriptorBucket } from '../../src/bus/kv.js';
import { ensureStream } from '../../src/bus/stream.js';
import { frameMsgId, metricsSubject } from '../../src/bus/subjects.js';
import { loadAgentConfig } from '../../src/config/agent.js';
import { loadAlertsConfig } from '../../src/config/alerts.js';
import { encodeFrame } from '../../src/frame/codec.js';
import { describe } from '../../src/frame/descriptor.js';
import { silentLogger } from '../../src/log/logger.js';
import { fromValues, type SparseHistogram } from '../../src/metrics/histogram.js';
import type { MetricDecl } from '../../src/metrics/metric.js';
import type { Point, Value } from '../../src/metrics/point.js';
import { metricCatalog } from '../../src/samplers/catalog.js';
import { SAMPLER_NAMES } from '../../src/samplers/registry.js';
import { startTestNats, type TestNats } from '../helpers/nats.js';
import { SimFleet } from '../helpers/sim-fleet.js';
import {
  alive, CLK_TCK, cpuTicks, ENTRY, ensureBuilt, fmt, memKiB, ROOT, say, sleep, sleepUntil, stderrTail, stopChild, printProfileTable, profileTotals, type CallFrame, type CpuProfile,
} from './common.js';

const { values: args } = parseArgs({
  options: {
    part: { type: 'string', default: 'all' },
    repeats: { type: 'string', default: '20' },
    phases: { type: 'string', default: 'agent,spread' },
    hosts: { type: 'string', default: '1000' },
    warmup: { type: 'string', default: '65' },
    seconds: { type: 'string', default: '60' },
    profile: { type: 'boolean', default: false },
    top: { type: 'string', default: '25' },
    keep: { type: 'boolean', default: false },
    evaluator: { type: 'string', default: 'dist' },
    dist: { type: 'string' },
  },
});

/** dist: the compiled CLI and modules (what bin/rezolus.js runs; built first when stale); tsx: src/ through tsx (its keepNames adds a defineProperty per closure made) */
if (args.evaluator !== 'dist' && args.evaluator !== 'tsx') throw new Error('--evaluator dist|tsx');
const FROM_DIST = args.evaluator === 'dist';
/** --dist DIR: another build's dist/ (an A/B of a change to the evaluator, as record.ts --against does); not rebuilt */
const DIST = args.dist === undefined ? join(ROOT, 'dist') : resolve(args.dist);
const CLI_ARGV = FROM_DIST ? [args.dist === undefined ? ENTRY : join(DIST, 'cli', 'rezolus.js')] : ['--import', 'tsx', join(ROOT, 'src', 'cli', 'rezolus.ts')];
const CPUINFO = readFileSync('/proc/cpuinfo', 'utf8');
const CPU_MODEL = /model name\s*:\s*(.*)/.exec(CPUINFO)?.[1] ?? 'unknown CPU';
const CPUS = CPUINFO.match(/^processor/gm)?.length ?? 0;
const MACHINE = `${CPU_MODEL}, ${CPUS} CPUs`;
const catalog = metricCatalog();

function decl(name: string): MetricDecl {
  const m = catalog.get(name);
  if (m === undefined) throw new Error(`no metric ${name} in the catalog`);
  return m;
}

function quantile(sorted: readonly number[], q: number): number {
  if (sorted.length === 0) return Number.NaN;
  return sorted[Math.min(sorted.length - 1, Math.max(0, Math.ceil(q * sorted.length) - 1))] as number;
}

/** busy and total jiffies of the whole machine (/proc/stat, first line) */
function machineTicks(): { busy: number; total: number } {
  const f = (readFileSync('/proc/stat', 'latin1').split('\n')[0] ?? '').trim().split(/\s+/).slice(1).map(Number);
  const total = f.slice(0, 8).reduce((a, b) => a + b, 0);
  return { busy: total - (f[3] ?? 0) - (f[4] ?? 0), total };
}

// ---------------------------------------------------------------- cleanup

const children = new Set<ChildProcess>();
let nats: TestNats | undefined;
const dirs: string[] = [];
let cleaning: Promise<void> | undefined;
function cleanup(): Promise<void> {
  cleaning ??= (async () => {
    for (const c of children) await stopChild(c);
    await nats?.dispose().catch(() => undefined);
    if (!args.keep) for (const d of dirs) rmSync(d, { recursive: true, force: true });
  })();
  return cleaning;
}

// ---------------------------------------------------------------- part 1: latency

const LATENCY_RULES = `
[general]
every = "1s"

[capture]
enabled = false

[[rule]]
name = "lat_gauge_for0"
metric = "memory_available"
reduce = "last"
op = "<"
threshold = "256MiB"
for = "0s"
keep_firing_for = "0s"

[[rule]]
name = "lat_gauge_for2"
metric = "memory_available"
reduce = "last"
op = "<"
threshold = "256MiB"
for = "2s"
keep_firing_for = "0s"

[[rule]]
name = "lat_hist_for0"
metric = "scheduler_runqueue_latency"
reduce = "p99"
window = "2s"
op = ">"
threshold = "5ms"
for = "0s"
keep_firing_for = "0s"

[[rule]]
name = "lat_hist_for2"
metric = "scheduler_runqueue_latency"
reduce = "p99"
window = "2s"
op = ">"
threshold = "5ms"
for = "2s"
keep_firing_for = "0s"
`;
const LAT_RULES: Readonly<Record<string, number>> = { lat_gauge_for0: 0, lat_gauge_for2: 2000, lat_hist_for0: 0, lat_hist_for2: 2000 };
const HOST = 'bench-lat';
const INSTANCE = 0x4c41_0001;
const GiB = 1024 ** 3;
const MiB = 1024 ** 2;

/** One host that publishes what the latency part needs: memory_available and scheduler_runqueue_latency, one frame each a second. */
class LatencyHost {
  #seq = 0;
  /** cumulative events: 1000 at 50 µs a frame, plus 1000 at 10 ms a frame while crossing */
  #low = 0;
  #high = 0;
  private constructor(
    private readonly nc: NatsConnection,
    private readonly gaugeHash: string,
    private readonly histHash: string,
  ) {}

  static async start(url: string): Promise<LatencyHost> {
    const nc = await connect({ servers: url, name: 'rezolus-bench-alert-latency' });
    const agent = loadAgentConfig(undefined, SAMPLER_NAMES, { host: HOST, natsUrl: url });
    await ensureStream(await jetstreamManager(nc), agent.stream, silentLogger());
    const kv = await descriptorBucket(nc, { ttlMs: agent.descriptorTtlMs, replicas: agent.stream.replicas });
    const g = describe('memory_meminfo', [{ metric: decl('memory_available'), labels: {}, value: 0 }]);
    const h = describe('scheduler_runqueue', [{ metric: decl('scheduler_runqueue_latency'), labels: {}, value: fromValues([1]) }]);
    await kv.put(g.hash, g.json);
    await kv.put(h.hash, h.json);
    return new LatencyHost(nc, g.hash, h.hash);
  }

  #histogram(): SparseHistogram {
    const low = fromValues([50_000]);
    const high = fromValues([10_000_000]);
    const index = [low.index[0] as number];
    const count = [this.#low];
    if (this.#high > 0) {
      index.push(high.index[0] as number);
      count.push(this.#high);
    }
    return { groupingPower: low.groupingPower, maxValuePower: low.maxValuePower, index, count };
  }

  /** Publishes this second's two frames (ending now); returns Date.now() just before the first publish. */
  async publish(crossing: boolean): Promise<number> {
    this.#seq++;
    this.#low += 1000;
    if (crossing) this.#high += 1000;
    const endNs = BigInt(Date.now()) * 1_000_000n;
    const frames: [string, string, Value][] = [
      ['memory_meminfo', this.gaugeHash, crossing ? 100 * MiB : 8 * GiB],
      ['scheduler_runqueue', this.histHash, this.#histogram()],
    ];
    const t0 = Date.now();
    for (const [sampler, hash, value] of frames) {
      const data = encodeFrame({ host: HOST, sampler, instance: INSTANCE, seq: this.#seq, beginNs: endNs - 1_000_000n, endNs, descriptor: hash }, [value]);
      const h = headers();
      h.set('Nats-Msg-Id', frameMsgId(HOST, sampler, INSTANCE, this.#seq));
      this.nc.publish(metricsSubject(HOST, sampler), data, { headers: h });
    }
    await this.nc.flush();
    return t0;
  }

  async close(): Promise<void> {
    await this.nc.drain().catch(() => this.nc.close());
  }
}

interface LatencySample {
  readonly rule: string;
  readonly phaseMs: number;
  /** publish → event arrival − for */
  readonly beyondFor: number;
  /** publish → the decision that fired (event `at`) − for */
  readonly toTick: number;
  /** event `at` (the decision) → arrival */
  readonly tickToEvent: number;
  /** for > 0: the pending event's `at` → the firing event's `at` */
  readonly held: number;
}

async function latencyPart(server: TestNats): Promise<void> {
  const repeats = Number(args.repeats);
  const phases = (args.phases ?? '').split(',').map((p) => p.trim()).filter((p) => p !== '');
  if (!Number.isInteger(repeats) || repeats < 1 || phases.some((p) => p !== 'agent' && p !== 'spread')) throw new Error('--repeats N (≥ 1) and --phases agent,spread');
  const dir = mkdtempSync(join(tmpdir(), 'rezolus-bench-alert-lat-'));
  dirs.push(dir);
  const config = join(dir, 'alerts.toml');
  writeFileSync(config, LATENCY_RULES);
  say(`\n== latency: 1 host, 4 rules (last of a gauge, p99 of a histogram; for 0s and 2s), ${repeats} repeats per phase (${phases.join(', ')}); evaluator every 1s on whole seconds; ${MACHINE}`);

  const host = await LatencyHost.start(server.url);
  const nc = await connect({ servers: server.url, name: 'rezolus-bench-alert-events' });
  const arrivals: { rule: string; state: string; at: number; arrived: number }[] = [];
  const sub = nc.subscribe(`${ALERTS_PREFIX}.>`, {
    callback: (error, msg) => {
      if (error !== null) return;
      const arrived = Date.now();
      const e = JSON.parse(new TextDecoder().decode(msg.data)) as AlertEvent;
      if (e.kind === 'transition') arrivals.push({ rule: e.rule, state: e.state, at: Date.parse(e.at), arrived });
    },
  });

  const evaluator = spawn(process.execPath, [...CLI_ARGV, 'alert', '--config', config, '--nats', server.url, '--log-level', 'warn'], {
    cwd: ROOT,
    stdio: ['ignore', 'ignore', 'pipe'],
  });
  children.add(evaluator);
  const tail = stderrTail(evaluator);
  const samples: LatencySample[] = [];
  try {
    // the state of every rule as the events tell it
    const state = (rule: string): string | undefined => arrivals.filter((a) => a.rule === rule).at(-1)?.state;
    const anyFiring = (): boolean => Object.keys(LAT_RULES).some((r) => state(r) === 'firing' || state(r) === 'pending');
    let second = Math.floor(Date.now() / 1000) + 1;
    const publishAt = async (phaseMs: number, crossing: boolean): Promise<number> => {
      await sleepUntil(second * 1000 + phaseMs);
      second++;
      if (!alive(evaluator)) throw new Error(`the evaluator exited: ${tail()}`);
      return host.publish(crossing);
    };
    const ruleCount = Object.keys(LAT_RULES).length;
    /** Plain frames until every rule is quiet, then crossing frames until every rule fired: the first crossing publish and each firing event. */
    const cycle = async (phaseMs: number): Promise<{ t0: number; fired: Map<string, { at: number; arrived: number }>; pendingAt: Map<string, number> }> => {
      for (let n = 0; n < 3 || anyFiring(); n++) {
        if (n > 30) throw new Error('the alerts did not resolve within 30 s of plain frames');
        await publishAt(phaseMs, false);
      }
      const fired = new Map<string, { at: number; arrived: number }>();
      let t0: number | undefined;
      for (let n = 0; fired.size < ruleCount; n++) {
        if (n > 10) throw new Error(`after 10 s of crossing frames only ${[...fired.keys()].join(', ') || 'no rule'} fired: ${tail()}`);
        const t = await publishAt(phaseMs, true);
        t0 ??= t;
        // wait out this second, looking for the firing events
        const until = second * 1000 + phaseMs - 5;
        while (Date.now() < until && fired.size < ruleCount) {
          for (const a of arrivals) if (a.state === 'firing' && a.arrived >= t0 && !fired.has(a.rule)) fired.set(a.rule, a);
          await sleep(5);
        }
      }
      const pendingAt = new Map<string, number>();
      for (const a of arrivals) if (a.state === 'pending' && a.arrived >= (t0 as number) && !pendingAt.has(a.rule)) pendingAt.set(a.rule, a.at);
      return { t0: t0 as number, fired, pendingAt };
    };
    // warm-up cycle (the evaluator starts, subscribes, JIT): not counted
    const warmStart = Date.now();
    await cycle(20);
    say(`  warm-up cycle done in ${fmt((Date.now() - warmStart) / 1000, 1)} s`);
    for (const phase of phases) {
      for (let i = 0; i < repeats; i++) {
        second = Math.max(second, Math.floor(Date.now() / 1000) + 1);
        const phaseMs = phase === 'agent' ? 20 : Math.round(((i + 0.5) / repeats) * 1000);
        const { t0, fired, pendingAt } = await cycle(phaseMs);
        for (const [rule, a] of fired) {
          const forMs = LAT_RULES[rule] as number;
          samples.push({ rule: `${phase}:${rule}`, phaseMs, beyondFor: a.arrived - t0 - forMs, toTick: a.at - t0 - forMs, tickToEvent: a.arrived - a.at, held: forMs > 0 ? a.at - (pendingAt.get(rule) ?? Number.NaN) : Number.NaN });
        }
      }
    }
  } finally {
    await sub.drain().catch(() => undefined);
    await nc.close();
    await host.close();
    await stopChild(evaluator);
    children.delete(evaluator);
  }

  say('  publish of the first crossing frame → firing event on rezolus.alerts.>, minus for (ms):');
  say(`  ${'phase'.padEnd(7)} ${'rule'.padEnd(15)} ${'n'.padStart(3)} ${'p50'.padStart(6)} ${'max'.padStart(6)} | to judged p50/max | judged → event p50/max | pending → firing min/max`);
  let worst = 0;
  for (const phase of phases) {
    const groups = [...Object.keys(LAT_RULES), 'all'];
    for (const rule of groups) {
      const s = samples.filter((x) => x.rule.startsWith(`${phase}:`) && (rule === 'all' || x.rule === `${phase}:${rule}`));
      if (s.length === 0) continue;
      const sorted = (f: (x: LatencySample) => number): number[] => s.map(f).sort((a, b) => a - b);
      const b = sorted((x) => x.beyondFor);
      const t = sorted((x) => x.toTick);
      const e = sorted((x) => x.tickToEvent);
      const h = s.map((x) => x.held).filter((x) => !Number.isNaN(x)).sort((x, y) => x - y);
      const held = h.length === 0 ? '' : ` | ${fmt(h[0] as number, 0).padStart(6)} / ${fmt(h.at(-1) as number, 0)}`;
      worst = Math.max(worst, b.at(-1) ?? 0);
      say(
        `  ${phase.padEnd(7)} ${rule.padEnd(15)} ${String(s.length).padStart(3)} ${fmt(quantile(b, 0.5), 0).padStart(6)} ${fmt(b.at(-1) ?? Number.NaN, 0).padStart(6)} | ${fmt(quantile(t, 0.5), 0).padStart(8)} / ${fmt(t.at(-1) ?? Number.NaN, 0).padEnd(8)} | ${fmt(quantile(e, 0.5), 0).padStart(6)} / ${fmt(e.at(-1) ?? Number.NaN, 0).padEnd(6)}${held}`,
      );
    }
  }
  say("  (judged: the event's `at`, when the evaluator decided; an evaluator that decides only on its whole-second ticks sees an agent's frame ~1 s late)");
  const held = samples.filter((x) => x.held > (LAT_RULES[x.rule.split(':')[1] as string] ?? 0) + 500);
  if (held.length > 0) {
    say(`  NOTE: in ${held.length} of ${samples.filter((x) => !Number.isNaN(x.held)).length} firings with for = 2s, pending → firing took a tick more than for (${held.map((x) => x.held).join(', ')} ms): the ticks' clock is jittery`);
  }
  if (worst > 1000) say(`  TARGET MISSED: a firing event came ${worst} ms beyond for (target ≤ 1000 ms)`);
}

// ---------------------------------------------------------------- part 2: scale

/** 20 rules over what SimFleet's hosts (and the two histogram samplers added here) publish; no threshold is reached in steady state. */
const SCALE_RULES = `
[general]
every = "1s"

[capture]
enabled = false

[defaults]
for = "30s"
keep_firing_for = "1m"

# histograms (percentiles of the events in the window)
[[rule]]
name = "runqueue_p99"
metric = "scheduler_runqueue_latency"
reduce = "p99"
window = "10s"
op = ">"
threshold = "5ms"
clear = "2ms"

[[rule]]
name = "runqueue_p999"
metric = "scheduler_runqueue_latency"
reduce = "p999"
window = "30s"
op = ">"
threshold = "20ms"
for = "1m"

[[rule]]
name = "runqueue_max"
metric = "scheduler_runqueue_latency"
reduce = "max"
window = "10s"
op = ">"
threshold = "100ms"
for = "0s"

[[rule]]
name = "running_p99"
metric = "scheduler_running"
reduce = "p99"
window = "10s"
op = ">"
threshold = "50ms"

[[rule]]
name = "offcpu_p50"
metric = "scheduler_offcpu"
reduce = "p50"
window = "1m"
op = ">"
threshold = "1s"

[[rule]]
name = "blockio_p99_by_op"
metric = "blockio_latency"
group = "each"
reduce = "p99"
window = "30s"
op = ">"
threshold = "100ms"
clear = "50ms"

# counters (each simulated counter grows 1000 a second)
[[rule]]
name = "tcp_retransmits"
metric = "network_tcp_retransmitted_segments"
reduce = "rate"
window = "30s"
op = ">"
threshold = "5000/s"

[[rule]]
name = "tcp_retransmit_burst"
metric = "network_tcp_retransmitted_segments"
reduce = "rate_max"
window = "10s"
op = ">"
threshold = "20000/s"
for = "0s"

[[rule]]
name = "cpu_user_busy"
metric = "cpu_usage"
match = { state = "user" }
group = "each"
reduce = "rate"
window = "10s"
op = ">"
threshold = "95%"

[[rule]]
name = "cgroup_throttled"
metric = "cgroup_cpu_bandwidth_throttled_time"
group = "each"
reduce = "rate"
window = "30s"
op = ">"
threshold = "25%"
clear = "10%"

[[rule]]
name = "net_drops"
metric = "network_device_drops"
group = "each"
reduce = "rate"
window = "30s"
op = ">"
threshold = "5000/s"

[[rule]]
name = "net_rx_burst"
metric = "network_device_bytes"
match = { direction = "receive" }
group = "each"
reduce = "rate_max"
window = "10s"
op = ">"
threshold = "1GiB/s"
for = "0s"

[[rule]]
name = "disk_busy"
metric = "blockio_device_busy_time"
group = "each"
reduce = "rate"
window = "10s"
op = ">"
threshold = "90%"

[[rule]]
name = "major_faults"
metric = "memory_major_page_faults"
reduce = "rate"
window = "30s"
op = ">"
threshold = "5000/s"

[[rule]]
name = "cpu_pressure"
metric = "scheduler_pressure"
match = { resource = "cpu", kind = "some" }
reduce = "increase"
window = "1m"
op = ">"
threshold = "30s"

# gauges (each simulated gauge grows 1000 a tick)
[[rule]]
name = "memory_available_low"
metric = "memory_available"
reduce = "min"
window = "30s"
op = "<"
threshold = "256MiB"
clear = "512MiB"
severity = "page"

[[rule]]
name = "cgroup_memory_high"
metric = "cgroup_memory_current"
group = "each"
reduce = "max"
window = "30s"
op = ">"
threshold = "64GiB"

[[rule]]
name = "dirty_high"
metric = "memory_dirty"
reduce = "avg"
window = "1m"
op = ">"
threshold = "4GiB"

[[rule]]
name = "cpu_offline"
metric = "cpu_cores"
reduce = "last"
op = "<"
threshold = 1
for = "0s"

# silence
[[rule]]
name = "host_silent"
metric = "cpu_usage"
reduce = "age"
op = ">"
threshold = "30s"
for = "0s"
keep_firing_for = "0s"
severity = "page"
`;

/** A histogram of 200 values over ~30 buckets from `scale` ns (SimFleet adds 1000 × tick to every bucket). */
function spread(scale: number): SparseHistogram {
  const values: number[] = [];
  for (let i = 0; i < 200; i++) values.push(Math.round(scale * Math.exp((i % 37) / 4)));
  return fromValues(values);
}

/** The histogram samplers the fixture root cannot give (they are BPF ones), with the catalog's declarations. */
function histogramSamplers(): { name: string; points: Point[] }[] {
  return [
    {
      name: 'scheduler_runqueue',
      points: [
        { metric: decl('scheduler_runqueue_latency'), labels: {}, value: spread(25) },
        { metric: decl('scheduler_running'), labels: {}, value: spread(2_000) },
        { metric: decl('scheduler_offcpu'), labels: {}, value: spread(20_000) },
      ],
    },
    {
      name: 'blockio_latency',
      points: ['read', 'write', 'flush', 'discard'].map((op, k) => ({ metric: decl('blockio_latency'), labels: { op }, value: spread(500 * (k + 1)) })),
    },
  ];
}

interface ChildStats {
  readonly frames: number;
  readonly alerts: number;
  readonly transitions: { readonly won: number; readonly published: number };
  readonly elu: number;
  readonly heapUsed: number;
}

/** Sends a request to the evaluator child and waits for its answer. */
function ask<T>(child: ChildProcess, type: string, timeoutMs = 30_000): Promise<T> {
  return new Promise<T>((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`the evaluator did not answer ${type} in ${timeoutMs} ms`)), timeoutMs);
    const on = (m: { type: string; body: T }): void => {
      if (m.type !== type) return;
      clearTimeout(timer);
      child.off('message', on);
      resolve(m.body);
    };
    child.on('message', on);
    child.send({ type });
  });
}

async function scalePart(server: TestNats): Promise<void> {
  const hosts = Number(args.hosts);
  const warmupS = Number(args.warmup);
  const seconds = Number(args.seconds);
  if (!Number.isInteger(hosts) || hosts < 1 || hosts > 1000 || !(warmupS >= 5) || !(seconds >= 10)) throw new Error('--hosts 1..1000, --warmup ≥ 5, --seconds ≥ 10');
  const dir = mkdtempSync(join(tmpdir(), 'rezolus-bench-alert-scale-'));
  dirs.push(dir);
  const config = join(dir, 'alerts.toml');
  writeFileSync(config, SCALE_RULES);
  const rules = loadAlertsConfig(config, catalog, { natsUrl: server.url }).rules;

  const agent = loadAgentConfig(undefined, SAMPLER_NAMES, { host: 'bench', natsUrl: server.url });
  const startS = Math.floor(Date.now() / 1000) + 1;
  const fleet = await SimFleet.start({ natsUrl: server.url, hosts, agent, synthetic: histogramSamplers(), startNs: BigInt(startS) * 1_000_000_000n });
  const perHost = fleet.samplers.length;
  say(`\n== scale: ${hosts} hosts × ${perHost} samplers at 1 Hz (${hosts * perHost} frames/s), ${rules.length} rules; warm-up ${warmupS} s, measured ${seconds} s; ${MACHINE}`);

  const profiling = args.profile === true;
  const evaluator = spawn(process.execPath, ['--expose-gc', ...(FROM_DIST ? [] : ['--import', 'tsx']), '--input-type=module', '-e', CHILD_JS], {
    cwd: ROOT,
    stdio: ['ignore', 'ignore', 'pipe', 'ipc'],
    env: {
      ...process.env,
      BENCH_BASE: pathToFileURL(`${FROM_DIST ? DIST : join(ROOT, 'src')}/`).href,
      BENCH_EXT: FROM_DIST ? '.js' : '.ts',
      BENCH_CONFIG: config,
      BENCH_NATS: server.url,
      BENCH_PROFILE: join(dir, 'evaluator.cpuprofile'),
    },
  });
  children.add(evaluator);
  const tail = stderrTail(evaluator);
  const pid = evaluator.pid as number;
  try {
    await new Promise<void>((resolve, reject) => {
      const timer = setTimeout(() => reject(new Error(`the evaluator was not ready in 60 s: ${tail()}`)), 60_000);
      evaluator.once('exit', () => reject(new Error(`the evaluator exited: ${tail()}`)));
      evaluator.once('message', () => {
        clearTimeout(timer);
        resolve();
      });
    });
    say(`  evaluator pid ${pid} running; RSS ${fmt(memKiB(pid).rss / 1024, 0)} MiB before the first frame`);

    // the publisher: every host's tick t at 20 ms past second startS + t (the frames end on the whole second, as an agent's do)
    const publishMs: number[] = [];
    let stop = false;
    let tick = Math.max(1, Math.floor(Date.now() / 1000) - startS + 1);
    const publisher = (async () => {
      while (!stop) {
        await sleepUntil((startS + tick) * 1000 + 20);
        if (stop) break;
        const t = performance.now();
        await fleet.publishTick(tick);
        publishMs.push(performance.now() - t);
        tick = Math.max(tick + 1, Math.floor(Date.now() / 1000) - startS + 1);
      }
    })();

    const t0 = Date.now();
    await sleep(warmupS * 1000);
    const s0 = await ask<ChildStats>(evaluator, 'stats');
    if (s0.frames === 0) throw new Error(`the evaluator counted no frame in the warm-up: ${tail()}`);
    say(`  after the warm-up (${fmt((Date.now() - t0) / 1000, 0)} s): ${s0.frames} frames counted, ${s0.alerts} alerts tracked, RSS ${fmt(memKiB(pid).rss / 1024, 0)} MiB`);
    if (profiling) await ask(evaluator, 'profile-start');
    const c0 = { ev: cpuTicks(pid), nats: cpuTicks(server.process.pid as number), self: process.cpuUsage(), machine: machineTicks(), pub: fleet.published, wall: performance.now() };
    const rss: number[] = [];
    const slices: number[] = [];
    let sliceTicks = cpuTicks(pid);
    for (let s = 1; s <= seconds; s++) {
      await sleepUntil(t0 + warmupS * 1000 + s * 1000 + 500);
      if (!alive(evaluator)) throw new Error(`the evaluator exited: ${tail()}`);
      rss.push(memKiB(pid).rss);
      if (s % 10 === 0) {
        const now = cpuTicks(pid);
        slices.push(((now - sliceTicks) / CLK_TCK / 10) * 100);
        sliceTicks = now;
      }
    }
    const wallS = (performance.now() - c0.wall) / 1000;
    const evCpuS = (cpuTicks(pid) - c0.ev) / CLK_TCK;
    const natsCpuS = (cpuTicks(server.process.pid as number) - c0.nats) / CLK_TCK;
    const self = process.cpuUsage(c0.self);
    const machine = machineTicks();
    const published = fleet.published - c0.pub;
    const publishedAll = fleet.published;
    const s1 = await ask<ChildStats>(evaluator, 'stats');
    const mem = memKiB(pid);
    // after the CPU readings: a full GC in the evaluator, for the heap its windows really hold
    const live = await ask<{ heapUsed: number; rss: number; collected: boolean }>(evaluator, 'heap');
    stop = true;
    await publisher;

    const framesPerS = (s1.frames - s0.frames) / wallS;
    const pct = (100 * evCpuS) / wallS;
    const pubSorted = publishMs.slice(-seconds).sort((a, b) => a - b);
    say(`  evaluator: CPU ${fmt(pct, 1)} % of one core (${fmt((evCpuS * 1000) / wallS, 1)} ms per second, ${fmt((evCpuS * 1e6) / Math.max(1, s1.frames - s0.frames), 1)} µs per frame); event loop busy ${profiling ? 'n/a under --profile' : `${fmt(s1.elu * 100, 1)} % of the wall time`}`);
    say(`  evaluator CPU in 10 s slices (%): ${slices.map((x) => fmt(x, 1)).join(', ')}`);
    say(`  evaluator RSS ${fmt(mem.rss / 1024, 0)} MiB at the end, ${fmt(Math.max(...rss) / 1024, 0)} MiB highest 1 s sample, VmHWM ${fmt(mem.hwm / 1024, 0)} MiB; heap used ${fmt(s1.heapUsed / MiB, 0)} MiB, ${fmt(live.heapUsed / MiB, 0)} MiB live after a full GC (${fmt(live.heapUsed / Math.max(1, s1.alerts) / 1024, 1)} KiB an alert), RSS then ${fmt(live.rss / MiB, 0)} MiB`);
    say(`  frames: ${fmt(published / wallS, 0)}/s published, ${fmt(framesPerS, 0)}/s counted by the evaluator (${s1.frames - s0.frames} of ${published}); behind at the end: ${publishedAll - s1.frames} frames (${fmt((publishedAll - s1.frames) / (hosts * perHost), 1)} s of the fleet)`);
    say(`  ${s1.alerts} alerts (${fmt(s1.alerts / hosts, 1)} a host); transitions ${s1.transitions.won}, events ${s1.transitions.published} (0 expected: no threshold is reached)`);
    say(`  publisher (this process: SimFleet encodes and publishes): ${fmt(((self.user + self.system) / 1e6 / wallS) * 100, 1)} % of a core; publishTick p50 ${fmt(quantile(pubSorted, 0.5), 0)} ms, max ${fmt(pubSorted.at(-1) ?? Number.NaN, 0)} ms`);
    say(`  nats-server: ${fmt((100 * natsCpuS) / wallS, 1)} % of a core; whole machine: ${fmt((100 * (machine.busy - c0.machine.busy)) / (machine.total - c0.machine.total), 1)} % busy of ${CPUS} CPUs`);
    if (pct > 25) say(`  TARGET MISSED: the evaluator used ${fmt(pct, 1)} % of a core (target ≤ 25 %)`);
    if (framesPerS < 0.98 * (published / wallS)) say(`  WARNING: the evaluator counted ${fmt(framesPerS, 0)} frames/s of ${fmt(published / wallS, 0)} published (slow consumer?)`);

    if (profiling) {
      const file = await ask<string>(evaluator, 'profile-stop', 60_000);
      summarise(JSON.parse(readFileSync(file, 'utf8')) as CpuProfile, Number(args.top), file);
    }
  } finally {
    await fleet.close();
    await stopChild(evaluator);
    children.delete(evaluator);
  }
}

// ---------------------------------------------------------------- profile summary

function where(f: CallFrame): string {
  const name = f.functionName === '' ? '(anonymous)' : f.functionName;
  if (f.url === '') return name;
  const nm = f.url.lastIndexOf('/node_modules/');
  const src = f.url.indexOf('/src/');
  const test = f.url.indexOf('/test/');
  const short = nm >= 0 ? f.url.slice(nm + 14) : src >= 0 ? f.url.slice(src + 1) : test >= 0 ? f.url.slice(test + 1) : f.url;
  return `${name}  ${short}:${f.lineNumber + 1}`;
}

function moduleOf(f: CallFrame): string {
  if (f.url === '') return f.functionName === '' ? '(anonymous native)' : f.functionName;
  const nm = f.url.lastIndexOf('/node_modules/');
  if (nm >= 0) {
    const parts = f.url.slice(nm + 14).split('/');
    return parts[0]?.startsWith('@') === true ? `${parts[0]}/${parts[1]}` : (parts[0] ?? f.url);
  }
  const src = f.url.indexOf('/src/');
  if (src >= 0) return f.url.slice(src + 1);
  return f.url.startsWith('node:') ? f.url.split('/').slice(0, 2).join('/') : f.url;
}

function summarise(p: CpuProfile, top: number, file: string): void {
  const { self, inclusive, modules, busy } = profileTotals(p, where, moduleOf);
  const wall = (p.endTime - p.startTime) / 1e6;
  say(`\n  profile of the evaluator over the measured window (${fmt(wall, 1)} s, JS thread busy ${fmt(busy / 1000, 0)} ms = ${fmt((busy / 1e6 / wall) * 100, 1)} %, sampled every 250 µs; ${file})`);
  printProfileTable('self time by module', modules, busy, top);
  printProfileTable('self time by function', self, busy, top);
  printProfileTable('inclusive time by function', inclusive, busy, top);
}

// ---------------------------------------------------------------- the evaluator process of the scale part

/**
 * What `rezolus alert` does (loadAlertsConfig against the metric catalog,
 * createLogger, runAlert, stop on SIGTERM), as plain JavaScript run by
 * `node -e` over the compiled modules (or, with --evaluator tsx, over src/
 * through tsx), plus an IPC channel: `stats` answers the evaluator's own
 * counters, `profile-start` / `profile-stop` run the V8 profiler over the
 * measured window only; `heap` runs a full GC (--expose-gc) and answers
 * the live heap.
 */
const CHILD_JS = `
const base = process.env.BENCH_BASE;
const ext = process.env.BENCH_EXT;
const load = (p) => import(new URL(p + ext, base).href);
const [{ loadAlertsConfig }, { metricCatalog }, { createLogger }, { runAlert }, { Session }, { performance }, { writeFileSync }] = await Promise.all([
  load('config/alerts'), load('samplers/catalog'), load('log/logger'), load('alert/main'),
  import('node:inspector/promises'), import('node:perf_hooks'), import('node:fs'),
]);
const config = loadAlertsConfig(process.env.BENCH_CONFIG, metricCatalog(), { natsUrl: process.env.BENCH_NATS, logLevel: 'warn' });
const running = await runAlert(config, createLogger(config.logLevel));
let elu = performance.eventLoopUtilization();
let session;
const send = (type, body) => process.send({ type, body });
process.on('message', async (m) => {
  if (m.type === 'stats') {
    const now = performance.eventLoopUtilization();
    const s = running.stats();
    send('stats', { frames: s.frames, alerts: s.alerts, transitions: s.transitions, elu: performance.eventLoopUtilization(now, elu).utilization, heapUsed: process.memoryUsage().heapUsed });
    elu = now;
  } else if (m.type === 'heap') {
    globalThis.gc?.();
    const u = process.memoryUsage();
    send('heap', { heapUsed: u.heapUsed, rss: u.rss, collected: typeof globalThis.gc === 'function' });
  } else if (m.type === 'profile-start') {
    session = new Session();
    session.connect();
    await session.post('Profiler.enable');
    await session.post('Profiler.setSamplingInterval', { interval: 250 });
    await session.post('Profiler.start');
    send('profile-start', true);
  } else if (m.type === 'profile-stop') {
    const { profile } = await session.post('Profiler.stop');
    writeFileSync(process.env.BENCH_PROFILE, JSON.stringify(profile));
    send('profile-stop', process.env.BENCH_PROFILE);
  }
});
const stop = () => void running.stop().finally(() => process.exit(0));
process.once('SIGTERM', stop);
process.once('SIGINT', stop);
process.once('disconnect', stop);
send('ready', true);
`;

// ---------------------------------------------------------------- main

async function main(): Promise<void> {
  const part = args.part ?? 'all';
  if (!['all', 'latency', 'scale'].includes(part)) throw new Error('--part all|latency|scale');
  if (FROM_DIST && args.dist === undefined) ensureBuilt();
  say(`rezolus alert bench (issue 17); ${MACHINE}; node ${process.version}; evaluator from ${FROM_DIST ? `${DIST} (compiled)` : 'src/ through tsx'}; load ${readFileSync('/proc/loadavg', 'utf8').split(' ').slice(0, 3).join(' ')}`);
  nats = await startTestNats();
  if (part !== 'scale') await latencyPart(nats);
  if (part !== 'latency') {
    // a fresh server: the latency part's stream and state bucket stay out of the scale part's figures
    await nats.dispose();
    nats = await startTestNats();
    await scalePart(nats);
  }
}

for (const signal of ['SIGINT', 'SIGTERM'] as const) process.once(signal, () => void cleanup().finally(() => process.exit(130)));
const limitS = 120 + (args.part === 'scale' ? 0 : 25 * Number(args.repeats) * 2) + (args.part === 'latency' ? 0 : Number(args.warmup) + Number(args.seconds) + 120);
setTimeout(() => {
  say(`bench watchdog: still running after ${limitS} s; stopping`);
  void cleanup().finally(() => process.exit(1));
}, limitS * 1000).unref();
main().then(
  () => cleanup().then(() => process.exit(0)),
  (error: unknown) => {
    say(`bench failed: ${error instanceof Error ? (error.stack ?? error.message) : String(error)}`);
    void cleanup().finally(() => process.exit(1));
  },
);
