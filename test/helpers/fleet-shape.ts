/**
 * What one simulated host of the fleet bench sends each tick: the 9 procfs
 * samplers that work on test/fixtures/rootfs (their real readings, values
 * moved per host and tick by simValue) and 16 synthetic samplers in the
 * shape of the kernel (eBPF) samplers, which need a live kernel, and a clock: 26 samplers,
 * 31 latency histograms, like an agent with every sampler on. The kernel
 * shapes are an estimate per sampler (series and histograms per frame), not
 * their exact series; test/bench/record.ts's `spread` gives each histogram
 * ~30 buckets.
 *
 * `sim_rezolus_self` carries the gauge `sim_publish_time`: the wall-clock ms
 * at which the host handed that tick to its Publisher, so a scrape of the
 * exporter shows which tick of every host is visible (publish → visible).
 */
import { fromValues, type SparseHistogram } from '../../src/metrics/histogram.js';
import { metric, type MetricDecl } from '../../src/metrics/metric.js';
import { SAMPLER_NAMES } from '../../src/samplers/registry.js';
import type { Point, Value } from '../../src/samplers/types.js';
import { fixtureSamplers, simValue, type SimSampler } from './sim-fleet.js';

/** The gauge that carries the publish time (ms). */
export const CLOCK_METRIC = 'sim_publish_time';
export const CLOCK_SAMPLER = 'sim_rezolus_self';

function spread(scale: number): SparseHistogram {
  const values: number[] = [];
  for (let i = 0; i < 200; i++) values.push(Math.round(scale * Math.exp((i % 37) / 4)));
  return fromValues(values);
}

/** [sampler, counters (label `k`), histograms (label `op`)] */
const KERNEL_SHAPES: readonly (readonly [string, number, number])[] = [
  ['blockio_latency', 0, 4],
  ['blockio_requests', 4, 4],
  ['cpu_migrations', 8, 0],
  ['cpu_perf', 8, 0],
  ['cpu_softirq', 20, 0],
  ['filesystem_latency', 0, 4],
  ['network_drops', 2, 0],
  ['network_traffic', 4, 0],
  ['rezolus_bpf', 20, 0],
  ['scheduler_runqueue', 2, 3],
  ['syscall_counts', 12, 0],
  ['syscall_latency', 16, 12], // syscall_latency_timed: a gauge per class
  ['tcp_connect_latency', 0, 1],
  ['tcp_packet_latency', 0, 1],
  ['tcp_receive', 0, 2],
  ['tcp_retransmit', 1, 0],
];

function kernelSampler(name: string, counters: number, histograms: number): { name: string; points: Point[] } {
  const points: Point[] = [];
  if (counters > 0) {
    const c: MetricDecl = metric({ name: `sim_${name}_events`, kind: 'counter', unit: 'count', labels: ['k'], description: `Synthetic ${name} counter (fleet bench)` });
    for (let i = 0; i < counters; i++) points.push({ metric: c, labels: { k: String(i) }, value: 1000 * (i + 1) });
  }
  if (histograms > 0) {
    const h: MetricDecl = metric({ name: `sim_${name}_latency`, kind: 'histogram', unit: 'nanoseconds', labels: ['op'], description: `Synthetic ${name} latency (fleet bench)` });
    for (let i = 0; i < histograms; i++) points.push({ metric: h, labels: { op: String(i) }, value: spread(100 * (i + 1)) });
  }
  return { name: `sim_${name}`, points };
}

function selfSampler(): { name: string; points: Point[] } {
  const clock = metric({ name: CLOCK_METRIC, kind: 'gauge', unit: 'count', labels: [], description: 'When the simulated host published this tick, unix ms (fleet bench)' });
  const cpu = metric({ name: 'sim_rezolus_self_cpu', kind: 'counter', unit: 'nanoseconds', labels: ['mode'], description: 'Synthetic agent CPU (fleet bench)' });
  const rss = metric({ name: 'sim_rezolus_self_rss', kind: 'gauge', unit: 'bytes', labels: [], description: 'Synthetic agent RSS (fleet bench)' });
  return {
    name: CLOCK_SAMPLER,
    points: [
      { metric: clock, labels: {}, value: 0 },
      { metric: cpu, labels: { mode: 'user' }, value: 1_000_000 },
      { metric: cpu, labels: { mode: 'system' }, value: 500_000 },
      { metric: rss, labels: {}, value: 70 * 1024 * 1024 },
    ],
  };
}

const KERNEL_NAMES: ReadonlySet<string> = new Set(KERNEL_SHAPES.map(([n]) => n));

/**
 * The 26 samplers of a simulated host, with their descriptors. The kernel
 * samplers are left out of the real ones: where the BPF objects are built
 * they would work (they read the live kernel, not the fixture root) and
 * come in twice, real and synthetic.
 */
export function fleetSamplers(): Promise<SimSampler[]> {
  return fixtureSamplers({
    samplers: SAMPLER_NAMES.filter((n) => !KERNEL_NAMES.has(n)),
    synthetic: [...KERNEL_SHAPES.map(([n, c, h]) => kernelSampler(n, c, h)), selfSampler()],
  });
}

/** The values host `index` sends for `sampler` in tick `tick`, published at `publishMs`. */
export function fleetValues(sampler: SimSampler, index: number, tick: number, publishMs: number): Value[] {
  return sampler.points.map((p) => (p.metric.name === CLOCK_METRIC ? publishMs : simValue(p.value, index, tick)));
}
