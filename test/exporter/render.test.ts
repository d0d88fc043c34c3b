import test from 'ava';
import { createHash } from 'node:crypto';
import type { Frame, FrameValue } from '../../src/frame/types.js';
import type { ViewEntry } from '../../src/exporter/state.js';
import { ExporterState } from '../../src/exporter/state.js';
import { keptLineBytes, renderExposition, worthKeeping } from '../../src/exporter/render.js';
import { checkExposition } from '../helpers/exposition-check.js';
import { fullGc } from '../helpers/gc.js';
import { promtoolCheck } from '../helpers/promtool.js';
import { SECOND, T0, h, m, makeDescriptor, makeFrame } from '../helpers/frames.js';

const cpu = makeDescriptor('cpu_usage', { cpu_usage: m('counter', 'nanoseconds', ['state'], 'CPU time spent, by state') }, [
  ['cpu_usage', ['user']],
  ['cpu_usage', ['system']],
]);
const system = makeDescriptor(
  'system_info',
  {
    load_average: m('gauge', 'count', ['period'], 'Load average'),
    memory_total: m('gauge', 'bytes', [], 'Total memory'),
    network_device_packets: m('counter', 'packets', ['device', 'direction'], 'Packets, per device'),
  },
  [
    ['memory_total', []],
    ['load_average', ['1m']],
    ['network_device_packets', ['eth0', 'receive']],
  ],
);
const runq = makeDescriptor(
  'scheduler_runqueue',
  { scheduler_runqueue_latency: m('histogram', 'nanoseconds', [], 'Time tasks wait to run') },
  [['scheduler_runqueue_latency', []]],
);

function entry(latest: Frame, base?: Frame): ViewEntry {
  return { latest, base, rates: undefined, sinceNs: 0n };
}

/** A histogram series rendered from two frames one second apart. */
function renderWindow(base: FrameValue, latest: FrameValue, percentiles?: readonly number[]) {
  const b = makeFrame({ host: 'a', descriptor: runq, seq: 1, values: [base] });
  const l = makeFrame({ host: 'a', descriptor: runq, seq: 2, values: [latest] });
  return renderExposition([entry(l, b)], percentiles ? { percentiles } : {});
}

const GOLDEN = `# HELP cpu_usage_seconds_total CPU time spent, by state
# TYPE cpu_usage_seconds_total counter
cpu_usage_seconds_total{host="a",state="user"} 1152921504.606846977
cpu_usage_seconds_total{host="a",state="system"} 0.123456789
cpu_usage_seconds_total{host="b",state="user"} 5
cpu_usage_seconds_total{host="b",state="system"} 0.0000015
# HELP load_average Load average
# TYPE load_average gauge
load_average{host="a",period="1m"} 0.52
load_average{host="b",period="1m"} 12
# HELP memory_total_bytes Total memory
# TYPE memory_total_bytes gauge
memory_total_bytes{host="a"} 67108864000
memory_total_bytes{host="b"} 18446744073709551615
# HELP network_device_packets_total Packets, per device
# TYPE network_device_packets_total counter
network_device_packets_total{host="a",device="eth0",direction="receive"} 9007199254740993
network_device_packets_total{host="b",device="eth0",direction="receive"} 0
# HELP rezolus_exporter_frames_total Frames the exporter accepted
# TYPE rezolus_exporter_frames_total counter
rezolus_exporter_frames_total 8
# HELP scheduler_runqueue_latency_seconds Time tasks wait to run
# TYPE scheduler_runqueue_latency_seconds gauge
scheduler_runqueue_latency_seconds{host="a",percentile="0.5"} 0.000000103
scheduler_runqueue_latency_seconds{host="a",percentile="0.9"} 0.000001023
scheduler_runqueue_latency_seconds{host="a",percentile="0.99"} 0.000001023
scheduler_runqueue_latency_seconds{host="a",percentile="0.999"} 0.000001023
scheduler_runqueue_latency_seconds{host="a",percentile="0.9999"} 0.000001023
`;

