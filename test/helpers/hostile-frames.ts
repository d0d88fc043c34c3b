/**
 * A deterministic generator of hostile messages for frame subjects, each
 * with the skip reason a consumer must count it under (the checks run in
 * the order decode → subject → descriptor → values, and a message is
 * counted once, under the first that fails):
 *
 * - garbage: random bytes, truncated frames, a wrong type (or none) in
 *   every header field, declared lengths far beyond the message, deep
 *   nesting, extension types, trailing bytes, a window that ends before it
 *   begins;
 * - wrongSubject: a well-formed frame naming another host or sampler than
 *   its subject (the good host, among others), or its subject's host in
 *   another spelling of the same token (`GOOD-01` for `good-01`);
 * - unknownDescriptor: a hash that is not in the bucket, or not a hash;
 * - invalid: value count ≠ the descriptor's series (a known hash with
 *   fewer series, a huge values array), a descriptor of another sampler,
 *   NaN/±Infinity/negative/fractional/non-number counters, non-finite
 *   gauges, and histograms with indexes ≥ 496, unsorted, duplicate or
 *   negative, index and count arrays of different length, counts that are
 *   zero, negative, fractional or beyond 2^53, too many buckets.
 *
 * Every message is published on `rezolus.metrics.<host>.<sampler>` of one
 * of the hostile hosts or of the good host; no message that passes the
 * subject check carries the good host's run, so none can disturb it.
 */
import { Packr } from 'msgpackr';
import { hostToken, metricsSubject } from '../../src/bus/subjects.js';
import { encodeFrame, type FrameHeader } from '../../src/frame/codec.js';
import { hashDescriptorJson } from '../../src/frame/descriptor.js';
import type { Descriptor, FrameValue } from '../../src/frame/types.js';
import { FRAME_VERSION } from '../../src/frame/types.js';
import { h, m, makeDescriptor } from './frames.js';

export type HostileReason = 'garbage' | 'wrongSubject' | 'unknownDescriptor' | 'invalid';

export const HOSTILE_KINDS = {
  'random-bytes': 'garbage',
  truncated: 'garbage',
  'header-type': 'garbage',
  'huge-length': 'garbage',
  'deep-nesting': 'garbage',
  'ext-type': 'garbage',
  'trailing-bytes': 'garbage',
  'bad-window': 'garbage',
  'claims-other-host': 'wrongSubject',
  'claims-other-sampler': 'wrongSubject',
  'claims-host-spelling': 'wrongSubject',
  'unknown-hash': 'unknownDescriptor',
  'malformed-hash': 'unknownDescriptor',
  'series-count': 'invalid',
  'huge-values': 'invalid',
  'other-sampler-descriptor': 'invalid',
  'bad-counter': 'invalid',
  'bad-gauge': 'invalid',
  'bad-histogram': 'invalid',
} as const satisfies Record<string, HostileReason>;
export type HostileKind = keyof typeof HOSTILE_KINDS;
const KINDS = Object.keys(HOSTILE_KINDS) as HostileKind[];

/** The sampler every hostile and good frame is about: two counters, a gauge, a histogram. */
export const TARGET_SAMPLER = 'fuzz_target';
export const TARGET: Descriptor = makeDescriptor(
  TARGET_SAMPLER,
  {
    fuzz_latency: m('histogram', 'nanoseconds', [], 'Latency of fuzzed operations'),
    fuzz_level: m('gauge', 'count', [], 'A level that may go negative'),
    fuzz_ops: m('counter', 'count', ['op'], 'Fuzzed operations'),
  },
  [['fuzz_ops', ['read']], ['fuzz_ops', ['write']], ['fuzz_level', []], ['fuzz_latency', []]],
);
/** The same sampler with a series fewer (another agent version): a known hash, the wrong count. */
export const TARGET_SHORT: Descriptor = makeDescriptor(TARGET_SAMPLER, TARGET.metrics, TARGET.series.slice(0, 3));
/** Another sampler's descriptor with as many series as TARGET. */
export const OTHER: Descriptor = makeDescriptor(
  'fuzz_other',
  { fuzz_other: m('counter', 'count', ['n'], 'Another sampler') },
  [['fuzz_other', ['0']], ['fuzz_other', ['1']], ['fuzz_other', ['2']], ['fuzz_other', ['3']]],
);
/** What the descriptor bucket must hold: [hash, JSON] of each descriptor above. */
export const HOSTILE_DESCRIPTORS: readonly (readonly [string, string])[] = [TARGET, TARGET_SHORT, OTHER].map((d) => {
  const json = JSON.stringify(d);
  return [hashDescriptorJson(json), json] as const;
});
export const TARGET_HASH = (HOSTILE_DESCRIPTORS[0] as readonly [string, string])[0];
const SHORT_HASH = (HOSTILE_DESCRIPTORS[1] as readonly [string, string])[0];
const OTHER_HASH = (HOSTILE_DESCRIPTORS[2] as readonly [string, string])[0];

