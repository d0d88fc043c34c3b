import test from 'ava';
import { checkExposition } from '../helpers/exposition-check.js';
import { promtoolCheck } from '../helpers/promtool.js';

const OK = `# HELP a_total A
# TYPE a_total counter
a_total{host="x",k="v \\" \\\\ \\n"} 1
a_total{host="y"} 2.5e-9
# HELP b B \\\\ \\n
# TYPE b gauge
b 3
`;

test('a clean exposition has no problems', (t) => {
  t.deepEqual(checkExposition(OK), []);
  t.deepEqual(checkExposition(''), []);
});

test('problems promtool does not report are found', (t) => {
  const has = (text: string, fragment: string) => {
    const problems = checkExposition(text);
    t.true(
      problems.some((p) => p.includes(fragment)),
      `expected "${fragment}" in ${JSON.stringify(problems)}`,
    );
  };
  has(`${OK}a_total{host="x"} 1\n`, 'not contiguous');
  has(OK.replace('a_total{host="y"}', 'a_total{host="x",k="v \\" \\\\ \\n"}'), 'duplicate series');
  has(OK.replace('# HELP b B \\\\ \\n\n', ''), 'without a HELP');
  has(OK.replace('# TYPE b gauge\n', ''), 'without a TYPE');
  has(OK.replace('b 3', 'b NaN'), 'not a finite number');
  has(OK.replace('b 3', 'b +Inf'), 'not a finite number');
  has(OK.replace('2.5e-9', '1,5'), 'not a finite number');
  has(OK.replace('host="y"', '0bad="y"'), 'invalid label name');
  has(OK.replace('host="y"', 'host=y'), 'expected label name');
  has(OK.replace('host="y"', '__name__="y"'), 'invalid label name');
  has(OK.replace('host="y"', 'host="y",host="z"'), 'repeated');
  has(OK.replace('k="v', 'k="\\t'), 'invalid escape');
  has(OK.replace('HELP b B', 'HELP b B \\t'), 'invalid escape in HELP');
  has(OK.replaceAll('a_total', 'a'), 'does not end with _total');
  has(`${OK}# HELP b again\n`, 'second HELP');
  has(`# HELP c C\n# TYPE c gauge\n`, 'has no samples');
  has(OK.replace('b 3\n', 'b 3'), 'newline');
  has(OK.replace('b 3', 'b 3 extra'), 'cannot parse value');
});

/** Histograms, percentile gauges (written out of order) and a summary, all well-formed. */
const DIST = `# HELP rpc_latency_seconds RPC latency
# TYPE rpc_latency_seconds histogram
rpc_latency_seconds_bucket{host="a",le="0.001"} 0
rpc_latency_seconds_bucket{host="a",le="0.01"} 3
rpc_latency_seconds_bucket{host="a",le="0.1"} 3
rpc_latency_seconds_bucket{host="a",le="+Inf"} 4
rpc_latency_seconds_sum{host="a"} 0.25
rpc_latency_seconds_count{host="a"} 4
rpc_latency_seconds_bucket{host="b",le="-1"} 0
rpc_latency_seconds_bucket{host="b",le="1e-3"} 1
rpc_latency_seconds_bucket{host="b",le="+Inf"} 1e+06
rpc_latency_seconds_sum{host="b"} -0.5
rpc_latency_seconds_count{host="b"} 1000000
# HELP runqueue_latency_seconds Runqueue latency percentiles
# TYPE runqueue_latency_seconds gauge
runqueue_latency_seconds{host="a",percentile="0.5"} 0.000000103
runqueue_latency_seconds{host="a",percentile="0.9"} 0.000001023
runqueue_latency_seconds{host="a",percentile="0.99"} 0.000001023
runqueue_latency_seconds{host="a",percentile="1"} 0.001048575
runqueue_latency_seconds{host="b",percentile="0.99"} 7
runqueue_latency_seconds{host="b",percentile="0.25"} 2
runqueue_latency_seconds{host="b",percentile="0"} 1
# HELP rpc_size_bytes RPC sizes
# TYPE rpc_size_bytes summary
rpc_size_bytes{host="a",quantile="0.5"} 100
rpc_size_bytes{host="a",quantile="0.99"} 900
rpc_size_bytes_sum{host="a"} 5000
rpc_size_bytes_count{host="a"} 20
`;