test('golden: two hosts, counters, gauges, a histogram, an extra', (t) => {
  const s = new ExporterState();
  // hosts arrive in any order; output is by family, then host, then descriptor order
  s.ingest(makeFrame({ host: 'b', descriptor: cpu, values: [5_000_000_000, 1500] }));
  s.ingest(makeFrame({ host: 'b', descriptor: system, values: [2n ** 64n - 1n, 12, 0] }));
  s.ingest(makeFrame({ host: 'b', descriptor: runq, values: [h([36, 5])] })); // one frame: no window yet
  s.ingest(makeFrame({ host: 'a', descriptor: cpu, values: [2n ** 60n + 1n, 123_456_789] }));
  s.ingest(makeFrame({ host: 'a', descriptor: system, values: [67_108_864_000, 0.52, 2n ** 53n + 1n] }));
  s.ingest(makeFrame({ host: 'a', descriptor: runq, seq: 1, values: [h([36, 10])] }));
  s.ingest(makeFrame({ host: 'a', descriptor: runq, seq: 2, values: [h([36, 60], [63, 50])] }));
  const r = renderExposition(s.view(SECOND), {
    extra: [{ name: 'rezolus_exporter_frames', kind: 'counter', help: 'Frames the exporter accepted', value: s.stats.ingested + 1 }],
  });
  t.is(r.text, GOLDEN);
  t.deepEqual({ series: r.series, duplicates: r.duplicates, conflicts: r.conflicts, invalid: r.invalid }, { series: 16, duplicates: 0, conflicts: 0, invalid: 0 });
  t.deepEqual(checkExposition(r.text), []);
  // a second render of the same view (cached plans) gives the same text
  t.is(renderExposition(s.view(SECOND), { extra: [{ name: 'rezolus_exporter_frames', kind: 'counter', help: 'Frames the exporter accepted', value: 8 }] }).text, GOLDEN);
});

test('scaling to base units keeps integers exact and floats round-trippable', (t) => {
  const d = makeDescriptor(
    'units',
    {
      a_ns: m('gauge', 'nanoseconds', [], 'ns'),
      b_us: m('gauge', 'microseconds', [], 'us'),
      c_ms: m('counter', 'milliseconds', [], 'ms'),
      d_s: m('gauge', 'seconds', [], 's'),
      e_ratio: m('gauge', 'ratio', [], 'ratio'),
    },
    [
      ['a_ns', []],
      ['b_us', []],
      ['c_ms', []],
      ['d_s', []],
      ['e_ratio', []],
    ],
  );
  const r = renderExposition([entry(makeFrame({ host: 'a', descriptor: d, values: [1.5, 2n ** 64n - 1n, -2500, 0.1, 1] }))]);
  const lines = r.text.split('\n').filter((l) => !l.startsWith('#') && l !== '');
  t.deepEqual(lines, [
    'a_ns_seconds{host="a"} 1.5e-9',
    'b_us_seconds{host="a"} 18446744073709.551615',
    'c_ms_seconds_total{host="a"} -2.5',
    'd_s_seconds{host="a"} 0.1',
    'e_ratio{host="a"} 1',
  ]);
  for (const l of lines) t.true(Number.isFinite(Number(l.split(' ')[1])));
  t.is(Number('18446744073709.551615'), Number(2n ** 64n - 1n) / 1e6);
});

test('hostile label values, host and help text are escaped', (t) => {
  const hostile = 'a"b\nc\\d';
  const d = makeDescriptor('evil', { evil_thing: m('gauge', 'count', ['name'], 'line one\nline "two" \\ end') }, [['evil_thing', [hostile]]]);
  const r = renderExposition([entry(makeFrame({ host: `h"}\n`, descriptor: d, values: [1] }))]);
  t.is(
    r.text,
    '# HELP evil_thing line one\\nline "two" \\\\ end\n# TYPE evil_thing gauge\nevil_thing{host="h\\"}\\n",name="a\\"b\\nc\\\\d"} 1\n',
  );
  t.deepEqual(checkExposition(r.text), []);
  const p = promtoolCheck(r.text);
  if (p === undefined) t.log('promtool missing; skipped');
  else t.is(p.status, 0, p.output);
});