/** The good host's values of tick k ≥ 1: every one exact and distinct per tick. */
export function goodValues(k: number): FrameValue[] {
  return [1000 * k, 7 * k, (k % 50) - 25, h([10, k], [20, 2 * k])];
}

export interface HostileMessage {
  readonly kind: HostileKind;
  readonly reason: HostileReason;
  readonly subject: string;
  readonly data: Uint8Array;
}

const packr = new Packr({ useRecords: false, variableMapSize: true });

/** xorshift32: small, fast, and the same sequence for the same seed everywhere. */
class Rng {
  #s: number;
  constructor(seed: number) {
    this.#s = seed >>> 0 || 0x9e3779b9;
  }
  u32(): number {
    let x = this.#s;
    x ^= x << 13;
    x >>>= 0;
    x ^= x >>> 17;
    x ^= x << 5;
    this.#s = x >>> 0;
    return this.#s;
  }
  /** an integer in [0, n) */
  int(n: number): number {
    return this.u32() % n;
  }
  pick<T>(xs: readonly T[]): T {
    return xs[this.int(xs.length)] as T;
  }
  bytes(n: number): Uint8Array {
    const b = new Uint8Array(n);
    for (let i = 0; i < n; i++) b[i] = this.u32() & 0xff;
    return b;
  }
}

const NUMERIC_FIELDS = ['v', 'i', 'q', 'b', 'e'] as const;
const STRING_FIELDS = ['h', 's', 'd'] as const;
const WRONG_NUMBERS: readonly unknown[] = ['1', -1, 1.5, null, true, [], {}, Number.NaN, 1.8e19];
const WRONG_STRINGS: readonly unknown[] = [7, '', null, [], {}, true];
const WRONG_X: readonly unknown[] = [5, 'x', {}, null, true];
const MALFORMED_HASHES = ['NOT-A-HASH', '0123456789ABCDEF', '0123456789abcde', '0123456789abcdef0', '../../etc/passwd', 'ünïcödé-hash-000', '*', '>'];
const BAD_COUNTERS: readonly unknown[] = [Number.NaN, Number.POSITIVE_INFINITY, Number.NEGATIVE_INFINITY, -1, -(2n ** 40n), 1.5, '5', null, true, [1], {}];
const BAD_GAUGES: readonly unknown[] = [Number.NaN, Number.POSITIVE_INFINITY, Number.NEGATIVE_INFINITY, '1', null, []];
const BAD_HISTOGRAMS: readonly unknown[] = [
  [[10, 496], [1, 1]], // index beyond 495
  [[20, 10], [1, 1]], // unsorted
  [[10, 10], [1, 1]], // duplicate
  [[-1, 10], [1, 1]], // negative index
  [[10, 20], [1]], // count array shorter
  [[10], [1, 2]], // index array shorter
  [[10, 20], [1, 0]], // an empty bucket sent
  [[10, 20], [1, -3]], // negative count
  [[10, 20], [1, 0.5]], // fractional count
  [[10, 20], [1, Number.NaN]], // NaN count
  [[10, 20], [1, 2n ** 60n]], // count beyond 2^53
  [[10.5], [1]], // fractional index
  [['10'], [1]], // index as a string
  [[10], [1], [1]], // three parts
  5, // a number
  [Array.from({ length: 497 }, (_, i) => i), Array.from({ length: 497 }, () => 1)], // 497 buckets, the last index 496
];

export interface HostileOptions {
  readonly seed: number;
  /** hosts whose subjects carry hostile messages (they send nothing good) */
  readonly hostileHosts: readonly string[];
  /** the host whose good frames are interleaved: also a subject of hostile messages, and a name to impersonate */
  readonly goodHost: string;
}

export class HostileFrames {
  /** messages generated so far, by reason */
  readonly sent: Record<HostileReason, number> = { garbage: 0, wrongSubject: 0, unknownDescriptor: 0, invalid: 0 };
  readonly byKind = new Map<HostileKind, number>();
  readonly #rng: Rng;
  readonly #o: HostileOptions;
  readonly #unknownHashes: string[];
  #seq = 0;

