/**
 * The agent's frame encoder: msgpack written field by field into a shared
 * slab, with the bytes msgpackr gives for the same frame built as an object
 * (test/frame/encode-cases.ts holds it to that, value by value, with the
 * numbers written here and with them written by a NumberPacker, the native
 * one the agent sets when it runs without TurboFan).
 *
 * Building the object cost an array of wire values, a BigInt for every
 * integer beyond 32 bits (byte counters, nanoseconds) and msgpackr's walk of
 * the map: test/bench/frame-encode.ts measures what writing the fields
 * directly saves on one host's tick.
 *
 * The choices are msgpackr's (useRecords: false, variableMapSize: true):
 * - an integer in 0..2^32-1 is a positive fixint (below 0x80), uint8, uint16 or uint32;
 *   one in -2^31..-1 a negative fixint, int8, int16 or int32;
 * - any other integer of the 64-bit range is an int64, or a uint64 from 2^63 up;
 * - every other number is a float64;
 * - but the header's i and q and a histogram's indexes are plain numbers to msgpackr: float64 beyond 32 bits;
 * - a bigint is an int64, or a uint64 from 2^63 up (a bigint within ±2^53 goes as a number);
 * - a string's header is by its UTF-8 length: fixstr, str8, str16, str32.
 * One difference, on purpose: a lone surrogate is U+FFFD (TextEncoder), where
 * msgpackr wrote strings under 64 chars as WTF-8 (ed a0 80: not UTF-8, so not
 * msgpack str). No frame string can hold one (hosts are hostToken's).
 */
import type { Value } from '../metrics/point.js';
import { FRAME_VERSION, type RawFrame } from './types.js';
import { frameWritten, SLAB_BYTES, slabFull, takeSlab } from './frame-slabs.js';

/** What the agent knows when it encodes a frame: a frame's envelope, without the values. */
export type FrameHeader = Omit<RawFrame, 'v' | 'values'>;

const TWO_32 = 2 ** 32;
const TWO_63 = 2 ** 63;
const TWO_64 = 2 ** 64;
const MAX_SAFE = BigInt(Number.MAX_SAFE_INTEGER);
const I64_MAX = 2n ** 63n - 1n;
const I64_MIN = -(2n ** 63n);
const U64_MAX = 2n ** 64n - 1n;
/** the UTF-8 bytes of strings seen lately (host, sampler names, descriptor hashes); cleared when full */
const STRING_CACHE_MAX = 512;
const strings = new Map<string, Uint8Array>();
const utf8 = new TextEncoder();

let slab = takeSlab();
let view = new DataView(slab.buffer, slab.byteOffset, slab.byteLength);
/** where the frame being written began in the slab, and the write position */
let start = 0;
let at = 0;

/** Room for `n` more bytes: a new slab when this one is full, the frame so far copied to its start. */
function room(n: number): void {
  if (at + n <= slab.length) return;
  const written = at - start;
  const next = takeSlab(Math.max(SLAB_BYTES, 2 * (written + n)));
  slab.copy(next, 0, start, at);
  slabFull(slab);
  slab = next;
  view = new DataView(slab.buffer, slab.byteOffset, slab.byteLength);
  start = 0;
  at = written;
}

function writeUint64(hiLo: number, marker: number, negative: boolean): void {
  // hiLo is an integer: split into two 32-bit halves without a BigInt
  const hi = Math.floor(hiLo / TWO_32);
  const lo = hiLo - hi * TWO_32;
  slab[at++] = marker;
  if (negative) view.setInt32(at, hi);
  else view.setUint32(at, hi);
  view.setUint32(at + 4, lo);
  at += 8;
}

/**
 * A number as msgpackr writes a plain number: an integer of 32 bits as an int,
 * any other as a float64. The header's i and q and a histogram's indexes went
 * to msgpackr so, not through the old wireNumber.
 */