test('percentiles over the window: 10 samples at 100 ns in base, 90 more at 1000 ns', (t) => {
  const r = renderWindow(h([36, 10]), h([36, 10], [63, 90]));
  t.is(
    r.text,
    [
      '# HELP scheduler_runqueue_latency_seconds Time tasks wait to run',
      '# TYPE scheduler_runqueue_latency_seconds gauge',
      ...['0.5', '0.9', '0.99', '0.999', '0.9999'].map((q) => `scheduler_runqueue_latency_seconds{host="a",percentile="${q}"} 0.000001023`),
      '',
    ].join('\n'),
  );
  t.is(Number('0.000001023'), 1.023e-6);
  t.is(r.series, 5);
});

test('percentiles over the window spread over buckets; custom quantiles printed as given', (t) => {
  // window: 900 at 100 ns (≤103), 99 at 1000 ns (≤1023), 1 at 1 ms (≤1048575)
  const base = h([36, 1000], [63, 1]);
  const latest = h([36, 1900], [63, 100], [143, 1]);
  const values = (r: { text: string }) =>
    r.text
      .split('\n')
      .filter((l) => l.startsWith('scheduler'))
      .map((l) => l.replace('scheduler_runqueue_latency_seconds{host="a",', ''));
  t.deepEqual(values(renderWindow(base, latest)), [
    'percentile="0.5"} 0.000000103',
    'percentile="0.9"} 0.000000103',
    'percentile="0.99"} 0.000001023',
    'percentile="0.999"} 0.000001023',
    'percentile="0.9999"} 0.001048575',
  ]);
  t.deepEqual(values(renderWindow(base, latest, [0.25, 1, 0.25])), ['percentile="0.25"} 0.000000103', 'percentile="1"} 0.001048575']);
  t.throws(() => renderWindow(base, latest, [1.5]), { instanceOf: RangeError });
  t.throws(() => renderWindow(base, latest, [Number.NaN]), { instanceOf: RangeError });
});

test('histograms: no series without a base, on a reset, for an empty window, across runs', (t) => {
  const only = renderExposition([entry(makeFrame({ host: 'a', descriptor: runq, values: [h([36, 10])] }))]);
  t.is(only.text, '');
  t.is(only.series, 0);

  const reset = renderWindow(h([36, 10], [63, 5]), h([36, 2]));
  t.is(reset.text, '');
  t.is(reset.invalid, 0);

  t.is(renderWindow(h([36, 10]), h([36, 10])).text, '');
  t.is(renderWindow(h(), h()).text, '');

  const b = makeFrame({ host: 'a', descriptor: runq, seq: 9, instance: 1, values: [h([36, 1])] });
  const l = makeFrame({ host: 'a', descriptor: runq, seq: 1, instance: 2, values: [h([36, 5])] });
  t.is(renderExposition([entry(l, b)]).text, '');

  // the family stays out while none of its series has samples, other families are unaffected
  const mixed = renderExposition([
    entry(makeFrame({ host: 'a', descriptor: runq, values: [h([36, 10])] })),
    entry(makeFrame({ host: 'a', descriptor: cpu, values: [1, 2] })),
  ]);
  t.false(mixed.text.includes('scheduler'));
  t.deepEqual(checkExposition(mixed.text), []);
});

