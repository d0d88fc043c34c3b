/**
 * What opening a recording in the viewer costs: a one-host hour at 1 s with
 * every sampler's shape (~1900 counter and gauge columns, 100 latency
 * histograms, 3600 rows in groups of 600), written with the project's own
 * ParquetStream, then loaded by src/viewer/file/:
 *
 *  - open: loadRecording() (footer, series index, timestamps and hosts) —
 *    what the viewer needs before its first chart;
 *  - first chart: open + the columns of one histogram metric (10 series)
 *    and of one counter metric (512 series);
 *  - every column: loadAll(), the whole file (for comparison: what an
 *    eager load would cost).
 *
 * Each figure is the median of --rounds runs in a fresh process (so RSS is
 * that of the load alone); RSS is the process's peak (`ru_maxrss`) and its
 * RSS after a GC. Target: the first chart within 1.5 s of opening.
 *
 *   npx tsx test/bench/viewer-file.ts                 # about 2 minutes
 *   npx tsx test/bench/viewer-file.ts --rounds 1
 *   npx tsx test/bench/viewer-file.ts --keep /tmp/hour.parquet   # keep the file
 *
 * A measurement, not a test: exits 0 when the target is missed and says so.
 */
import { spawnSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, statSync } from 'node:fs';
import { cpus, tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';
import { fromValues, type SparseHistogram } from '../../src/metrics/histogram.js';
import type { ColumnSpec } from '../../src/parquet/columns.js';
import { columnName } from '../../src/parquet/columns.js';
import type { Cell, ColumnarGroup } from '../../src/parquet/group.js';
import { ParquetStream } from '../../src/parquet/parquet.js';
import { loadRecording } from '../../src/viewer/file/load.js';
import { fmt, say } from './common.js';

const { values: args } = parseArgs({
  options: {
    rounds: { type: 'string', default: '3' },
    keep: { type: 'string' },
    /** internal: one measurement in this process */
    child: { type: 'string' },
    file: { type: 'string' },
  },
});

const ROWS = 3600;
const GROUP = 600;
const START_NS = 1_767_225_600_000_000_000n; // 2026-01-01T00:00:00Z
const HOST = 'bench-host';

interface Family {
  readonly metric: string;
  readonly kind: 'counter' | 'gauge' | 'histogram';
  readonly unit: string;
  readonly labels: readonly string[];
  readonly values: readonly (readonly string[])[];
}

const range = (n: number): string[] => Array.from({ length: n }, (_, i) => String(i));
const cross = (...lists: string[][]): string[][] => lists.reduce<string[][]>((acc, l) => acc.flatMap((a) => l.map((v) => [...a, v])), [[]]);
const CPUS = range(64);
const STATES = ['user', 'nice', 'system', 'softirq', 'irq', 'steal', 'guest', 'guest_nice'];
const IFACES = ['eth0', 'eth1', 'eth2', 'eth3', 'bond0', 'lo', 'docker0', 'veth1a2b'];
const DISKS = ['nvme0n1', 'nvme1n1', 'sda', 'sdb', 'dm-0', 'dm-1', 'md0', 'loop0'];
const CGROUPS = range(100).map((i) => `/system.slice/service-${i}.service`);

/** The series of the bench recording: the shape of every sampler of a 64-CPU host. */
const FAMILIES: Family[] = [
  { metric: 'cpu_usage', kind: 'counter', unit: 'nanoseconds', labels: ['state', 'id'], values: cross(STATES, CPUS) },
  { metric: 'cpu_cycles', kind: 'counter', unit: 'count', labels: ['id'], values: cross(CPUS) },
  { metric: 'cpu_instructions', kind: 'counter', unit: 'count', labels: ['id'], values: cross(CPUS) },
  { metric: 'softirq', kind: 'counter', unit: 'count', labels: ['kind', 'id'], values: cross(['hi', 'timer', 'net_tx', 'net_rx', 'block', 'irq_poll', 'tasklet', 'sched', 'hrtimer', 'rcu'], CPUS) },
  { metric: 'network_bytes', kind: 'counter', unit: 'bytes', labels: ['direction', 'interface'], values: cross(['receive', 'transmit'], IFACES) },
  { metric: 'network_packets', kind: 'counter', unit: 'packets', labels: ['direction', 'interface'], values: cross(['receive', 'transmit'], IFACES) },
  { metric: 'blockio_bytes', kind: 'counter', unit: 'bytes', labels: ['op', 'device'], values: cross(['read', 'write', 'discard', 'flush'], DISKS) },
  { metric: 'blockio_operations', kind: 'counter', unit: 'operations', labels: ['op', 'device'], values: cross(['read', 'write', 'discard', 'flush'], DISKS) },
  { metric: 'cgroup_cpu_usage', kind: 'counter', unit: 'nanoseconds', labels: ['name', 'state'], values: cross(CGROUPS, ['user', 'system']) },
  { metric: 'cgroup_memory', kind: 'gauge', unit: 'bytes', labels: ['name', 'kind'], values: cross(CGROUPS, ['current', 'peak']) },
  ...range(80).map((i): Family => ({ metric: `memory_stat_${i}`, kind: 'gauge', unit: 'bytes', labels: [], values: [[]] })),
  { metric: 'syscall_latency', kind: 'histogram', unit: 'nanoseconds', labels: ['op'], values: cross(['read', 'write', 'poll', 'lock', 'time', 'sleep', 'socket', 'yield', 'filesystem', 'memory'].slice(0, 10)) },
  { metric: 'blockio_latency', kind: 'histogram', unit: 'nanoseconds', labels: ['op', 'device'], values: cross(['read', 'write', 'discard', 'flush'], DISKS) },
  { metric: 'scheduler_runqueue_latency', kind: 'histogram', unit: 'nanoseconds', labels: ['id'], values: cross(range(32)) },
  { metric: 'tcp_packet_latency', kind: 'histogram', unit: 'nanoseconds', labels: ['direction'], values: cross(['receive', 'transmit']) },
  { metric: 'scheduler_offcpu', kind: 'histogram', unit: 'nanoseconds', labels: ['id'], values: cross(range(16)) },
  { metric: 'scheduler_running', kind: 'histogram', unit: 'nanoseconds', labels: ['state'], values: cross(range(8)) },
];

function specs(): ColumnSpec[] {
  return FAMILIES.flatMap((f) =>
    f.values.map((vs): ColumnSpec => {
      const labels = Object.fromEntries(f.labels.map((l, i) => [l, vs[i] as string]));
      const spec: ColumnSpec = { name: columnName(f.metric, vs), metric: f.metric, kind: f.kind, unit: f.unit, labels };
      return f.kind === 'histogram' ? { ...spec, groupingPower: 3, maxValuePower: 64 } : spec;
    }),
  );
}

/** Series k's histogram at row r: ~30 buckets from a per-series scale, counts growing with r. */
function histogramAt(k: number, r: number, base: SparseHistogram[]): SparseHistogram {
  let h = base[k];
  if (h === undefined) {
    const values: number[] = [];
    const scale = 500 * (1 + (k % 13));
    for (let i = 0; i < 300; i++) values.push(Math.round(scale * Math.exp((i % 41) / 5)));
    h = fromValues(values);
    base[k] = h;
  }
  const grow = r + 1;
  return { ...h, count: h.count.map((c, i) => c * grow + ((r * (i + k)) % 7)) };
}

/** Writes the one-host hour; returns the number of columns. */
async function writeHour(path: string): Promise<{ columns: number; histograms: number }> {
  const all = specs();
  const base: SparseHistogram[] = [];
  const file = new ParquetStream(path, 'bench viewer-file');
  for (let from = 0; from < ROWS; from += GROUP) {
    const group: ColumnarGroup = { timestamps: [], hosts: [], columns: new Map(all.map((s) => [s.name, { spec: s, cells: [] as Cell[] }])) };
    for (let r = from; r < Math.min(ROWS, from + GROUP); r++) {
      group.timestamps.push(START_NS + BigInt(r) * 1_000_000_000n);
      group.hosts.push(HOST);
      let k = 0;
      let h = 0;
      for (const s of all) {
        const cells = group.columns.get(s.name)?.cells as Cell[];
        if (s.kind === 'histogram') cells.push(histogramAt(h++, r, base));
        else if (s.kind === 'counter') cells.push(1_000_000 * k + r * (1000 + ((k * 7919 + r * 104729) % 997)));
        else cells.push(1e9 + k * 1e6 + ((r * 7 + k) % 1000) * 4096);
        k++;
      }
    }
    file.write(group);
  }
  const metrics = [...new Set(all.map((s) => s.metric))];
  await file.finish({ source: 'rezolus-nats', version: 'bench', hosts: [HOST], samplingIntervalMs: 1000, descriptions: Object.fromEntries(metrics.map((m) => [m, `${m} (bench)`])) });
  return { columns: all.length, histograms: all.filter((s) => s.kind === 'histogram').length };
}

interface Figures {
  /** RSS of the process before the file is opened (node, tsx and the modules loaded) */
  readonly baseRssMiB: number;
  readonly openMs: number;
  readonly firstChartMs: number;
  readonly allMs: number;
  readonly openRssMiB: number;
  readonly firstRssMiB: number;
  readonly allRssMiB: number;
  readonly peakRssMiB: number;
}

const rssMiB = (): number => {
  globalThis.gc?.();
  return process.memoryUsage.rss() / 1024 / 1024;
};

/** One measurement, in this (fresh) process. */
async function measure(path: string): Promise<Figures> {
  const baseRssMiB = rssMiB();
  const began = performance.now();
  const rec = await loadRecording(path, 'A');
  const openMs = performance.now() - began;
  const openRssMiB = rssMiB();
  const t1 = performance.now();
  await rec.loadColumns(rec.seriesOf('syscall_latency').map((s) => s.id));
  await rec.loadColumns(rec.seriesOf('cpu_usage').map((s) => s.id));
  const firstChartMs = openMs + performance.now() - t1;
  const firstRssMiB = rssMiB();
  const t2 = performance.now();
  await rec.loadAll();
  const allMs = performance.now() - t2;
  const allRssMiB = rssMiB();
  const track = rec.tracks.get(HOST);
  if (track === undefined || track.t.length !== ROWS || track.columns.size !== rec.series.size) throw new Error(`loaded ${track?.t.length} rows, ${track?.columns.size} columns of ${rec.series.size}`);
  await rec.close();
  return { baseRssMiB, openMs, firstChartMs, allMs, openRssMiB, firstRssMiB, allRssMiB, peakRssMiB: process.resourceUsage().maxRSS / 1024 };
}

function cpuModel(): string {
  try {
    return /^model name\s*:\s*(.+)$/m.exec(readFileSync('/proc/cpuinfo', 'utf8'))?.[1]?.trim() ?? 'unknown CPU';
  } catch {
    return 'unknown CPU';
  }
}

const median = (xs: number[]): number => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)] ?? Number.NaN;