test('histograms, percentile gauges and summaries that are well-formed have no problems', (t) => {
  t.deepEqual(checkExposition(DIST), []);
  // a histogram family declared with no series yet, as the exporter never writes one
  t.deepEqual(
    checkExposition(`${DIST}# HELP empty_seconds E\n# TYPE empty_seconds histogram\n`),
    ['family empty_seconds has no samples'],
    'only the existing no-samples rule, none of the per-series histogram rules',
  );
});

/** DIST with `from` (which must occur exactly once) replaced by `to`. */
function edit(from: string, to: string): string {
  const at = DIST.indexOf(from);
  if (at < 0 || DIST.indexOf(from, at + 1) >= 0) throw new Error(`${JSON.stringify(from)} is not in DIST exactly once`);
  return DIST.slice(0, at) + to + DIST.slice(at + from.length);
}

const A = 'histogram rpc_latency_seconds series {host="a"}';
const B = 'histogram rpc_latency_seconds series {host="b"}';

test('histogram buckets: le, order, monotonic counts, +Inf, _count, _sum', (t) => {
  const is = (text: string, expected: string[], why: string) => t.deepEqual(checkExposition(text), expected, why);
  is(edit('le="0.01"', 'le="fast"'), [`line 4: ${A}: le="fast" is not a number or +Inf`], 'invalid le');
  is(edit('le="0.01"', 'le="NaN"'), [`line 4: ${A}: le="NaN" is not a number or +Inf`], 'NaN le');
  is(edit('le="0.01"', 'le="1e999"'), [`line 4: ${A}: le="1e999" is not a number or +Inf`], 'le overflowing to infinity');
  is(edit('le="+Inf"} 4', 'le="Inf"} 4'), [`line 6: ${A}: le="Inf" is not a number or +Inf`, `line 3: ${A} has no le="+Inf" bucket`], 'Inf without +');
  is(edit('{host="a",le="0.01"}', '{host="a"}'), ['line 4: rpc_latency_seconds_bucket without an le label'], '_bucket without le');
  is(edit('le="0.01"', 'le="0.0001"'), [`line 4: ${A}: le="0.0001" comes after le="0.001"; le must increase`], 'le decreasing');
  is(edit('le="0.01"', 'le="1e-3"'), [`line 4: ${A}: le="1e-3" comes after le="0.001"; le must increase`], 'the same le written twice');
  is(
    edit('le="0.1"} 3', 'le="0.1"} 2'),
    [`line 5: ${A}: bucket le="0.1" count 2 is below le="0.01" count 3`],
    'bucket counts not monotonic',
  );
  is(
    edit('rpc_latency_seconds_bucket{host="a",le="+Inf"} 4\n', ''),
    [`line 3: ${A} has no le="+Inf" bucket`],
    'no +Inf bucket',
  );
  is(
    edit('rpc_latency_seconds_count{host="a"} 4', 'rpc_latency_seconds_count{host="a"} 5'),
    [`line 3: ${A}: rpc_latency_seconds_count 5 differs from the le="+Inf" bucket 4`],
    '_count differs from +Inf',
  );
  is(edit('rpc_latency_seconds_count{host="b"} 1000000\n', ''), [`line 9: ${B} has no rpc_latency_seconds_count`], 'no _count');
  is(edit('rpc_latency_seconds_sum{host="a"} 0.25\n', ''), [`line 3: ${A} has no rpc_latency_seconds_sum`], 'no _sum');
  is(
    edit('le="0.01"} 3', 'le="0.001"} 3'),
    [
      'line 4: duplicate series rpc_latency_seconds_bucket{host="a",le="0.001"}',
      `line 4: ${A}: le="0.001" comes after le="0.001"; le must increase`,
    ],
    'a bucket written twice',
  );
  is(edit('le="0.01"} 3', 'le="0.01"} 2.5'), ['line 4: rpc_latency_seconds_bucket 2.5 is not a count (a non-negative integer)'], 'fractional bucket count');
  is(
    edit('le="0.001"} 0', 'le="0.001"} -1'),
    ['line 3: rpc_latency_seconds_bucket -1 is not a count (a non-negative integer)'],
    'negative bucket count',
  );
  is(
    edit('rpc_latency_seconds_count{host="a"} 4', 'rpc_latency_seconds_count{host="a"} 4.5'),
    [
      'line 8: rpc_latency_seconds_count 4.5 is not a count (a non-negative integer)',
      `line 3: ${A}: rpc_latency_seconds_count 4.5 differs from the le="+Inf" bucket 4`,
    ],
    'fractional _count',
  );
});

