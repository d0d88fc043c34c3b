import test from 'ava';
import { createHash } from 'node:crypto';
import { describe, hashDescriptorJson, parseDescriptor, sameLayout } from '../../src/frame/descriptor.js';
import { metric, MetricKind, Unit } from '../../src/metrics/metric.js';
import type { Labels, Point } from '../../src/samplers/types.js';

const zeta = metric({ name: 'zeta_bytes', kind: MetricKind.Gauge, unit: Unit.Bytes, labels: ['device', 'op'], description: 'Z bytes.' });
const alpha = metric({ name: 'alpha_ops', kind: MetricKind.Counter, unit: Unit.Operations, labels: ['device'], description: 'A ops.' });
const lat = metric({ name: 'mid_latency', kind: MetricKind.Histogram, unit: Unit.Nanoseconds, labels: [], description: 'M latency.' });

const SDA_READ: Labels = { device: 'sda', op: 'read' };
const SDA_WRITE: Labels = { op: 'write', device: 'sda' }; // key order differs from the metric's label order
const SDA: Labels = { device: 'sda' };
const NONE: Labels = {};

function points(): Point[] {
  return [
    { metric: zeta, labels: SDA_READ, value: 1 },
    { metric: zeta, labels: SDA_WRITE, value: 2 },
    { metric: alpha, labels: SDA, value: 3 },
    { metric: lat, labels: NONE, value: { groupingPower: 3, maxValuePower: 64, index: [1], count: [1] } },
  ];
}

const EXPECTED_JSON =
  '{"v":1,"sampler":"blockio_test","metrics":{' +
  '"alpha_ops":{"kind":"counter","unit":"operations","labels":["device"],"description":"A ops."},' +
  '"mid_latency":{"kind":"histogram","unit":"nanoseconds","labels":[],"description":"M latency."},' +
  '"zeta_bytes":{"kind":"gauge","unit":"bytes","labels":["device","op"],"description":"Z bytes."}},' +
  '"series":[["zeta_bytes",["sda","read"]],["zeta_bytes",["sda","write"]],["alpha_ops",["sda"]],["mid_latency",[]]]}';

test('describe builds the exact descriptor JSON: metrics sorted, series in point order, labels in metric order', (t) => {
  const d = describe('blockio_test', points());
  t.is(d.json, EXPECTED_JSON);
  t.deepEqual(Object.keys(d.descriptor.metrics), ['alpha_ops', 'mid_latency', 'zeta_bytes']);
  t.deepEqual(d.descriptor.series, [
    ['zeta_bytes', ['sda', 'read']],
    ['zeta_bytes', ['sda', 'write']],
    ['alpha_ops', ['sda']],
    ['mid_latency', []],
  ]);
  t.is(d.descriptor.v, 1);
  t.is(d.descriptor.sampler, 'blockio_test');
  t.deepEqual(JSON.parse(d.json), d.descriptor);
});

test('the descriptor hash is the first 16 hex digits of sha256 over the JSON text', (t) => {
  const d = describe('blockio_test', points());
  t.regex(d.hash, /^[0-9a-f]{16}$/);
  t.is(d.hash, createHash('sha256').update(EXPECTED_JSON).digest('hex').slice(0, 16));
  t.is(d.hash, hashDescriptorJson(d.json));
});

test('hashDescriptorJson matches known sha256 prefixes', (t) => {
  t.is(hashDescriptorJson(''), 'e3b0c44298fc1c14');
  t.is(hashDescriptorJson('abc'), 'ba7816bf8f01cfea');
  t.is(hashDescriptorJson(EXPECTED_JSON), createHash('sha256').update(EXPECTED_JSON, 'utf8').digest('hex').slice(0, 16));
});

test('describing the same points twice gives the same hash, with fresh label objects too', (t) => {
  const a = describe('blockio_test', points());
  const b = describe('blockio_test', points());
  const fresh = points().map((p) => ({ ...p, labels: { ...p.labels } }));
  const c = describe('blockio_test', fresh);
  t.is(a.hash, b.hash);
  t.is(a.hash, c.hash);
  t.is(a.json, c.json);
});

test('the values do not enter the descriptor', (t) => {
  const other = points().map((p, i) => ({ ...p, value: i === 3 ? p.value : 999_999 }));
  t.is(describe('blockio_test', other).hash, describe('blockio_test', points()).hash);
});

test('a different label value, series order, sampler or metric set changes the hash', (t) => {
  const base = describe('blockio_test', points()).hash;
  const relabelled = points();
  relabelled[0] = { metric: zeta, labels: { device: 'sdb', op: 'read' }, value: 1 };
  const reordered = points();
  reordered.reverse();
  const fewer = points().slice(0, 3);
  const hashes = [
    base,
    describe('blockio_test', relabelled).hash,
    describe('blockio_test', reordered).hash,
    describe('blockio_other', points()).hash,
    describe('blockio_test', fewer).hash,
  ];
  t.is(new Set(hashes).size, hashes.length);
});

