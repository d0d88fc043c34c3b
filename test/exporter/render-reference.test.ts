import test from 'ava';
import type { Descriptor, Frame, FrameValue } from '../../src/frame/types.js';
import { renderExposition, type RenderOptions } from '../../src/exporter/render.js';
import { familyDecl } from '../../src/exporter/plan.js';
import { ExporterState } from '../../src/exporter/state.js';
import { renderExpositionReference } from '../helpers/reference-render.js';
import { SECOND, T0, h, m, makeDescriptor, makeFrame } from '../helpers/frames.js';
import { prng } from '../helpers/prng.js';

// A mixed fleet: scaled and plain counters (some oversampled, so with rate percentiles), gauges
// with every kind of value, histograms, a descriptor that repeats a series (duplicates), another
// sampler whose family clashes with one (conflicts), unusable series and values (invalid), label
// values and host names that need escaping or are not ASCII.
const cpu = makeDescriptor('cpu_usage', { cpu_usage: m('counter', 'nanoseconds', ['state'], 'CPU time, by state') }, [
  ['cpu_usage', ['user']],
  ['cpu_usage', ['system']],
  ['cpu_usage', ['idle "x"\\y\nz']],
]);
const net = makeDescriptor(
  'network',
  {
    network_bytes: m('counter', 'bytes', ['device'], 'Bytes'),
    network_packets: m('counter', 'packets', ['device'], 'Packets'),
  },
  [
    ['network_bytes', ['eth0']],
    ['network_bytes', ['wlan-é日本']],
    ['network_packets', ['eth0']],
  ],
);
const mem = makeDescriptor(
  'memory',
  {
    memory_free: m('gauge', 'bytes', [], 'Free memory'),
    memory_ratio: m('gauge', 'count', ['zone'], 'A ratio'),
    memory_latency: m('gauge', 'microseconds', [], 'A gauge in µs'),
    memory_bogus: m('gauge', 'furlongs' as never, [], 'An unknown unit'),
    memory_odd: m('gauge', 'count', ['k'], 'Odd values'),
    memory_odd_scaled: m('gauge', 'milliseconds', ['k'], 'Odd values, scaled'),
  },
  [
    ['memory_free', []],
    ['memory_ratio', ['a']],
    ['memory_ratio', ['b']],
    ['memory_latency', []],
    ['memory_bogus', []],
    ...Array.from({ length: 13 }, (_, k) => ['memory_odd', [String(k)]] as const),
    ...Array.from({ length: 13 }, (_, k) => ['memory_odd_scaled', [String(k)]] as const),
  ],
);
const ODD: readonly FrameValue[] = [0, -0, -12, 1.5, 1e21, 2 ** 53, 2 ** 53 - 1, -(2 ** 53 - 1), 1e-7, Number.NaN, Number.POSITIVE_INFINITY, 18_446_744_073_709_551_615n, -5n, 0n, 9_007_199_254_740_991n, 9_007_199_254_740_992n, -9_007_199_254_740_991n, 123_456_789_012n];
const lat = makeDescriptor(
  'latency',
  {
    syscall_latency: m('histogram', 'nanoseconds', ['op'], 'Syscall latency'),
    syscall_count: m('counter', 'count', [], 'Syscalls'),
  },
  [
    ['syscall_latency', ['read']],
    ['syscall_latency', ['write']],
    ['syscall_count', []],
  ],
);
/** repeats a series: the second is a duplicate */
const twice = makeDescriptor('twice', { twice_value: m('gauge', 'count', [], 'Twice') }, [
  ['twice_value', []],
  ['twice_value', []],
]);
/** memory_free_bytes again, with another label set, from another sampler: a conflict */
const clash = makeDescriptor('clash', { memory_free: m('gauge', 'bytes', ['x'], 'Clash') }, [['memory_free', ['1']]]);

const DESCRIPTORS: readonly Descriptor[] = [cpu, net, mem, lat, twice, clash];
const HOSTS = ['a', 'b-é', 'c"q\\', 'd'];


function valuesOf(d: Descriptor, hostIndex: number, tick: number, rnd: () => number): FrameValue[] {
  const n = d.series.length;
  if (d === cpu || d === net) {
    // growing counters, bigints past 2^53 for one host, a reset now and then
    return Array.from({ length: n }, (_, i) => {
      const v = tick * 1_000_003 * (i + 1) + hostIndex * 77 + Math.floor(rnd() * 1000);
      if (hostIndex === 3) return 2n ** 60n + BigInt(v);
      return tick % 17 === 16 && i === 0 ? 5 : v;
    });
  }
  if (d === mem) {
    const odd = Array.from({ length: ODD.length }, (_, k) => ODD[(k + tick + hostIndex) % ODD.length] as FrameValue);
    return [Math.floor(rnd() * 1e9), rnd(), Math.floor(rnd() * 1e6), rnd() * 1e4 - 5000, 7, ...odd, ...odd];
  }
  if (d === lat) {
    const grow = (k: number): FrameValue => h([10, tick * k + 1], [36, tick * 3 + hostIndex], [40 + (tick % 3), 2 * tick + 1]);
    return [grow(1), tick % 5 === 4 ? 'garbage' as never : grow(2), tick * 10];
  }
  return Array.from({ length: n }, () => Math.floor(rnd() * 100));
}