test('histogram base is matched by series identity when the descriptor changed', (t) => {
  const before = makeDescriptor('syscall', { syscall_latency: m('histogram', 'nanoseconds', ['op'], 'Syscall latency') }, [
    ['syscall_latency', ['read']],
  ]);
  const after = makeDescriptor('syscall', { syscall_latency: m('histogram', 'nanoseconds', ['op'], 'Syscall latency') }, [
    ['syscall_latency', ['write']],
    ['syscall_latency', ['read']],
  ]);
  const b = makeFrame({ host: 'a', descriptor: before, seq: 1, values: [h([36, 10])] });
  const l = makeFrame({ host: 'a', descriptor: after, seq: 2, values: [h([63, 4]), h([36, 10], [63, 1])] });
  const r = renderExposition([entry(l, b)], { percentiles: [0.5] });
  t.is(r.text, '# HELP syscall_latency_seconds Syscall latency\n# TYPE syscall_latency_seconds gauge\nsyscall_latency_seconds{host="a",op="read",percentile="0.5"} 0.000001023\n');
});

test('duplicate series are written once and counted', (t) => {
  const twice = makeDescriptor('cpu_usage', { cpu_usage: m('counter', 'nanoseconds', ['state'], 'CPU time') }, [
    ['cpu_usage', ['user']],
    ['cpu_usage', ['user']],
  ]);
  const other = makeDescriptor('cpu_other', { cpu_usage: m('counter', 'nanoseconds', ['state'], 'CPU time, again') }, [
    ['cpu_usage', ['user']],
    ['cpu_usage', ['idle']],
  ]);
  const hist2 = makeDescriptor('runq_twice', { scheduler_runqueue_latency: m('histogram', 'nanoseconds', [], 'again') }, [
    ['scheduler_runqueue_latency', []],
  ]);
  const r = renderExposition([
    entry(makeFrame({ host: 'a', descriptor: twice, values: [1, 2] })),
    entry(makeFrame({ host: 'a', descriptor: other, values: [3, 4] })),
    entry(makeFrame({ host: 'a', descriptor: runq, seq: 2, values: [h([36, 2])] }), makeFrame({ host: 'a', descriptor: runq, values: [h([36, 1])] })),
    entry(makeFrame({ host: 'a', descriptor: hist2, seq: 2, values: [h([63, 2])] }), makeFrame({ host: 'a', descriptor: hist2, values: [h()] })),
  ]);
  t.is(r.duplicates, 3);
  t.is(r.conflicts, 0);
  t.is(
    r.text,
    [
      // entries render by host, then sampler: cpu_other before cpu_usage, runq_twice before scheduler_runqueue
      '# HELP cpu_usage_seconds_total CPU time, again',
      '# TYPE cpu_usage_seconds_total counter',
      'cpu_usage_seconds_total{host="a",state="user"} 0.000000003',
      'cpu_usage_seconds_total{host="a",state="idle"} 0.000000004',
      '# HELP scheduler_runqueue_latency_seconds again',
      '# TYPE scheduler_runqueue_latency_seconds gauge',
      ...['0.5', '0.9', '0.99', '0.999', '0.9999'].map((q) => `scheduler_runqueue_latency_seconds{host="a",percentile="${q}"} 0.000001023`),
      '',
    ].join('\n'),
  );
  t.deepEqual(checkExposition(r.text), []);
});

test('a family seen with another kind, unit or label set keeps the first and counts the conflict', (t) => {
  const first = makeDescriptor('one', { io_bytes: m('gauge', 'count', [], 'first') }, [['io_bytes', []]]);
  const unit = makeDescriptor('two', { io: m('gauge', 'bytes', [], 'unit differs') }, [['io', []]]);
  const kind = makeDescriptor('three', { io_bytes: m('histogram', 'bytes', [], 'kind differs') }, [['io_bytes', []]]);
  const labels = makeDescriptor('four', { io_bytes: m('gauge', 'count', ['dev'], 'labels differ') }, [['io_bytes', ['sda']]]);
  const r = renderExposition(
    [
      entry(makeFrame({ host: 'a', descriptor: first, values: [1] })),
      entry(makeFrame({ host: 'b', descriptor: unit, values: [2] })),
      entry(makeFrame({ host: 'c', descriptor: kind, seq: 2, values: [h([36, 2])] }), makeFrame({ host: 'c', descriptor: kind, values: [h()] })),
      entry(makeFrame({ host: 'd', descriptor: labels, values: [4] })),
    ],
    { extra: [{ name: 'io_bytes', kind: 'counter', help: 'counter io_bytes_total does not collide', value: 5 }] },
  );
  t.is(r.conflicts, 3);
  t.is(r.duplicates, 0);
  t.is(
    r.text,
    '# HELP io_bytes first\n# TYPE io_bytes gauge\nio_bytes{host="a"} 1\n' +
      '# HELP io_bytes_total counter io_bytes_total does not collide\n# TYPE io_bytes_total counter\nio_bytes_total 5\n',
  );
});