function writePlainNumber(v: number): void {
  if (v >>> 0 === v || v >> 0 === v) writeNumber(v);
  else {
    room(9);
    slab[at++] = 0xcb;
    view.setFloat64(at, v);
    at += 8;
  }
}

/** A value or count: as writePlainNumber, but an integer of the 64-bit range beyond 32 bits is an int64 or uint64 (the old wireNumber's BigInt). */
function writeNumber(v: number): void {
  room(9);
  if (v >>> 0 === v) {
    if (v < 0x80) slab[at++] = v;
    else if (v < 0x100) {
      slab[at++] = 0xcc;
      slab[at++] = v;
    } else if (v < 0x10000) {
      slab[at++] = 0xcd;
      slab[at++] = v >> 8;
      slab[at++] = v & 0xff;
    } else {
      slab[at++] = 0xce;
      view.setUint32(at, v);
      at += 4;
    }
  } else if (v >> 0 === v) {
    if (v >= -0x20) slab[at++] = 0x100 + v;
    else if (v >= -0x80) {
      slab[at++] = 0xd0;
      slab[at++] = v + 0x100;
    } else if (v >= -0x8000) {
      slab[at++] = 0xd1;
      view.setInt16(at, v);
      at += 2;
    } else {
      slab[at++] = 0xd2;
      view.setInt32(at, v);
      at += 4;
    }
  } else if (Number.isInteger(v) && v < TWO_64 && v >= -TWO_63) {
    if (v >= TWO_63) writeUint64(v, 0xcf, false);
    else writeUint64(v, 0xd3, v < 0);
  } else {
    slab[at++] = 0xcb;
    view.setFloat64(at, v);
    at += 8;
  }
}

function writeBigInt(v: bigint): void {
  room(9);
  if (v <= I64_MAX && v >= I64_MIN) {
    slab[at++] = 0xd3;
    view.setBigInt64(at, v);
  } else if (v <= U64_MAX && v > 0n) {
    slab[at++] = 0xcf;
    view.setBigUint64(at, v);
  } else {
    throw new RangeError(`${v} is beyond the 64-bit range of msgpack integers`);
  }
  at += 8;
}

function writeString(s: string): void {
  let bytes = strings.get(s);
  if (bytes === undefined) {
    bytes = utf8.encode(s);
    if (strings.size >= STRING_CACHE_MAX) strings.clear();
    strings.set(s, bytes);
  }
  const n = bytes.length;
  room(n + 5);
  if (n < 0x20) slab[at++] = 0xa0 | n;
  else if (n < 0x100) {
    slab[at++] = 0xd9;
    slab[at++] = n;
  } else writeLongLength(n, 0xda, 0xdb);
  slab.set(bytes, at);
  at += n;
}

/** A length of 16 bits after marker `m16`, or of 32 after `m32` (room for 5 bytes made). */
function writeLongLength(n: number, m16: number, m32: number): void {
  if (n < 0x10000) {
    slab[at++] = m16;
    slab[at++] = n >> 8;
    slab[at++] = n & 0xff;
  } else {
    slab[at++] = m32;
    view.setUint32(at, n);
    at += 4;
  }
}

function writeArrayHeader(n: number): void {
  room(5);
  if (n < 0x10) slab[at++] = 0x90 | n;
  else writeLongLength(n, 0xdc, 0xdd);
}

/** A key of the frame map: one letter, a fixstr. */
function writeKey(code: number): void {
  room(2);
  slab[at++] = 0xa1;
  slab[at++] = code;
}

/**
 * Writes `src[0..n)` at `dst[at..)` as writePlainNumber (`plain`) or
 * writeNumber would, with room for 9 bytes a number made; returns the
 * position after. The agent sets one from its native addon
 * (src/agent/number-packer.ts): at one tick a second it runs this file in
 * V8's interpreter, where writing a number cost more than reading it.
 */
export type NumberPacker = (src: Float64Array, n: number, plain: boolean, dst: Uint8Array, at: number) => number;