  constructor(o: HostileOptions) {
    if (o.hostileHosts.length === 0) throw new Error('at least one hostile host');
    this.#o = o;
    this.#rng = new Rng(o.seed);
    // a pool, so the consumers' descriptor caches see a bounded set of misses
    this.#unknownHashes = Array.from({ length: 32 }, () => Array.from(this.#rng.bytes(8), (b) => b.toString(16).padStart(2, '0')).join(''));
  }

  next(): HostileMessage {
    const kind = this.#rng.pick(KINDS);
    const msg = this.#make(kind);
    this.sent[msg.reason]++;
    this.byKind.set(kind, (this.byKind.get(kind) ?? 0) + 1);
    return msg;
  }

  #make(kind: HostileKind): HostileMessage {
    const r = this.#rng;
    const reason = HOSTILE_KINDS[kind];
    // a hostile host's subject mostly; the good host's subject for one message in five
    const subjectHost = r.int(5) === 0 ? this.#o.goodHost : r.pick(this.#o.hostileHosts);
    const subject = metricsSubject(subjectHost, TARGET_SAMPLER);
    const header = this.#header(subjectHost);
    const values = goodValues(1 + r.int(1000));
    const out = (data: Uint8Array): HostileMessage => ({ kind, reason, subject, data });
    switch (kind) {
      case 'random-bytes':
        return out(r.bytes(r.int(300)));
      case 'truncated': {
        const full = encodeFrame(header, values);
        return out(full.subarray(0, r.int(full.byteLength)));
      }
      case 'header-type': {
        const map = wireMap(header, values);
        const field = r.pick([...NUMERIC_FIELDS, ...STRING_FIELDS, 'x'] as const);
        if (r.int(4) === 0) delete map[field];
        else if (field === 'x') map.x = r.pick(WRONG_X);
        else if ((NUMERIC_FIELDS as readonly string[]).includes(field)) map[field] = field === 'v' && r.int(2) === 0 ? r.pick([0, 2, FRAME_VERSION + 100]) : r.pick(WRONG_NUMBERS);
        else map[field] = r.pick(WRONG_STRINGS);
        return out(packr.pack(map));
      }
      case 'huge-length': {
        const lead = r.pick([
          [0xdd, 0xff, 0xff, 0xff, 0xff], // array32 of 2^32 − 1
          [0xdd, 0x7f, 0xff, 0xff, 0xff],
          [0xdc, 0xff, 0xff], // array16 of 65535
          [0xdf, 0xff, 0xff, 0xff, 0xff], // map32
          [0xde, 0x40, 0x00], // map16
          [0xdb, 0xff, 0xff, 0xff, 0xff], // str32
          [0xc6, 0x10, 0x00, 0x00, 0x00], // bin32 of 256 MiB
        ]);
        return out(concat(framePrefix(header), Uint8Array.from(lead), r.bytes(r.int(17))));
      }
      case 'deep-nesting': {
        const depth = 9 + r.int(r.int(2) === 0 ? 20 : 100_000);
        const nest = new Uint8Array(depth + 1).fill(0x91);
        nest[depth] = 0x01;
        return out(concat(framePrefix(header), nest));
      }
      case 'ext-type': {
        const ext = r.pick([
          [0xd4, 0x01, 0x00], // fixext1
          [0xd6, 0xff, 0, 0, 0, 0], // timestamp32
          [0xc7, 0x02, 0x05, 0xaa, 0xbb], // ext8
        ]);
        return out(concat(framePrefix(header), Uint8Array.from([0x91, ...ext])));
      }
      case 'trailing-bytes':
        return out(concat(encodeFrame(header, values), r.bytes(1 + r.int(8))));
      case 'bad-window':
        return out(encodeFrame({ ...header, beginNs: header.endNs + 1n + BigInt(r.int(1_000_000)) }, values));
      case 'claims-other-host': {
        // on a hostile host's subject, a frame naming the good host (with a seq far ahead) or a host that does not exist
        const claimed = r.int(2) === 0 ? this.#o.goodHost : `ghost-${r.int(100)}`;
        const s = metricsSubject(r.pick(this.#o.hostileHosts), TARGET_SAMPLER);
        return { kind, reason, subject: s, data: encodeFrame({ ...header, host: hostToken(claimed), seq: 1_000_000 + this.#seq }, values) };
      }
      case 'claims-other-sampler':
        return out(encodeFrame({ ...header, sampler: r.pick(['cpu_usage', 'fuzz_other', 'memory_meminfo']) }, values));
      case 'claims-host-spelling':
        // the subject's own host, spelled another way that makes the same token: a host it would invent
        return out(encodeFrame({ ...header, host: otherSpelling(header.host, r) }, values));
      case 'unknown-hash':
        return out(encodeFrame({ ...header, descriptor: r.pick(this.#unknownHashes) }, values));
      case 'malformed-hash':
        return out(encodeFrame({ ...header, descriptor: r.pick(MALFORMED_HASHES) }, values));
      case 'series-count': {
        // the short descriptor with all four values, or the full one with 0..3 or 5
        const variant = r.int(3);
        if (variant === 0) return out(encodeFrame({ ...header, descriptor: SHORT_HASH }, values));
        return out(encodeFrame(header, variant === 1 ? values.slice(0, r.int(4)) : [...values, 5]));
      }
      case 'huge-values': {
        const n = 1000 + r.int(r.int(8) === 0 ? 60_000 : 5000);
        const map = wireMap(header, []);
        map.x = new Array<number>(n).fill(1);
        return out(packr.pack(map));
      }
      case 'other-sampler-descriptor':
        return out(encodeFrame({ ...header, descriptor: OTHER_HASH }, [1, 2, 3, 4]));
      case 'bad-counter': {
        const map = wireMap(header, values);
        (map.x as unknown[])[r.int(2)] = r.pick(BAD_COUNTERS);
        return out(packr.pack(map));
      }
      case 'bad-gauge': {
        const map = wireMap(header, values);
        (map.x as unknown[])[2] = r.pick(BAD_GAUGES);
        return out(packr.pack(map));
      }
      case 'bad-histogram': {
        const map = wireMap(header, values);
        (map.x as unknown[])[3] = r.pick(BAD_HISTOGRAMS);
        return out(packr.pack(map));
      }
    }
  }

  /** A header the subject's host could send: a hostile run of its own, never the good host's. */
  #header(subjectHost: string): FrameHeader {
    const seq = ++this.#seq;
    const endNs = BigInt(Date.now()) * 1_000_000n;
    return { host: hostToken(subjectHost), sampler: TARGET_SAMPLER, instance: 0xbad0_0000 + this.#rng.int(0xffff), seq, beginNs: endNs - 1_000_000n, endNs, descriptor: TARGET_HASH };
  }
}

/** Another name whose host token is `token`: some letters in upper case, some `_` as `.`; never the token itself. */
export function otherSpelling(token: string, r: { int(n: number): number }): string {
  const chars = [...token].map((c) => (r.int(2) === 0 ? c : /[a-z]/.test(c) ? c.toUpperCase() : c === '_' ? '.' : c));
  if (chars.join('') === token) {
    const at = chars.findIndex((c) => /[a-z_]/.test(c));
    if (at < 0) throw new Error(`host token ${token} has no other spelling`);
    chars[at] = chars[at] === '_' ? '.' : (chars[at] as string).toUpperCase();
  }
  const name = chars.join('');
  if (hostToken(name) !== token) throw new Error(`${name} is not a spelling of ${token}`);
  return name;
}

/** The frame map as encodeFrame writes it, to spoil one part of. */
function wireMap(header: FrameHeader, values: readonly FrameValue[]): Record<string, unknown> {
  const wire = (v: FrameValue): unknown => (typeof v === 'object' ? [v.index, v.count] : v);
  return { v: FRAME_VERSION, h: header.host, s: header.sampler, i: header.instance, q: header.seq, b: header.beginNs, e: header.endNs, d: header.descriptor, x: values.map(wire) };
}

/** A frame's bytes up to its values array, which is the last entry: what follows is the values. */
function framePrefix(header: FrameHeader): Uint8Array {
  const full = encodeFrame(header, []);
  if (full[full.byteLength - 1] !== 0x90) throw new Error('encodeFrame no longer writes x last');
  return full.subarray(0, full.byteLength - 1);
}

function concat(...parts: Uint8Array[]): Uint8Array {
  const out = new Uint8Array(parts.reduce((n, p) => n + p.byteLength, 0));
  let at = 0;
  for (const p of parts) {
    out.set(p, at);
    at += p.byteLength;
  }
  return out;
}