test('unusable descriptors and values are skipped and counted, never thrown', (t) => {
  const d = makeDescriptor(
    'bad',
    {
      good: m('gauge', 'count', ['k'], 'fine'),
      hist: m('histogram', 'nanoseconds', [], 'a histogram'),
      ctr: m('counter', 'count', [], 'a counter'),
      'bad-name': m('gauge', 'count', [], 'bad name'),
      badlabel: m('gauge', 'count', ['host'], 'reserved label'),
      dup: m('gauge', 'count', ['x', 'x'], 'repeated label'),
      weird: { kind: 'gauge', unit: 'furlongs', labels: [], description: 'unknown unit' } as never,
      strange: { kind: 'summary', unit: 'count', labels: [], description: 'unknown kind' } as never,
    },
    [
      ['good', ['1']], // ok
      ['hist', []], // number where a histogram belongs
      ['ctr', []], // NaN
      ['ctr', []], // histogram where a number belongs
      ['good', ['2']], // Infinity
      ['missing', []],
      ['constructor', []],
      ['__proto__', []],
      ['good', []], // label count differs
      ['bad-name', []],
      ['badlabel', ['x']],
      ['dup', ['1', '2']],
      ['weird', []],
      ['strange', []],
      ['hist', []], // malformed histogram object
      ['good', ['3']], // no value at all
    ],
  );
  const values: FrameValue[] = [1, 5, Number.NaN, h([1, 1]), Number.POSITIVE_INFINITY, 1, 1, 1, 1, 1, 1, 1, 1, 1, { index: [2, 1], count: [1, 1] } as never];
  const latest = makeFrame({ host: 'a', descriptor: d, seq: 2, values });
  const base = makeFrame({ host: 'a', descriptor: d, seq: 1, values });
  const r = renderExposition([entry(latest, base)], {
    extra: [
      { name: 'x', kind: 'gauge', help: 'bad label', labels: { 'a-b': '1' }, value: 1 },
      { name: 'y', kind: 'gauge', help: 'NaN', value: Number.NaN },
      { name: 'z', kind: 'gauge', help: 'unknown unit', unit: 'parsecs', value: 1 },
    ],
  });
  t.is(r.text, '# HELP good fine\n# TYPE good gauge\ngood{host="a",k="1"} 1\n');
  t.is(r.invalid, 15 + 3);
  t.is(r.series, 1);
});

