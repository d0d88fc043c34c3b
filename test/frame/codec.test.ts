import test from 'ava';
import { decode as msgpackDecode, encode as msgpackEncode, type ExtensionCodecType } from '@msgpack/msgpack';
import { readFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { decodeFrame, encodeFrame, FrameDecodeError, resolveFrame, type FrameHeader } from '../../src/frame/codec.js';
import { describe } from '../../src/frame/descriptor.js';
import type { Descriptor } from '../../src/frame/types.js';
import { metric, MetricKind, Unit } from '../../src/metrics/metric.js';
import type { SparseHistogram } from '../../src/metrics/histogram.js';
import { cpuUsage, cpuUsageAll, CPU_STATES } from '../../src/samplers/cpu/usage/metrics.js';
import type { Point, Value } from '../../src/samplers/types.js';

const CONTRACT = JSON.parse(
  readFileSync(join(dirname(fileURLToPath(import.meta.url)), '..', '..', 'subjects', 'subjects.json'), 'utf8'),
) as { frame: { fields: { key: string; type: string }[] } };
const CONTRACT_KEYS = CONTRACT.frame.fields.map((f) => f.key);

const BEGIN = 1_735_689_600_123_456_789n;
const END = 1_735_689_600_124_000_001n;

const HEADER: FrameHeader = {
  host: 'web01_example_com',
  sampler: 'test_mixed',
  instance: 0xdeadbeef,
  seq: 42,
  beginNs: BEGIN,
  endNs: END,
  descriptor: '0123456789abcdef',
};

const counter = metric({ name: 'test_counter', kind: MetricKind.Counter, unit: Unit.Count, labels: ['n'], description: 'c' });
const gauge = metric({ name: 'test_gauge', kind: MetricKind.Gauge, unit: Unit.Bytes, labels: ['n'], description: 'g' });
const histo = metric({ name: 'test_histogram', kind: MetricKind.Histogram, unit: Unit.Nanoseconds, labels: [], description: 'h' });

const HIST: SparseHistogram = { groupingPower: 3, maxValuePower: 64, index: [0, 5, 17, 200, 495], count: [1, 7, 4_294_967_296, 3, 12] };

// Input values and what resolveFrame must give back.
const CASES: readonly { metric: typeof counter; value: Value; expected: number | bigint | SparseHistogram }[] = [
  { metric: counter, value: 0, expected: 0 },
  { metric: counter, value: 2 ** 32 - 1, expected: 4_294_967_295 },
  { metric: counter, value: 2 ** 32, expected: 4_294_967_296 },
  { metric: counter, value: 2n ** 53n + 1n, expected: 9_007_199_254_740_993n },
  { metric: counter, value: 2n ** 64n - 1n, expected: 18_446_744_073_709_551_615n },
  { metric: counter, value: 10n, expected: 10 },
  { metric: gauge, value: -7, expected: -7 },
  { metric: gauge, value: 0.52, expected: 0.52 },
  { metric: gauge, value: 5e12, expected: 5_000_000_000_000 },
  { metric: gauge, value: -(2 ** 40), expected: -1_099_511_627_776 },
  { metric: histo, value: HIST, expected: HIST },
];

const POINTS: Point[] = CASES.map((c, i): Point => ({ metric: c.metric, labels: c.metric.labels.length > 0 ? { n: String(i) } : {}, value: c.value }));
const VALUES = CASES.map((c) => c.value);

/** An extension codec that refuses every ext type, built-in ones (timestamp) included. */
const NO_EXT: ExtensionCodecType<undefined> = {
  tryToEncode: () => null,
  decode: (_data, type) => {
    throw new Error(`msgpack extension type ${type} in a frame`);
  },
};

/** Decodes with @msgpack/msgpack: an independent reader, 64-bit integers as bigint, ext types refused. */
function independent(bytes: Uint8Array): Record<string, unknown> {
  return msgpackDecode(bytes, { useBigInt64: true, extensionCodec: NO_EXT }) as Record<string, unknown>;
}

test('encode → decodeFrame → resolveFrame round-trips counters, gauges and a histogram', (t) => {
  const d = describe('test_mixed', POINTS);
  const bytes = encodeFrame({ ...HEADER, descriptor: d.hash }, VALUES);
  const raw = decodeFrame(bytes);
  t.is(raw.v, 1);
  t.is(raw.host, 'web01_example_com');
  t.is(raw.sampler, 'test_mixed');
  t.is(raw.instance, 0xdeadbeef);
  t.is(raw.seq, 42);
  t.is(raw.beginNs, BEGIN);
  t.is(raw.endNs, END);
  t.is(raw.descriptor, d.hash);
  t.is(raw.values.length, CASES.length);

  const frame = resolveFrame(raw, d.descriptor);
  t.is(frame.descriptorHash, d.hash);
  t.is(frame.descriptor, d.descriptor);
  t.is(frame.seq, 42);
  t.is(frame.beginNs, BEGIN);
  t.is(frame.endNs, END);
  CASES.forEach((c, i) => {
    const got = frame.values[i];
    if (typeof c.expected === 'object') {
      t.deepEqual(got, c.expected, `value ${i}`);
    } else {
      t.is(typeof got, typeof c.expected, `value ${i} type`);
      t.is(got, c.expected, `value ${i}`);
    }
  });
});

test('an independent msgpack reader sees exactly the contract fields', (t) => {
  const d = describe('test_mixed', POINTS);
  const bytes = encodeFrame({ ...HEADER, descriptor: d.hash }, VALUES);
  const o = independent(bytes);
  // every contract field but the optional `l` (the last frame of a run), which only a stopping agent sends
  t.deepEqual(Object.keys(o).sort(), CONTRACT_KEYS.filter((k) => k !== 'l').sort());
  t.deepEqual(Object.keys(o).sort(), ['b', 'd', 'e', 'h', 'i', 'q', 's', 'v', 'x']);
  t.deepEqual(Object.keys(independent(encodeFrame({ ...HEADER, descriptor: d.hash, last: true }, VALUES))).sort(), [...CONTRACT_KEYS].sort());
  t.is(decodeFrame(encodeFrame({ ...HEADER, descriptor: d.hash, last: true }, VALUES)).last, true);
  t.is(o.v, 1);
  t.is(o.h, 'web01_example_com');
  t.is(o.s, 'test_mixed');
  t.is(o.i, 3_735_928_559);
  t.is(o.q, 42);
  t.is(o.b, BEGIN); // bigint: uint64 on the wire
  t.is(o.e, END);
  t.is(o.d, d.hash);
  t.regex(o.d as string, /^[0-9a-f]{16}$/);
  t.deepEqual(o.x, [
    0,
    4_294_967_295,
    4_294_967_296n,
    9_007_199_254_740_993n,
    18_446_744_073_709_551_615n,
    10,
    -7,
    0.52,
    5_000_000_000_000n,
    -1_099_511_627_776n,
    [[0, 5, 17, 200, 495], [1, 7, 4_294_967_296n, 3, 12]],
  ]);
});

test('integers of 2^32 and above are int64/uint64 on the wire, never float64', (t) => {
  const values: Value[] = [2 ** 32, 1e11, 12_345_678_901_234, 2 ** 53 - 1, -(2 ** 31) - 1, 2n ** 63n, -(2n ** 63n)];
  const x = independent(encodeFrame(HEADER, values)).x as unknown[];
  t.is(x.length, values.length);
  for (const [i, v] of x.entries()) t.is(typeof v, 'bigint', `value ${i} (${String(values[i])}) is an integer, not a float`);
  t.deepEqual(x, [4_294_967_296n, 100_000_000_000n, 12_345_678_901_234n, 9_007_199_254_740_991n, -2_147_483_649n, 2n ** 63n, -(2n ** 63n)]);
  // below 2^32 a plain msgpack int is enough
  const small = independent(encodeFrame(HEADER, [2 ** 32 - 1, -(2 ** 31)])).x as unknown[];
  t.deepEqual(small, [4_294_967_295, -2_147_483_648]);
});

test('a gauge outside the 64-bit range encodes as float64 instead of throwing', (t) => {
  const bytes = encodeFrame(HEADER, [1e20, -1e20, 2 ** 64]);
  t.deepEqual(independent(bytes).x, [1e20, -1e20, 2 ** 64]);
  const d: Descriptor = { v: 1, sampler: 'test_mixed', metrics: { test_gauge: { kind: 'gauge', unit: 'bytes', labels: [], description: 'g' } }, series: [['test_gauge', []], ['test_gauge', []], ['test_gauge', []]] };
  t.deepEqual(resolveFrame(decodeFrame(bytes), d).values, [1e20, -1e20, 2 ** 64]);
});

test('frames carry no msgpack extension types (and the strict reader would notice one)', (t) => {
  const d = describe('test_mixed', POINTS);
  t.notThrows(() => independent(encodeFrame({ ...HEADER, descriptor: d.hash }, VALUES)));
  // positive control: fixext 1 (0xd4) and the timestamp ext (-1) are refused by the same reader
  t.throws(() => independent(Uint8Array.of(0x81, 0xa1, 0x76, 0xd4, 0x05, 0x00)), { message: /extension type 5/ });
  t.throws(() => independent(msgpackEncode({ v: new Date(0) })), { message: /extension type -1/ });
});

test('the frame is a plain map: it starts with a map header and has 9 entries', (t) => {
  const bytes = encodeFrame(HEADER, [1, 2, 3]);
  t.is(bytes[0], 0x89); // fixmap of 9
});

// ---- decode errors: always FrameDecodeError ----

function validMap(): Record<string, unknown> {
  return { v: 1, h: 'h1', s: 'cpu_usage', i: 7, q: 1, b: BEGIN, e: END, d: '0123456789abcdef', x: [1, 2] };
}

const pack = (o: unknown): Uint8Array => msgpackEncode(o, { useBigInt64: true });

test('a map written by another msgpack encoder decodes', (t) => {
  const raw = decodeFrame(pack(validMap()));
  t.is(raw.host, 'h1');
  t.is(raw.instance, 7);
  t.is(raw.beginNs, BEGIN);
  t.deepEqual(raw.values, [1, 2]);
});

const BAD: readonly [string, Uint8Array][] = [
  ['empty input', new Uint8Array(0)],
  ['reserved byte 0xc1', Uint8Array.of(0xc1)],
  ['ascii text', new TextEncoder().encode('hello, world')],
  ['a truncated frame', encodeFrame(HEADER, [1, 2, 3]).subarray(0, 20)],
  ['a msgpack array', pack([1, 'h', 's', 7, 1, 1n, 2n, 'd', []])],
  ['a msgpack number', pack(5)],
  ['msgpack nil', pack(null)],
  ['version 2', pack({ ...validMap(), v: 2 })],
  ['version 0', pack({ ...validMap(), v: 0 })],
  ['version as string', pack({ ...validMap(), v: '1' })],
  ['empty host', pack({ ...validMap(), h: '' })],
  ['negative instance', pack({ ...validMap(), i: -1 })],
  ['float seq', pack({ ...validMap(), q: 1.5 })],
  ['string begin', pack({ ...validMap(), b: '1' })],
  ['negative end', pack({ ...validMap(), e: -5 })],
  ['x not an array', pack({ ...validMap(), x: { 0: 1 } })],
  ['a timestamp ext as version', pack({ ...validMap(), v: new Date(0) })],
];

for (const [name, bytes] of BAD) {
  test(`decodeFrame rejects ${name} with FrameDecodeError`, (t) => {
    const err = t.throws(() => decodeFrame(bytes), { instanceOf: FrameDecodeError });
    t.is(err?.code, 'FRAME_DECODE');
    t.is(err?.name, 'FrameDecodeError');
  });
}

for (const key of ['v', 'h', 's', 'i', 'q', 'b', 'e', 'd', 'x']) {
  test(`decodeFrame rejects a frame without field ${key}`, (t) => {
    const m = validMap();
    delete m[key];
    const err = t.throws(() => decodeFrame(pack(m)), { instanceOf: FrameDecodeError });
    t.regex(err?.message ?? '', new RegExp(`"${key}"`));
  });
}

test('decodeFrame names the unsupported version', (t) => {
  t.throws(() => decodeFrame(pack({ ...validMap(), v: 2 })), { instanceOf: FrameDecodeError, message: /version 2/ });
});

// ---- resolveFrame errors ----

const DESC: Descriptor = {
  v: 1,
  sampler: 'cpu_usage', // the sampler validMap() names: a descriptor must be of the frame's sampler
  metrics: {
    test_counter: { kind: 'counter', unit: 'count', labels: [], description: 'c' },
    test_histogram: { kind: 'histogram', unit: 'nanoseconds', labels: [], description: 'h' },
  },
  series: [['test_counter', []], ['test_histogram', []]],
};

function rawWith(x: unknown[]) {
  return decodeFrame(pack({ ...validMap(), x }));
}

test('resolveFrame accepts a well-formed counter + histogram frame', (t) => {
  const f = resolveFrame(rawWith([5, [[1, 9], [2, 3]]]), DESC);
  t.deepEqual(f.values, [5, { groupingPower: 3, maxValuePower: 64, index: [1, 9], count: [2, 3] }]);
});

const BAD_VALUES: readonly [string, unknown[], RegExp][] = [
  ['too few values', [5], /1 values.*2 series/],
  ['too many values', [5, [[1], [1]], 7], /3 values.*2 series/],
  ['a histogram where a counter is expected', [[[1], [1]], [[1], [1]]], /value 0 \(test_counter\)/],
  ['a counter where a histogram is expected', [5, 5], /value 1 \(test_histogram\)/],
  ['a string counter', ['5', [[1], [1]]], /value 0/],
  ['a decreasing histogram index', [5, [[9, 1], [1, 1]]], /value 1 \(test_histogram\)/],
  ['a repeated histogram index', [5, [[3, 3], [1, 1]]], /value 1/],
  ['a negative histogram count', [5, [[1, 2], [1, -1]]], /value 1/],
  ['a fractional histogram count', [5, [[1], [0.5]]], /value 1/],
  ['a histogram index beyond 495', [5, [[496], [1]]], /value 1/],
  ['a negative histogram index', [5, [[-1], [1]]], /value 1/],
  ['histogram arrays of different length', [5, [[1, 2], [1]]], /value 1/],
  ['a histogram with three parts', [5, [[1], [1], [1]]], /value 1/],
  ['a histogram count beyond 2^53', [5, [[1], [2n ** 60n]]], /value 1/],
];

for (const [name, x, message] of BAD_VALUES) {
  test(`resolveFrame rejects ${name} with FrameDecodeError`, (t) => {
    t.throws(() => resolveFrame(rawWith(x), DESC), { instanceOf: FrameDecodeError, message });
  });
}

// ---- wire size ----

test('a cpu_usage frame (2 CPUs + aggregate × 10 states) stays within 12 bytes per series + 100', (t) => {
  const points: Point[] = [];
  let v = 100_000_000_000; // 1e11 ns
  const next = (): number => {
    v = Math.min(v * 1.17 + 12_345_678, 9_999_999_999_999);
    return Math.round(v);
  };
  for (const state of CPU_STATES) points.push({ metric: cpuUsageAll, labels: { state }, value: next() });
  for (const id of ['0', '1']) {
    for (const state of CPU_STATES) points.push({ metric: cpuUsage, labels: { state, id }, value: next() });
  }
  t.is(points.length, 30);
  for (const p of points) t.true((p.value as number) >= 1e11 && (p.value as number) < 1e13);
  const d = describe('cpu_usage', points);
  const bytes = encodeFrame(
    { host: 'web01_example_com', sampler: 'cpu_usage', instance: 0x9a3f_12c7, seq: 123_456, beginNs: BEGIN, endNs: END, descriptor: d.hash },
    points.map((p) => p.value),
  );
  const budget = 30 * 12 + 100;
  t.log(`cpu_usage frame: ${bytes.byteLength} bytes for 30 series (${(bytes.byteLength / 30).toFixed(2)} B/series; budget ${budget})`);
  t.true(bytes.byteLength <= budget, `${bytes.byteLength} > ${budget}`);
  // and it still resolves to the same values
  const f = resolveFrame(decodeFrame(bytes), d.descriptor);
  t.deepEqual(f.values, points.map((p) => p.value));
});