async function main(): Promise<void> {
  if (args.child !== undefined) {
    process.stdout.write(`${JSON.stringify(await measure(args.child))}\n`);
    return;
  }
  say(`CPU: ${cpuModel()} (${cpus().length} CPUs), node ${process.version}`);
  const dir = mkdtempSync(join(tmpdir(), 'rezolus-bench-viewer-'));
  try {
    const path = args.keep ?? args.file ?? join(dir, 'hour.parquet');
    if (args.file === undefined) {
      const began = performance.now();
      const { columns, histograms } = await writeHour(path);
      say(`wrote a one-host hour: ${ROWS} rows, ${columns} series columns (${histograms} histograms), ${fmt(statSync(path).size / 1024 / 1024, 1)} MiB in ${fmt((performance.now() - began) / 1000, 1)} s`);
    }
    const runs: Figures[] = [];
    for (let round = 0; round < Number(args.rounds); round++) {
      const self = fileURLToPath(import.meta.url);
      const r = spawnSync(process.execPath, ['--expose-gc', '--import', 'tsx', self, '--child', path], { encoding: 'utf8', timeout: 10 * 60_000 });
      if (r.status !== 0) throw new Error(`the measuring process failed (${r.status ?? r.signal}): ${r.stderr.slice(-2000)}`);
      const f = JSON.parse(r.stdout.trim().split('\n').pop() as string) as Figures;
      runs.push(f);
      say(
        `  round ${round + 1}: RSS before opening ${fmt(f.baseRssMiB, 0)} MiB; open ${fmt(f.openMs, 0)} ms (RSS ${fmt(f.openRssMiB, 0)} MiB); first chart ${fmt(f.firstChartMs, 0)} ms (RSS ${fmt(f.firstRssMiB, 0)} MiB); ` +
          `every column ${fmt(f.allMs / 1000, 1)} s more (RSS ${fmt(f.allRssMiB, 0)} MiB, peak ${fmt(f.peakRssMiB, 0)} MiB)`,
      );
    }
    const m = (k: keyof Figures): number => median(runs.map((f) => f[k]));
    say(`median of ${runs.length}: open ${fmt(m('openMs'), 0)} ms, first chart ${fmt(m('firstChartMs'), 0)} ms, every column ${fmt(m('allMs') / 1000, 1)} s more; RSS before ${fmt(m('baseRssMiB'), 0)}, then ${fmt(m('openRssMiB'), 0)} / ${fmt(m('firstRssMiB'), 0)} / ${fmt(m('allRssMiB'), 0)} MiB, peak ${fmt(m('peakRssMiB'), 0)} MiB`);
    if (m('firstChartMs') > 1500) say(`  TARGET MISSED: first chart ${fmt(m('firstChartMs'), 0)} ms > 1500 ms`);
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

const watchdog = setTimeout(() => {
  say('watchdog: 20 min passed, stopping');
  process.exit(1);
}, 20 * 60_000);
watchdog.unref();
main().then(
  () => process.exit(0),
  (error: unknown) => {
    say(`bench failed: ${error instanceof Error ? (error.stack ?? error.message) : String(error)}`);
    process.exit(1);
  },
);