test('a realistic multi-family render passes promtool and our own checks', (t) => {
  const s = new ExporterState();
  const cpus = Array.from({ length: 8 }, (_, i) => String(i));
  const states = ['user', 'nice', 'system', 'idle'];
  const perCpu = makeDescriptor(
    'cpu_usage',
    { cpu_usage: m('counter', 'nanoseconds', ['id', 'state'], 'CPU time per CPU and state'), cpu_cores: m('gauge', 'cores', [], 'Online CPUs') },
    [...cpus.flatMap((id) => states.map((st) => ['cpu_usage', [id, st]] as const)), ['cpu_cores', []]],
  );
  const blk = makeDescriptor(
    'blockio_latency',
    { blockio_latency: m('histogram', 'nanoseconds', ['op'], 'Block I/O latency'), blockio_size: m('histogram', 'bytes', ['op'], 'Block I/O size') },
    ['read', 'write'].flatMap((op) => [['blockio_latency', [op]] as const, ['blockio_size', [op]] as const]),
  );
  for (const host of ['db-1', 'web-1']) {
    for (let seq = 1; seq <= 3; seq++) {
      const t0 = T0 + BigInt(seq) * SECOND;
      s.ingest(makeFrame({ host, descriptor: perCpu, seq, endNs: t0, values: [...cpus.flatMap((_, i) => states.map((_, j) => seq * 1e9 + i * 1000 + j)), 8] }));
      s.ingest(makeFrame({ host, descriptor: system, seq, endNs: t0, values: [2n ** 36n, 0.52 * seq, 2n ** 53n + BigInt(seq)] }));
      s.ingest(makeFrame({ host, descriptor: runq, seq, endNs: t0, values: [h([36, 10 * seq], [63, 90 * seq], [143, seq])] }));
      s.ingest(makeFrame({ host, descriptor: blk, seq, endNs: t0, values: [h([60, seq]), h([100, seq]), h([70, 2 * seq]), h([110, 3 * seq])] }));
    }
  }
  const r = renderExposition(s.view(SECOND), {
    extra: [
      { name: 'rezolus_exporter_frames', kind: 'counter', help: 'Frames accepted', value: s.stats.ingested },
      { name: 'rezolus_exporter_hosts', kind: 'gauge', help: 'Hosts reporting', value: 2 },
    ],
  });
  t.is(r.series, 2 * (32 + 1 + 3 + 5 + 4 * 5) + 2);
  t.deepEqual({ d: r.duplicates, c: r.conflicts, i: r.invalid }, { d: 0, c: 0, i: 0 });
  t.deepEqual(checkExposition(r.text), []);
  const p = promtoolCheck(r.text);
  if (p === undefined) t.log('promtool missing (apt-get install prometheus); skipped');
  else t.is(p.status, 0, p.output);
});

test('render of ~5000 series is fast in steady state', (t) => {
  const cpus = Array.from({ length: 64 }, (_, i) => String(i));
  const states = ['user', 'nice', 'system', 'idle', 'iowait', 'irq', 'softirq', 'steal'];
  const metrics = Object.fromEntries(
    Array.from({ length: 8 }, (_, k) => [`cpu_m${k}`, m('counter', 'nanoseconds', ['id', 'state'], `counter ${k}`)]),
  );
  const series = Object.keys(metrics).flatMap((name) => cpus.flatMap((id) => states.map((st) => [name, [id, st]] as const)));
  const d = makeDescriptor('cpu_big', metrics, series);
  const entries = ['a', 'b'].map((host) => entry(makeFrame({ host, descriptor: d, values: series.map((_, i) => 1e12 + i) })));
  renderExposition(entries); // warm the plan cache
  const start = performance.now();
  const runs = 20;
  let r = renderExposition(entries);
  for (let i = 1; i < runs; i++) r = renderExposition(entries);
  const ms = (performance.now() - start) / runs;
  t.log(`${r.series} series: ${ms.toFixed(2)} ms per render, ${r.text.length} bytes`);
  t.is(r.series, 2 * 4096);
  t.true(ms < 100);
});

/** Both checkers must be clean on `text`. */
function assertClean(t: import('ava').ExecutionContext, text: string): void {
  t.deepEqual(checkExposition(text), []);
  const p = promtoolCheck(text);
  if (p === undefined) t.log('promtool missing; skipped');
  else t.is(p.status, 0, p.output);
}

