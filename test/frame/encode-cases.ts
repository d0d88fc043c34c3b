/**
 * The encoder's cases: its bytes are msgpackr's. Run by encode.test.ts with
 * numbers written in JS and by encode-native.test.ts with the native
 * addon's packer (each test file is a process of its own).
 */
import test from 'ava';
import { decodeFrame } from '../../src/frame/codec.js';
import { encodeFrame, type FrameHeader } from '../../src/frame/encode.js';
import type { Value } from '../../src/metrics/point.js';
import { fleetSamplers, fleetValues } from '../helpers/fleet-shape.js';
import { packFrameObject } from '../helpers/frame-pack-old.js';
import { prng } from '../helpers/prng.js';

const hex = (b: Uint8Array): string => Buffer.from(b.buffer, b.byteOffset, b.byteLength).toString('hex');

const HEADER: FrameHeader = {
  host: 'web-01',
  sampler: 'cpu_usage',
  instance: 1_795_000_000,
  seq: 42,
  beginNs: 1_795_000_000_000_000_000n,
  endNs: 1_795_000_001_000_000_000n,
  descriptor: 'd41d8cd98f00b204',
};

/** Every boundary of msgpack's integer forms and of the 2^32, 2^53, 2^63 and 2^64 limits, either side. */
const EDGES: readonly number[] = [
  0, -0, 1, 0x1f, 0x20, 0x7f, 0x80, 0xff, 0x100, 0xffff, 0x10000, 2 ** 31 - 1, 2 ** 31, 2 ** 32 - 1, 2 ** 32, 2 ** 32 + 1,
  2 ** 53 - 1, 2 ** 53, 2 ** 62, 2 ** 63 - 1024, 2 ** 63, 2 ** 64 - 2048, 2 ** 64, 2 ** 70,
  -1, -0x20, -0x21, -0x80, -0x81, -0x8000, -0x8001, -(2 ** 31), -(2 ** 31) - 1, -(2 ** 32), -(2 ** 53), -(2 ** 63), -(2 ** 63) - 4096, -(2 ** 64),
  0.5, -0.5, 1e-300, 1.5e300, Number.MIN_VALUE, Number.MAX_VALUE, Number.NaN, Number.POSITIVE_INFINITY, Number.NEGATIVE_INFINITY, 4294967295.5,
];
const BIG_EDGES: readonly bigint[] = [0n, 1n, -1n, 2n ** 32n, 2n ** 53n - 1n, 2n ** 53n, -(2n ** 53n), 2n ** 63n - 1n, 2n ** 63n, 2n ** 64n - 1n, -(2n ** 63n)];