test('histogram samples: names, le placement, contiguous series', (t) => {
  const is = (text: string, expected: string[], why: string) => t.deepEqual(checkExposition(text), expected, why);
  is(
    edit('rpc_latency_seconds_sum{host="a"} 0.25', 'rpc_latency_seconds{host="a"} 0.25'),
    [
      'line 7: sample rpc_latency_seconds of histogram rpc_latency_seconds is not a _bucket, _sum or _count',
      `line 3: ${A} has no rpc_latency_seconds_sum`,
    ],
    'a sample without a histogram suffix',
  );
  is(
    edit('rpc_latency_seconds_sum{host="a"}', 'rpc_latency_seconds_sum{host="a",le="+Inf"}'),
    ['line 7: le on rpc_latency_seconds_sum; only rpc_latency_seconds_bucket may have it'],
    'le on _sum',
  );
  is(
    edit('{host="a",percentile="0.5"}', '{host="a",le="0.5"}'),
    ['line 16: le on runqueue_latency_seconds, which is not a histogram'],
    'le on a gauge',
  );
  is(
    edit(
      'rpc_latency_seconds_sum{host="a"} 0.25\nrpc_latency_seconds_count{host="a"} 4\nrpc_latency_seconds_bucket{host="b",le="-1"} 0\n',
      'rpc_latency_seconds_bucket{host="b",le="-1"} 0\nrpc_latency_seconds_sum{host="a"} 0.25\nrpc_latency_seconds_count{host="a"} 4\n',
    ),
    [`line 8: ${A} is not contiguous (it started at line 3)`, `line 10: ${B} is not contiguous (it started at line 7)`],
    'two histogram series interleaved',
  );
  is(
    `${DIST}# HELP rpc_latency_seconds_count C\n# TYPE rpc_latency_seconds_count gauge\nrpc_latency_seconds_count{host="c"} 1\n`,
    ['family rpc_latency_seconds_count collides with the _count series of histogram rpc_latency_seconds'],
    'a family named like a histogram series',
  );
});