/** The fleet's frames: 100 ms apart for cpu and latency, 1 s for the rest, over `seconds`. */
function fleetState(seconds: number, oversample: readonly string[]): ExporterState {
  const state = new ExporterState({ intervalNs: SECOND, oversample });
  const rnd = prng(19);
  for (let tick = 0; tick < seconds * 10; tick++) {
    for (let hi = 0; hi < HOSTS.length; hi++) {
      for (const d of DESCRIPTORS) {
        const fast = d === cpu || d === lat || d === net;
        if (!fast && tick % 10 !== 0) continue;
        const seq = fast ? tick + 1 : tick / 10 + 1;
        const endNs = T0 + BigInt(tick) * 100_000_000n + BigInt(hi) * 1_000_000n;
        const f: Frame = makeFrame({ host: HOSTS[hi] as string, descriptor: d, seq, endNs, values: valuesOf(d, hi, tick, rnd) });
        state.ingest(f);
      }
    }
  }
  return state;
}

const rawFamily = {
  decl: familyDecl('rezolus_alerts', 'gauge', 'count', 'rule,host', 'Alerts'),
  text: 'rezolus_alerts{rule="r",host="a"} 1\nrezolus_alerts{rule="é",host="b"} 1\n',
  lines: 2,
};

const OPTION_SETS: readonly RenderOptions[] = [
  {},
  { histograms: true },
  { histograms: true, summaries: false, histogramGroupingPower: 2 },
  { percentiles: [0.5, 1], ratePercentiles: [0, 0.5, 1] },
  {
    families: [rawFamily],
    extra: [
      { name: 'rezolus_exporter_frames', kind: 'counter', help: 'Frames', value: 8 },
      { name: 'rezolus_exporter_last_frame_age', kind: 'gauge', unit: 'milliseconds', help: 'Age', labels: { host: 'é' }, value: 1500 },
      { name: 'rezolus_exporter_last_frame_age', kind: 'gauge', unit: 'milliseconds', help: 'Age', labels: { host: 'é' }, value: 1 },
      { name: 'bad name', kind: 'gauge', help: 'x', value: 1 },
    ],
  },
];

test('the byte-writing render gives the reference render’s text and counts on a mixed fleet, render after render', (t) => {
  const state = fleetState(3, ['cpu_usage', 'network_bytes', 'network_packets']);
  let sawRates = false;
  let sawDistribution = false;
  let totals = { duplicates: 0, conflicts: 0, invalid: 0 };
  for (const [k, options] of OPTION_SETS.entries()) {
    for (let round = 0; round < 2; round++) {
      const view = state.view(SECOND);
      const expected = renderExpositionReference(view, options);
      const got = renderExposition(view, options);
      t.is(got.text, expected.text, `option set ${k}, round ${round}`);
      t.true(got.body.equals(Buffer.from(expected.text, 'utf8')));
      t.deepEqual(
        { series: got.series, duplicates: got.duplicates, conflicts: got.conflicts, invalid: got.invalid },
        { series: expected.series, duplicates: expected.duplicates, conflicts: expected.conflicts, invalid: expected.invalid },
      );
      sawRates ||= got.text.includes('cpu_usage_seconds_rate{');
      sawDistribution ||= got.text.includes('syscall_latency_distribution_seconds_bucket{');
      totals = { duplicates: totals.duplicates + got.duplicates, conflicts: totals.conflicts + got.conflicts, invalid: totals.invalid + got.invalid };
    }
  }
  // the fleet does exercise what it is meant to
  t.true(sawRates && sawDistribution);
  t.true(totals.duplicates > 0 && totals.conflicts > 0 && totals.invalid > 0, JSON.stringify(totals));
});

test('after a smaller render, a bigger one is whole (buffers reused from render to render)', (t) => {
  const big = fleetState(2, ['cpu_usage']);
  const small = new ExporterState({ intervalNs: SECOND });
  small.ingest(makeFrame({ host: 'a', descriptor: cpu, values: [1, 2, 3] }));
  for (const state of [big, small, big, small]) {
    const view = state.view(SECOND);
    t.is(renderExposition(view, { histograms: true }).text, renderExpositionReference(view, { histograms: true }).text);
  }
});

test('the trailer is appended as it is, after every family', (t) => {
  const state = new ExporterState({ intervalNs: SECOND });
  state.ingest(makeFrame({ host: 'a', descriptor: cpu, values: [1, 2, 3] }));
  const trailer = '# HELP process_x X\n# TYPE process_x gauge\nprocess_x 1\n';
  const view = state.view(SECOND);
  const r = renderExposition(view, { trailer });
  t.is(r.text, renderExpositionReference(view).text + trailer);
  t.is(renderExposition([], { trailer }).text, trailer);
  t.is(renderExposition([]).body.length, 0);
});

test('an agent family named like one of the trailer’s is left out (a conflict): the exposition keeps one family per name', (t) => {
  const evil = makeDescriptor('evil', { process_cpu: m('counter', 'nanoseconds', [], 'x'), nodejs_gc_duration: m('gauge', 'seconds', [], 'y'), other: m('gauge', 'count', [], 'z') }, [
    ['process_cpu', []],
    ['nodejs_gc_duration', []],
    ['other', []],
  ]);
  const state = new ExporterState({ intervalNs: SECOND });
  state.ingest(makeFrame({ host: 'a', descriptor: evil, values: [5, 6, 7] }));
  const trailer =
    '# HELP process_cpu_seconds_total Total\n# TYPE process_cpu_seconds_total counter\nprocess_cpu_seconds_total 1.5\n' +
    '# HELP nodejs_gc_duration_seconds GC\n# TYPE nodejs_gc_duration_seconds histogram\nnodejs_gc_duration_seconds_bucket{le="+Inf"} 1\nnodejs_gc_duration_seconds_sum 0.1\nnodejs_gc_duration_seconds_count 1\n';
  const r = renderExposition(state.view(SECOND), { trailer });
  t.is(r.text, `# HELP other y\n# TYPE other gauge\nother{host="a"} 7\n${trailer}`.replace('other y', 'other z'));
  t.is(r.conflicts, 2);
  t.is(r.series, 1);
});