let packer: NumberPacker | undefined;
/** the numbers of one run, handed to the packer */
let run = new Float64Array(1024);

/** Numbers are written by `p` from now on (undefined: here, in JS). */
export function setNumberPacker(p: NumberPacker | undefined): void {
  packer = p;
}

/** The first `n` numbers of `run`, through the packer. */
function packRun(p: NumberPacker, n: number, plain: boolean): void {
  room(n * 9);
  at = p(run, n, plain, slab, at);
}

/** A histogram's indexes (`plain`) or counts, an array header first. */
function writeNumbers(a: readonly number[], plain: boolean): void {
  const n = a.length;
  writeArrayHeader(n);
  const p = packer;
  if (p === undefined) {
    if (plain) for (let i = 0; i < n; i++) writePlainNumber(a[i] as number);
    else for (let i = 0; i < n; i++) writeNumber(a[i] as number);
    return;
  }
  if (run.length < n) run = new Float64Array(n);
  for (let i = 0; i < n; i++) run[i] = a[i] as number;
  packRun(p, n, plain);
}

function writeValue(v: Value): void {
  if (typeof v === 'number') writeNumber(v);
  else if (typeof v === 'bigint') {
    if (v <= MAX_SAFE && v >= -MAX_SAFE) writeNumber(Number(v));
    else writeBigInt(v);
  } else {
    room(1);
    slab[at++] = 0x92;
    writeNumbers(v.index, true);
    writeNumbers(v.count, false);
  }
}

/** The values array: with a packer, each run of numbers in one call; bigints and histograms between runs. */
function writeValues(values: readonly Value[]): void {
  const n = values.length;
  writeArrayHeader(n);
  const p = packer;
  if (p === undefined) {
    for (let i = 0; i < n; i++) writeValue(values[i] as Value);
    return;
  }
  if (run.length < n) run = new Float64Array(n);
  let k = 0;
  for (let i = 0; i < n; i++) {
    const v = values[i] as Value;
    if (typeof v === 'number') {
      run[k++] = v;
      continue;
    }
    if (k > 0) packRun(p, k, false);
    k = 0;
    writeValue(v);
  }
  if (k > 0) packRun(p, k, false);
}

const K = (c: string): number => c.charCodeAt(0);
const KEY_V = K('v');
const KEY_H = K('h');
const KEY_S = K('s');
const KEY_I = K('i');
const KEY_Q = K('q');
const KEY_B = K('b');
const KEY_E = K('e');
const KEY_D = K('d');
const KEY_X = K('x');
const KEY_L = K('l');

/**
 * A frame as msgpack: the map {v, h, s, i, q, b, e, d, x[, l]}. The bytes
 * are a view of a shared slab, not written again unless given back at once (frame-slabs.ts giveFrameBack):
 * keep them as long as needed.
 */
export function encodeFrame(header: FrameHeader, values: readonly Value[]): Uint8Array {
  start = at;
  try {
    room(1);
    slab[at++] = header.last === true ? 0x8a : 0x89;
    writeKey(KEY_V);
    writeNumber(FRAME_VERSION);
    writeKey(KEY_H);
    writeString(header.host);
    writeKey(KEY_S);
    writeString(header.sampler);
    writeKey(KEY_I);
    writePlainNumber(header.instance);
    writeKey(KEY_Q);
    writePlainNumber(header.seq);
    writeKey(KEY_B);
    writeBigInt(header.beginNs);
    writeKey(KEY_E);
    writeBigInt(header.endNs);
    writeKey(KEY_D);
    writeString(header.descriptor);
    writeKey(KEY_X);
    writeValues(values);
    if (header.last === true) {
      writeKey(KEY_L);
      room(1);
      slab[at++] = 0xc3;
    }
  } catch (error) {
    at = start;
    throw error;
  }
  const frame = slab.subarray(start, at);
  frameWritten(slab, frame);
  return frame;
}
