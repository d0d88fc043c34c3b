/**
 * Time and counters in the exporter (issue 7, part 5), with exact numbers:
 * counter wraps and resets, agent restarts, a clock stepping back, frames
 * out of order. No rate is ever negative or spiked: a step that cannot give
 * a true rate gives none.
 */
import test from 'ava';
import { renderExposition } from '../../src/exporter/render.js';
import { nearestRank } from '../../src/exporter/rates.js';
import { ExporterState } from '../../src/exporter/state.js';
import type { FrameValue } from '../../src/frame/types.js';
import { SECOND, T0, h, m, makeDescriptor, makeFrame } from '../helpers/frames.js';

const MS = 1_000_000n;
const cpu = makeDescriptor('cpu_usage', { cpu_usage: m('counter', 'nanoseconds', ['state'], 'CPU time') }, [['cpu_usage', ['user']]]);
const lat = makeDescriptor('latency', { op_latency: m('histogram', 'nanoseconds', [], 'Latency') }, [['op_latency', []]]);

/** An exporter state with the oversampling view of cpu_usage over a 10 s interval. */
function state(): ExporterState {
  return new ExporterState({ intervalNs: 10n * SECOND, oversample: ['cpu_usage'] });
}

/** Per-sample rates (ns per second) of the window, newest first; NaN = a step left out. */
function rates(s: ExporterState): number[] {
  const v = s.view(10n * SECOND)[0];
  return v?.rates?.samples(0, v.sinceNs, []) ?? [];
}

function cpuFrame(instance: number, seq: number, endNs: bigint, value: FrameValue) {
  return makeFrame({ host: 'h', descriptor: cpu, instance, seq, endNs, values: [value] });
}

/** Frames of one run, 100 ms apart from T0, with these counter values. */
function run(s: ExporterState, values: readonly FrameValue[], instance = 1): void {
  values.forEach((v, i) => s.ingest(cpuFrame(instance, i + 1, T0 + BigInt(i) * 100n * MS, v)));
}

test('u64 wrap: the step over the wrap gives no rate, the steps around it their true 10 000 ns/s', (t) => {
  const s = state();
  run(s, [2n ** 64n - 2000n, 2n ** 64n - 1000n, 500, 1500, 2500]);
  t.deepEqual(rates(s), [10_000, 10_000, Number.NaN, 10_000]);
  t.deepEqual(nearestRank(rates(s), [0, 0.5, 1]), [10_000, 10_000, 10_000], 'no negative, no 1.8e20 spike');
});

test('a 32-bit kernel counter wrapping: no rate for that step', (t) => {
  const s = state();
  run(s, [2 ** 32 - 1000, 2 ** 32 - 100, 100, 1100]);
  t.deepEqual(rates(s), [10_000, Number.NaN, 9000]);
  t.deepEqual(nearestRank(rates(s), [0, 1]), [9000, 10_000]);
});

test('a reset within a run (the counter goes down): no rate for that step, never negative, then rates from the new value', (t) => {
  const s = state();
  run(s, [5_000_000_000_000, 5_000_000_001_000, 4_000_000_000_000, 4_000_000_002_000, 3, 1003]);
  t.deepEqual(rates(s), [10_000, Number.NaN, 20_000, Number.NaN, 10_000]);
  t.true(rates(s).every((r) => Number.isNaN(r) || (r >= 0 && r <= 20_000)));
});

test('agent restart: the new run takes over once the old one is quiet; no rate spans the two; the old run never comes back', (t) => {
  const s = state();
  run(s, [0, 1000, 2000]); // run 1 ends at T0 + 200 ms
  s.ingest(cpuFrame(2, 1, T0 + 250n * MS, 7));
  t.is(s.stats.contested, 1, 'a second run while the first is live is contested (0.5 s quiet needed)');
  s.ingest(cpuFrame(2, 1, T0 + SECOND, 7)); // counters from 0 again, seq 1
  t.is(s.stats.restarts, 1);
  t.deepEqual(rates(s), [], 'the window starts again: 2000 → 7 gives nothing');
  t.is(s.view(10n * SECOND)[0]?.base, undefined, 'no histogram window across the restart');
  s.ingest(cpuFrame(2, 2, T0 + 1100n * MS, 1007));
  t.deepEqual(rates(s), [10_000]);
  s.ingest(cpuFrame(1, 4, T0 + 300n * MS, 3000)); // a late frame of the old run
  s.ingest(cpuFrame(1, 5, T0 + 9n * SECOND, 3000)); // and one that looks newer, after the new run went quiet
  t.is(s.stats.contested, 3, 'a replaced run never takes the host back');
  t.is(s.view(10n * SECOND)[0]?.latest.instance, 2);
});