test('a label missing from a point becomes an empty string', (t) => {
  const d = describe('x', [{ metric: zeta, labels: { device: 'sda' }, value: 1 }]);
  t.deepEqual(d.descriptor.series, [['zeta_bytes', ['sda', '']]]);
});

test('parseDescriptor round-trips describe output', (t) => {
  const d = describe('blockio_test', points());
  t.deepEqual(parseDescriptor(d.json), d.descriptor);
});

const GOOD = {
  v: 1,
  sampler: 's',
  metrics: { m: { kind: 'counter', unit: 'count', labels: ['a', 'b'], description: 'd' } },
  series: [['m', ['x', 'y']]],
};

function variant(change: (d: Record<string, unknown>) => void): string {
  const d = JSON.parse(JSON.stringify(GOOD)) as Record<string, unknown>;
  change(d);
  return JSON.stringify(d);
}

test('parseDescriptor accepts the minimal good descriptor', (t) => {
  t.deepEqual(parseDescriptor(JSON.stringify(GOOD)), GOOD);
});

const MALFORMED: readonly [string, string, RegExp][] = [
  ['invalid JSON text', '{"v":1,', /JSON/],
  ['JSON null', 'null', /not an object/],
  ['a JSON number', '5', /not an object/],
  ['version 2', variant((d) => (d.v = 2)), /version 2/],
  ['no version', variant((d) => delete d.v), /version undefined/],
  ['no sampler', variant((d) => delete d.sampler), /no sampler/],
  ['metrics null', variant((d) => (d.metrics = null)), /no metrics/],
  ['a null metric', variant((d) => (d.metrics = { m: null })), /metric "m" is malformed/],
  ['a bad kind', variant((d) => ((d.metrics as { m: { kind: string } }).m.kind = 'summary')), /metric "m" is malformed/],
  ['labels not an array', variant((d) => ((d.metrics as { m: { labels: unknown } }).m.labels = 'a,b')), /metric "m" is malformed/],
  ['no unit', variant((d) => delete (d.metrics as { m: { unit?: string } }).m.unit), /metric "m" is malformed/],
  ['no series', variant((d) => delete d.series), /no series/],
  ['series pointing to an unknown metric', variant((d) => (d.series = [['nope', ['x', 'y']]])), /series \["nope",\["x","y"\]\] does not match/],
  ['series pointing to a prototype key', variant((d) => (d.series = [['constructor', []]])), /series \["constructor",\[\]\] does not match/],
  ['too few label values', variant((d) => (d.series = [['m', ['x']]])), /does not match its metric/],
  ['too many label values', variant((d) => (d.series = [['m', ['x', 'y', 'z']]])), /does not match its metric/],
  ['label values not an array', variant((d) => (d.series = [['m', 'xy']])), /does not match its metric/],
  ['a series entry that is a string', variant((d) => (d.series = ['m'])), /does not match its metric/],
];

for (const [name, json, message] of MALFORMED) {
  test(`parseDescriptor rejects ${name}`, (t) => {
    t.throws(() => parseDescriptor(json), { instanceOf: Error, message });
  });
}

// ---- sameLayout ----

test('sameLayout is true for the same label objects', (t) => {
  const a = points();
  const b = points().map((p) => ({ ...p, value: 7 }));
  t.true(sameLayout(a, b));
  t.true(sameLayout([], []));
});

test('sameLayout is true for equal but new label objects', (t) => {
  const a = points();
  const b = points().map((p) => ({ ...p, labels: { ...p.labels } }));
  t.not(a[0]?.labels, b[0]?.labels);
  t.true(sameLayout(a, b));
});

test('sameLayout is false when a label value changes', (t) => {
  const b = points();
  b[1] = { metric: zeta, labels: { device: 'sda', op: 'discard' }, value: 2 };
  t.false(sameLayout(points(), b));
});

test('sameLayout is false when the length changes', (t) => {
  t.false(sameLayout(points(), points().slice(0, 3)));
  t.false(sameLayout(points().slice(0, 3), points()));
});

test('sameLayout is false when the metric changes, even with equal labels', (t) => {
  const twin = metric({ name: 'alpha_ops_twin', kind: MetricKind.Counter, unit: Unit.Operations, labels: ['device'], description: 'A ops.' });
  const b = points();
  b[2] = { metric: twin, labels: SDA, value: 3 };
  t.false(sameLayout(points(), b));
});

test('sameLayout agrees with the descriptor hash on the cases above', (t) => {
  const relabelled = points();
  relabelled[1] = { metric: zeta, labels: { device: 'sda', op: 'discard' }, value: 2 };
  const fresh = points().map((p) => ({ ...p, labels: { ...p.labels } }));
  for (const b of [relabelled, fresh, points().slice(0, 3)]) {
    t.is(sameLayout(points(), b), describe('s', points()).hash === describe('s', b).hash);
  }
});
