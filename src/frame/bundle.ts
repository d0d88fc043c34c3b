/**
 * A bundle: the frames of one host's tick in one message, a msgpack array
 * whose elements are `bin`, each holding one frame's bytes exactly as it
 * would travel alone. A consumer takes the frames out without copying them
 * and checks each as if it had come on its own subject.
 */
import { FrameDecodeError } from './codec.js';

/** What an array header and a bin header take at most (fixarray/array16/array32, bin8/bin16/bin32). */
const ARRAY_HEADER_MAX = 5;
const BIN_HEADER_MAX = 5;

/**
 * The most frames a bundle may hold: an agent sends one per sampler and
 * tick (26 today). A consumer refuses a bundle of more without looking at
 * its frames, so that one message on a host's own subject cannot make every
 * consumer split and check millions of elements.
 */
export const MAX_BUNDLE_FRAMES = 1024;

/**
 * The longest an agent holds frames of fast ticks to send them in one bundle
 * ([stream] bundle_interval): a live agent is heard at least this often, so
 * consumers that tell a restart from a second live agent by quiet
 * (exporter/state.ts) wait longer than this.
 */
export const MAX_BUNDLE_INTERVAL_MS = 500;
/** The fewest bytes a frame takes (its header fields alone take more): a shorter element is not one. */
export const MIN_FRAME_BYTES = 24;

/** The size of a bundle of frames whose sizes add up to `frameBytes`, at most (the headers at their largest). */
export function bundleBytesAtMost(frames: number, frameBytes: number): number {
  return ARRAY_HEADER_MAX + frames * BIN_HEADER_MAX + frameBytes;
}

/** The width of a bin element's length by its type byte (bin8, bin16, bin32). */
const BIN_WIDTH: ReadonlyMap<number, 1 | 2 | 4> = new Map([
  [0xc4, 1],
  [0xc5, 2],
  [0xc6, 4],
]);

function binHeaderSize(n: number): number {
  return n < 0x100 ? 2 : n < 0x10000 ? 3 : 5;
}

/** The size of the array header of a bundle of `count` frames. */
export function arrayHeaderSize(count: number): number {
  return count < 16 ? 1 : count < 0x10000 ? 3 : 5;
}

/** Writes the array header of a bundle of `count` frames at `at`; returns where it ends. */
export function writeArrayHeader(out: Buffer, at: number, count: number): number {
  if (count < 16) {
    out[at] = 0x90 | count;
    return at + 1;
  }
  if (count < 0x10000) {
    out[at] = 0xdc;
    return out.writeUInt16BE(count, at + 1);
  }
  out[at] = 0xdd;
  return out.writeUInt32BE(count, at + 1);
}

/** Writes the bin element of `frame` (header and bytes) at `at`; returns where it ends. */
export function writeBinElement(out: Buffer, at: number, frame: Uint8Array): number {
  const n = frame.byteLength;
  if (n < 0x100) {
    out[at++] = 0xc4;
    out[at++] = n;
  } else if (n < 0x10000) {
    out[at++] = 0xc5;
    at = out.writeUInt16BE(n, at);
  } else {
    out[at++] = 0xc6;
    at = out.writeUInt32BE(n, at);
  }
  out.set(frame, at);
  return at + n;
}

/** The frames' bytes as one msgpack array of bin, written into `alloc(size)` (a new buffer by default). */
export function encodeBundle(frames: readonly Uint8Array[], alloc: (size: number) => Buffer = Buffer.allocUnsafe): Uint8Array {
  let size = arrayHeaderSize(frames.length);
  for (const f of frames) size += binHeaderSize(f.byteLength) + f.byteLength;
  const out = alloc(size);
  let at = writeArrayHeader(out, 0, frames.length);
  for (const f of frames) at = writeBinElement(out, at, f);
  return out;
}

/**
 * The frames of a bundle, as views on its bytes. Throws FrameDecodeError
 * unless the bytes are exactly an array of at most MAX_BUNDLE_FRAMES bin of
 * MIN_FRAME_BYTES or more: a length past the end, an element of another
 * type or too short, or bytes left over refuse the whole bundle.
 */
export function bundleFrames(data: Uint8Array): Uint8Array[] {
  const view = new DataView(data.buffer, data.byteOffset, data.byteLength);
  const end = data.byteLength;
  let at = 0;
  const need = (n: number): void => {
    if (at + n > end) throw new FrameDecodeError('bundle: truncated');
  };
  /** the big-endian unsigned integer of `width` bytes at `at`, and past it */
  const uint = (width: 1 | 2 | 4): number => {
    need(width);
    const v = width === 1 ? view.getUint8(at) : width === 2 ? view.getUint16(at) : view.getUint32(at);
    at += width;
    return v;
  };
  const head = uint(1);
  let count: number;
  if ((head & 0xf0) === 0x90) count = head & 0x0f;
  else if (head === 0xdc) count = uint(2);
  else if (head === 0xdd) count = uint(4);
  else throw new FrameDecodeError('bundle: not a msgpack array');
  if (count > MAX_BUNDLE_FRAMES) throw new FrameDecodeError(`bundle: ${count} elements, more than ${MAX_BUNDLE_FRAMES}`);
  // a count the bytes cannot hold is a lie, not a reason to look further
  if (count * (2 + MIN_FRAME_BYTES) > end - at) throw new FrameDecodeError('bundle: more elements than its bytes hold');
  const frames: Uint8Array[] = [];
  for (let i = 0; i < count; i++) {
    const width = BIN_WIDTH.get(uint(1));
    if (width === undefined) throw new FrameDecodeError(`bundle: element ${i} is not bin`);
    const n = uint(width);
    if (n < MIN_FRAME_BYTES) throw new FrameDecodeError(`bundle: element ${i} is ${n} bytes, too short for a frame`);
    need(n);
    frames.push(data.subarray(at, at + n));
    at += n;
  }
  if (at !== end) throw new FrameDecodeError('bundle: bytes after the last element');
  return frames;
}