test('agent restart with the clock behind the old run: receive time decides that the old run is quiet', (t) => {
  const RECEIVED = 1_800_000_000n * SECOND;
  const byFrameTime = state();
  const byReceiveTime = state();
  for (const [i, v] of [0, 1000, 2000].entries()) {
    const f = cpuFrame(1, i + 1, T0 + 60n * SECOND + BigInt(i) * 100n * MS, v); // the old run's clock was a minute ahead
    byFrameTime.ingest(f);
    byReceiveTime.ingest(f, RECEIVED + BigInt(i) * 100n * MS);
  }
  const restarted = cpuFrame(2, 1, T0 + SECOND, 5); // the host rebooted with its clock set right
  byFrameTime.ingest(restarted);
  byReceiveTime.ingest(restarted, RECEIVED + 2n * SECOND);
  t.is(byFrameTime.stats.contested, 1, 'by frame time the new run looks a minute older than the old one');
  t.is(byReceiveTime.stats.restarts, 1, 'received 1.8 s after the old run was last heard: it takes over');
  t.is(byReceiveTime.view(10n * SECOND)[0]?.latest.values[0], 5);
});

test('the clock steps back within a run: the frame is used, no window spans the step', (t) => {
  const s = state();
  for (const [i, v] of [0, 1000, 2000].entries()) s.ingest(cpuFrame(1, i + 1, T0 + 10n * SECOND + BigInt(i) * 100n * MS, v));
  t.deepEqual(rates(s), [10_000, 10_000]);
  s.ingest(cpuFrame(1, 4, T0 + 5n * SECOND, 3000)); // 5.2 s back: 1000 ns over −5.2 s would be a negative rate
  t.is(s.stats.clockSteps, 1);
  t.is(s.stats.ingested, 4);
  const v = s.view(10n * SECOND)[0];
  t.is(v?.latest.seq, 4, 'its values are the newest');
  t.is(v?.base, undefined);
  t.deepEqual(rates(s), []);
  s.ingest(cpuFrame(1, 5, T0 + 5100n * MS, 4000));
  t.deepEqual(rates(s), [10_000]);
});

test('frames out of order after a reconnect, and duplicates: dropped and counted, rates unchanged', (t) => {
  const s = state();
  s.ingest(cpuFrame(1, 1, T0, 0));
  s.ingest(cpuFrame(1, 2, T0 + 100n * MS, 1000));
  s.ingest(cpuFrame(1, 4, T0 + 300n * MS, 3000)); // seq 3 is late
  s.ingest(cpuFrame(1, 3, T0 + 200n * MS, 2000));
  s.ingest(cpuFrame(1, 4, T0 + 300n * MS, 3000)); // a redelivery
  t.is(s.stats.outOfOrder, 2);
  t.deepEqual(rates(s), [10_000, 10_000], '1000 → 3000 over 200 ms, 0 → 1000 over 100 ms');
});

test('histogram percentiles: a reset inside the window serves none, the next window serves the new run\'s', (t) => {
  const s = new ExporterState({ intervalNs: SECOND });
  const hist = (seq: number, endNs: bigint, ...buckets: [number, number][]) =>
    s.ingest(makeFrame({ host: 'h', descriptor: lat, seq, endNs, values: [h(...buckets)] }));
  const percentileLines = () => renderExposition(s.view(SECOND), { percentiles: [0.5, 1] }).text.split('\n').filter((l) => l.includes('percentile='));
  hist(1, T0, [10, 5]);
  hist(2, T0 + SECOND, [10, 5], [20, 5]);
  t.deepEqual(percentileLines(), ['op_latency_seconds{host="h",percentile="0.5"} 0.000000025', 'op_latency_seconds{host="h",percentile="1"} 0.000000025']);
  hist(3, T0 + 2n * SECOND, [10, 1]); // the histogram was reset: bucket 20 vanished, bucket 10 went down
  t.deepEqual(percentileLines(), [], 'no percentiles of a negative window');
  hist(4, T0 + 3n * SECOND, [10, 3]);
  t.deepEqual(percentileLines(), ['op_latency_seconds{host="h",percentile="0.5"} 0.00000001', 'op_latency_seconds{host="h",percentile="1"} 0.00000001']);
});
