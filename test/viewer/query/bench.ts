/**
 * Micro-benchmark of the query layer (not a test): `npx tsx test/viewer/query/bench.ts`.
 * One host, one hour at 1 s: ~2000 columns (cpu_usage for 32 CPUs × 10 states
 * and filler gauges) and a run-queue latency histogram; prints the median time
 * of each query over 20 runs after 5 warm-up runs.
 */
import { cpus } from 'node:os';
import { performance } from 'node:perf_hooks';
import { type SparseHistogram, fromDense, valueToIndex } from '../../../src/metrics/histogram.js';
import { runQuery } from '../../../src/viewer/query/run.js';
import type { Query } from '../../../src/viewer/query/run.js';
import { type SeriesInfo, Track } from '../../../src/viewer/track.js';
import { T0, info, prng } from './helpers.js';

const SAMPLES = 3600;
const STATES = ['user', 'nice', 'system', 'idle', 'iowait', 'irq', 'softirq', 'steal', 'guest', 'guest_nice'];

function build(): Track {
  const rand = prng(1);
  const track = new Track();
  const cpu = STATES.flatMap((state) => Array.from({ length: 32 }, (_, c) => info('cpu_usage', 'counter', 'nanoseconds', { state, id: String(c) })));
  const filler = Array.from({ length: 1680 }, (_, n) => info(`memory_filler_${n}`, 'gauge', 'bytes'));
  const rq = info('scheduler_runqueue_latency', 'histogram', 'nanoseconds');
  const cum = cpu.map(() => 0);
  const dense = new Array<number>(496).fill(0);
  for (let i = 0; i < SAMPLES; i++) {
    const values = new Map<string, { info: SeriesInfo; value: number | SparseHistogram }>();
    cpu.forEach((s, n) => {
      cum[n] = (cum[n] as number) + Math.floor(rand() * 1e9);
      values.set(s.id, { info: s, value: cum[n] as number });
    });
    for (const s of filler) values.set(s.id, { info: s, value: rand() * 1e9 });
    for (let e = 0; e < 2000; e++) {
      const idx = valueToIndex(Math.floor(Math.exp(rand() * 16)));
      dense[idx] = (dense[idx] as number) + 1;
    }
    values.set(rq.id, { info: rq, value: fromDense(dense) });
    track.append(T0 + 1000 * (i + 1), 1, values);
  }
  return track;
}

function time(label: string, tracks: readonly Track[], q: Query): void {
  for (let n = 0; n < 5; n++) runQuery(tracks, q);
  const runs: number[] = [];
  let steps = 0;
  for (let n = 0; n < 20; n++) {
    const t0 = performance.now();
    steps = runQuery(tracks, q).t.length;
    runs.push(performance.now() - t0);
  }
  runs.sort((a, b) => a - b);
  console.log(`${label.padEnd(52)} ${steps.toString().padStart(5)} steps  median ${(runs[10] as number).toFixed(2)} ms`);
}

const track = build();
console.log(`${cpus()[0]?.model ?? 'unknown CPU'}, node ${process.version}; track: ${track.columns.size} columns × ${track.t.length} samples`);
const range = { start: T0, end: T0 + SAMPLES * 1000 };
time('rate, 32 per-CPU series (state=user), budget 300', [track], { ...range, metric: 'cpu_usage', fn: 'rate', match: { state: 'user' }, budget: 300 });
time('rate, 32 per-CPU series (state=user), budget 5000', [track], { ...range, metric: 'cpu_usage', fn: 'rate', match: { state: 'user' }, budget: 5000 });
time('rate, all 320 cpu_usage series, budget 300', [track], { ...range, metric: 'cpu_usage', fn: 'rate', match: {}, budget: 300 });
time('value, one gauge, budget 300', [track], { ...range, metric: 'memory_filler_7', fn: 'value', match: {}, budget: 300 });
time('percentiles, 3600 histogram samples, budget 300', [track], { ...range, metric: 'scheduler_runqueue_latency', fn: 'percentiles', match: {}, budget: 300 });
time('percentiles, 3600 histogram samples, budget 5000', [track], { ...range, metric: 'scheduler_runqueue_latency', fn: 'percentiles', match: {}, budget: 5000 });
time('heatmap, 3600 histogram samples, budget 300', [track], { ...range, metric: 'scheduler_runqueue_latency', fn: 'heatmap', match: {}, budget: 300 });