/** Registers every case, each title through `name`. */
export function encodeCases(name: (title: string) => string): void {
  test(name('the bytes are msgpackr\'s for every integer, float and bigint edge, alone and in histograms'), (t) => {
    for (const v of [...EDGES, ...BIG_EDGES]) {
      t.is(hex(encodeFrame(HEADER, [v])), hex(packFrameObject(HEADER, [v])), `value ${String(v)}`);
    }
    const hist: Value = { groupingPower: 3, maxValuePower: 64, index: [0, 1, 127, 128, 255, 256, 495], count: [1, 0x80, 0x10000, 2 ** 32, 2 ** 53 - 1, 2 ** 40 + 3, 7] };
    t.is(hex(encodeFrame(HEADER, [hist])), hex(packFrameObject(HEADER, [hist])));
    t.is(hex(encodeFrame({ ...HEADER, last: true }, [1])), hex(packFrameObject({ ...HEADER, last: true }, [1])), 'the last frame');
  });

  test(name('strings of every header size and of more than one UTF-8 byte per character, and values past 15 and 65535'), (t) => {
    for (const host of ['h', 'x'.repeat(31), 'x'.repeat(32), 'x'.repeat(255), 'x'.repeat(256), 'x'.repeat(70_000), 'hôte-é', '主机-😀', 'a\u0000b']) {
      t.is(hex(encodeFrame({ ...HEADER, host }, [])), hex(packFrameObject({ ...HEADER, host }, [])), `host of ${host.length} chars`);
    }
    for (const n of [15, 16, 65_535, 65_536]) {
      const values = Array.from({ length: n }, (_, i) => i * 977);
      t.is(hex(encodeFrame(HEADER, values)), hex(packFrameObject(HEADER, values)), `${n} values`);
    }
  });

  test(name('random frames of numbers, bigints and histograms: same bytes as msgpackr, and they decode back'), (t) => {
    const rand = prng(0x19);
    const value = (): Value => {
      const r = rand();
      if (r < 0.35) return Math.floor(rand() * 2 ** (1 + Math.floor(rand() * 64))) * (rand() < 0.2 ? -1 : 1);
      if (r < 0.5) return (rand() - 0.5) * 10 ** Math.floor(rand() * 40 - 20);
      if (r < 0.6) return BigInt(Math.floor(rand() * 2 ** 32)) * BigInt(Math.floor(rand() * 2 ** 32));
      const n = Math.floor(rand() * 40);
      const index: number[] = [];
      for (let i = 0, at = 0; i < n && at < 496; i++, at += 1 + Math.floor(rand() * 12)) index.push(at);
      return { groupingPower: 3, maxValuePower: 64, index, count: index.map(() => 1 + Math.floor(rand() * 2 ** Math.floor(rand() * 60))) };
    };
    for (let f = 0; f < 500; f++) {
      const values = Array.from({ length: Math.floor(rand() * 60) }, value);
      const header = { ...HEADER, seq: f, host: `host-${f}`, ...(f % 50 === 0 ? { last: true } : {}) };
      const ours = encodeFrame(header, values);
      t.is(hex(ours), hex(packFrameObject(header, values)), `frame ${f}`);
      const back = decodeFrame(ours);
      t.is(back.seq, f);
      t.is(back.values.length, values.length);
    }
  });

  test(name('the fleet bench\'s 26 real frame shapes encode as msgpackr does, and earlier frames are not overwritten by later ones'), async (t) => {
    const samplers = await fleetSamplers();
    const kept: { bytes: Uint8Array; copy: string }[] = [];
    for (let tick = 1; tick <= 40; tick++) {
      for (const s of samplers) {
        const header = { ...HEADER, sampler: s.name, seq: tick, descriptor: s.descriptor.hash };
        const values = fleetValues(s, 7, tick, 1_795_000_000_000 + tick);
        const bytes = encodeFrame(header, values);
        t.is(hex(bytes), hex(packFrameObject(header, values)), `${s.name} tick ${tick}`);
        kept.push({ bytes, copy: hex(bytes) });
      }
    }
    // 1040 frames went through several 64 KiB slabs: each is as it was when encoded
    t.true(kept.every((k) => hex(k.bytes) === k.copy));
  });

  test(name('a bigint beyond 64 bits is refused, and the next frame is whole'), (t) => {
    t.throws(() => encodeFrame(HEADER, [1, 2n ** 64n]), { instanceOf: RangeError });
    t.throws(() => encodeFrame(HEADER, [-(2n ** 63n) - 1n]), { instanceOf: RangeError });
    const after = encodeFrame(HEADER, [5]);
    t.is(hex(after), hex(packFrameObject(HEADER, [5])));
    t.deepEqual(decodeFrame(after).values, [5]);
  });

  test(name('a seq or instance beyond 32 bits, and a histogram index beyond 32 bits, are msgpackr\'s float64 as before'), (t) => {
    // msgpackr wrote the header's i and q, and a histogram's index, as plain numbers (float64 beyond 32 bits):
    // only the values and counts went through wireNumber; a seq passes 2^32 after 497 days at the 10 ms interval
    for (const n of [2 ** 32, 2 ** 32 + 1, 2 ** 40, 2 ** 53 - 1, 2 ** 53, 2 ** 63, 2 ** 64, -(2 ** 31) - 1, -(2 ** 40), 2 ** 31, 4294967295.5]) {
      t.is(hex(encodeFrame({ ...HEADER, seq: n }, [])), hex(packFrameObject({ ...HEADER, seq: n }, [])), `seq ${n}`);
      t.is(hex(encodeFrame({ ...HEADER, instance: n }, [])), hex(packFrameObject({ ...HEADER, instance: n }, [])), `instance ${n}`);
      const hist: Value = { groupingPower: 3, maxValuePower: 64, index: [n], count: [n] };
      t.is(hex(encodeFrame(HEADER, [hist])), hex(packFrameObject(HEADER, [hist])), `histogram index ${n}`);
    }
    const seq = 2 ** 32 + 7;
    t.is(decodeFrame(encodeFrame({ ...HEADER, seq }, [])).seq, seq);
  });

  test(name('a lone surrogate is U+FFFD, as valid UTF-8, where msgpackr wrote it as 3 bytes of no UTF-8 in strings under 64 chars'), (t) => {
    // the one place the bytes differ from msgpackr's on purpose: no frame's string can hold one (hosts are
    // hostToken's [a-z0-9_-], samplers SAMPLER_NAME, descriptors hex), and msgpackr's own longer strings had U+FFFD
    for (const host of ['a\uD800b', 'a\uDC00', '\uDBFF', `x\uD800${'y'.repeat(70)}`]) {
      const ours = encodeFrame({ ...HEADER, host }, []);
      t.is(decodeFrame(ours).host, host.replace(/[\uD800-\uDFFF]/g, '\uFFFD'));
      t.is(hex(ours), hex(packFrameObject({ ...HEADER, host: host.replace(/[\uD800-\uDFFF]/g, '\uFFFD') }, [])));
    }
    t.not(hex(encodeFrame({ ...HEADER, host: 'a\uD800b' }, [])), hex(packFrameObject({ ...HEADER, host: 'a\uD800b' }, [])), 'msgpackr wrote ed a0 80');
  });
}