test('histograms = true: a Prometheus histogram beside the summaries; summaries = false leaves it alone', (t) => {
  const b = makeFrame({ host: 'a', descriptor: runq, seq: 1, values: [h([36, 10])] });
  const l = makeFrame({ host: 'a', descriptor: runq, seq: 2, values: [h([36, 60], [63, 50])] });
  const both = renderExposition([entry(l, b)], { histograms: true, percentiles: [0.5, 1] });
  const lines = both.text.split('\n');
  t.true(lines.includes('# TYPE scheduler_runqueue_latency_distribution_seconds histogram'));
  t.true(lines.includes('scheduler_runqueue_latency_distribution_seconds_bucket{host="a",le="0.000000103"} 60'));
  t.true(lines.includes('scheduler_runqueue_latency_distribution_seconds_bucket{host="a",le="0.000001023"} 110'));
  t.true(lines.includes('scheduler_runqueue_latency_distribution_seconds_bucket{host="a",le="+Inf"} 110'));
  t.true(lines.includes('scheduler_runqueue_latency_distribution_seconds_count{host="a"} 110'));
  t.true(lines.includes('scheduler_runqueue_latency_seconds{host="a",percentile="1"} 0.000001023'));
  t.is(both.series, 64 + 3 + 2);
  assertClean(t, both.text);

  const only = renderExposition([entry(l, b)], { histograms: true, summaries: false, histogramGroupingPower: 0 });
  t.false(only.text.includes('percentile='));
  // g=0: buckets 0, 1, [2,3], [4,7] … [64,127] hold 100 ns, [512,1023] holds 1000 ns: 11 buckets
  t.is(only.series, 11 + 3);
  t.true(only.text.includes('scheduler_runqueue_latency_distribution_seconds_bucket{host="a",le="0.000000127"} 60\n'));
  assertClean(t, only.text);

  // a single frame already gives the cumulative histogram (no window needed)
  const first = renderExposition([entry(b)], { histograms: true, summaries: true });
  t.true(first.text.includes('scheduler_runqueue_latency_distribution_seconds_count{host="a"} 10\n'));
  t.false(first.text.includes('percentile='));
});

test('oversampled counters: percentiles of the per-sample rate within the interval, beside the raw counter', (t) => {
  const s = new ExporterState({ intervalNs: 15n * SECOND, oversample: ['cpu_usage'] });
  // 100 ms samples over 15 s: CPU time advances 1 ms per sample (1 %), except a 300 ms burst at 100 %
  let user = 0;
  for (let i = 0; i <= 150; i++) {
    if (i > 0) user += i >= 70 && i < 73 ? 100_000_000 : 1_000_000;
    s.ingest(makeFrame({ host: 'a', descriptor: cpu, seq: i + 1, endNs: T0 + BigInt(i) * 100_000_000n, values: [user, 0] }));
  }
  const r = renderExposition(s.view(15n * SECOND), { ratePercentiles: [0.5, 0.9, 0.99, 1] });
  const rate = r.text.split('\n').filter((l) => l.startsWith('cpu_usage_seconds_rate{host="a",state="user"'));
  t.deepEqual(rate, [
    'cpu_usage_seconds_rate{host="a",state="user",percentile="0.5"} 0.01',
    'cpu_usage_seconds_rate{host="a",state="user",percentile="0.9"} 0.01',
    'cpu_usage_seconds_rate{host="a",state="user",percentile="0.99"} 1',
    'cpu_usage_seconds_rate{host="a",state="user",percentile="1"} 1',
  ]);
  // the raw counter is still there, and its 15 s average is about 3 %
  t.true(r.text.includes('cpu_usage_seconds_total{host="a",state="user"} 0.447\n'));
  t.true(r.text.includes('# TYPE cpu_usage_seconds_rate gauge\n'));
  assertClean(t, r.text);
});