test('summaries: quantile placement, range and order', (t) => {
  const is = (text: string, expected: string[], why: string) => t.deepEqual(checkExposition(text), expected, why);
  is(
    edit('{host="a",percentile="0.5"}', '{host="a",quantile="0.5"}'),
    ['line 16: quantile on runqueue_latency_seconds, which is not a summary'],
    'quantile on a gauge',
  );
  is(
    edit('rpc_size_bytes_sum{host="a"}', 'rpc_size_bytes_sum{host="a",quantile="1"}'),
    ['line 27: quantile on rpc_size_bytes_sum; only rpc_size_bytes itself may have it'],
    'quantile on a summary _sum',
  );
  is(
    edit('rpc_size_bytes{host="a",quantile="0.5"}', 'rpc_size_bytes{host="a"}'),
    ['line 25: sample rpc_size_bytes of summary rpc_size_bytes without a quantile label'],
    'summary sample without quantile',
  );
  is(
    edit('rpc_size_bytes_sum{host="a"} 5000\n', 'rpc_size_bytes_bucket{host="a",le="1"} 3\nrpc_size_bytes_sum{host="a"} 5000\n'),
    ['line 27: le on rpc_size_bytes_bucket, which is not a histogram', 'line 27: rpc_size_bytes_bucket in summary rpc_size_bytes, which has no buckets'],
    'a _bucket in a summary',
  );
  is(edit('quantile="0.99"', 'quantile="1.5"'), ['line 26: rpc_size_bytes: quantile="1.5" is not a number in [0, 1]'], 'quantile above 1');
  is(
    edit('quantile="0.99"} 900', 'quantile="0.99"} 50'),
    ['line 26: summary rpc_size_bytes series {host="a"}: quantile="0.99" value 50 is below quantile="0.5" value 100'],
    'quantiles decreasing',
  );
  is(
    edit('rpc_size_bytes_count{host="a"} 20', 'rpc_size_bytes_count{host="a"} 20.5'),
    ['line 28: rpc_size_bytes_count 20.5 is not a count (a non-negative integer)'],
    'fractional summary _count',
  );
});

test('percentile gauges: a number in [0, 1], once per series, values non-decreasing', (t) => {
  const is = (text: string, expected: string[], why: string) => t.deepEqual(checkExposition(text), expected, why);
  const GA = 'gauge runqueue_latency_seconds series {host="a"}';
  const GB = 'gauge runqueue_latency_seconds series {host="b"}';
  is(edit('percentile="0.5"', 'percentile="p50"'), ['line 16: runqueue_latency_seconds: percentile="p50" is not a number in [0, 1]'], 'not a number');
  is(edit('percentile="0.5"', 'percentile="NaN"'), ['line 16: runqueue_latency_seconds: percentile="NaN" is not a number in [0, 1]'], 'NaN');
  is(edit('percentile="0.99"} 7', 'percentile="99"} 7'), ['line 20: runqueue_latency_seconds: percentile="99" is not a number in [0, 1]'], 'a percent, not a fraction');
  is(edit('percentile="0"', 'percentile="-0.1"'), ['line 22: runqueue_latency_seconds: percentile="-0.1" is not a number in [0, 1]'], 'negative');
  is(
    edit('percentile="0.99"} 0.000001023', 'percentile="0.99"} 0.0000001'),
    [`line 18: ${GA}: percentile="0.99" value 0.0000001 is below percentile="0.9" value 0.000001023`],
    'p99 below p90',
  );
  is(
    edit('percentile="0.25"} 2', 'percentile="0.25"} 8'),
    [`line 20: ${GB}: percentile="0.99" value 7 is below percentile="0.25" value 8`],
    'compared by percentile, not by the order written',
  );
  is(
    edit('percentile="0"} 1', 'percentile="0.250"} 1'),
    [`line 22: ${GB}: percentile="0.250" repeats percentile="0.25" (line 21)`],
    'the same percentile written two ways',
  );
});

test('counters are not negative', (t) => {
  t.deepEqual(checkExposition(OK.replace('2.5e-9', '-2.5e-9')), ['line 4: counter a_total is negative: -2.5e-9']);
});
test('the promtool helper reports status and output', (t) => {
  const clean = promtoolCheck(OK);
  if (clean === undefined) {
    t.log('promtool missing (apt-get install prometheus); skipped');
    t.pass();
    return;
  }
  t.is(clean.status, 0, clean.output);
  const dist = promtoolCheck(DIST);
  t.is(dist?.status, 0, dist?.output);
  const broken = promtoolCheck('a_total{ 1\n');
  t.is(broken?.status, 1);
  const lint = promtoolCheck('# HELP a A\n# TYPE a counter\na 1\n');
  t.is(lint?.status, 3);
  t.regex(lint?.output ?? '', /_total/);
});