test('an agent series never shares a family with the exporter\'s own, even with the same labels', (t) => {
  const d = makeDescriptor('fake', { rezolus_exporter_last_frame_age: m('gauge', 'milliseconds', [], 'an agent mimicking the exporter') }, [
    ['rezolus_exporter_last_frame_age', []],
  ]);
  const r = renderExposition([entry(makeFrame({ host: 'a', descriptor: d, values: [5] }))], {
    extra: [{ name: 'rezolus_exporter_last_frame_age', kind: 'gauge', unit: 'milliseconds', help: 'own', labels: { host: 'a' }, value: 7 }],
  });
  t.is(r.text, '# HELP rezolus_exporter_last_frame_age_seconds an agent mimicking the exporter\n# TYPE rezolus_exporter_last_frame_age_seconds gauge\nrezolus_exporter_last_frame_age_seconds{host="a"} 0.005\n');
  t.is(r.conflicts, 1);
  t.is(r.duplicates, 0);
});

test('a family buffer far larger than what it last held is let go: kept at most 4x its content (64 KiB whatever it held)', (t) => {
  t.true(worthKeeping(64 * 1024 * 4, 0), 'small buffers stay');
  t.false(worthKeeping(64 * 1024 * 4 + 1, 0));
  t.true(worthKeeping(40 * 2 ** 20, 10 * 2 ** 20));
  t.false(worthKeeping(40 * 2 ** 20 + 1, 10 * 2 ** 20));
});

// serial: the line buffers are the module's, and a render of another test in between would let them go
test.serial('after a burst of series that went away, the render\'s buffers shrink back, and renders stay right', async (t) => {
  const names = Array.from({ length: 20_000 }, (_, i) => `burst-${i}`);
  const d = makeDescriptor('cgroup_like', { cgroup_like_bytes: m('gauge', 'bytes', ['cgroup'], 'A gauge per cgroup') }, names.map((n) => ['cgroup_like_bytes', [n]] as const));
  const small = makeDescriptor('cgroup_like', { cgroup_like_bytes: m('gauge', 'bytes', ['cgroup'], 'A gauge per cgroup') }, [['cgroup_like_bytes', ['one']]]);
  const hosts = Array.from({ length: 40 }, (_, i) => `host-${i}`);
  const big = hosts.map((host) => entry(makeFrame({ host, descriptor: d, values: names.map((_, i) => 1e12 + i) })));
  const after = [entry(makeFrame({ host: 'host-0', descriptor: small, values: [7] }))];
  // V8 frees array buffers' memory after a gc, on another thread: gc, let it finish, gc again
  const external = async (): Promise<number> => {
    fullGc();
    await new Promise((r) => setTimeout(r, 50));
    fullGc();
    return process.memoryUsage().arrayBuffers;
  };
  let first: ReturnType<typeof renderExposition> | undefined = renderExposition(big);
  t.is(first.series, 40 * 20_000);
  const bodyBytes = first.body.length;
  const want = createHash('sha256').update(first.body).digest('hex');
  first = undefined;
  // the body goes; the plan's caches (kept while the descriptor lives) and the family's line buffer stay
  const withBuffer = await external();
  const keptWith = keptLineBytes();
  const quiet = renderExposition(after);
  t.is(quiet.text, '# HELP cgroup_like_bytes A gauge per cgroup\n# TYPE cgroup_like_bytes gauge\ncgroup_like_bytes{host="host-0",cgroup="one"} 7\n');
  renderExposition(after);
  const without = await external();
  const keptWithout = keptLineBytes();
  t.log(`line buffers kept for the next render: ${keptWith} bytes after the burst, ${keptWithout} after`);
  t.true(keptWith >= bodyBytes * 0.9, 'the burst\'s family buffer is kept while it is used');
  t.true(keptWithout <= 4 * 64 * 1024, 'and let go once it holds a line');
  t.log(`array buffers: ${withBuffer} bytes after the burst (its body of ${bodyBytes} let go), ${without} after two quiet renders`);
  t.true(withBuffer - without > bodyBytes / 2, `the family's line buffer (about the body's size) is freed, though the quiet render's result is still held: ${withBuffer - without} bytes`);
  // and a burst again renders the same bytes as the first
  t.is(createHash('sha256').update(renderExposition(big).body).digest('hex'), want);
});
