import test from 'ava';
import { decodeFrame } from '../../src/frame/codec.js';
import { encodeFrame, type FrameHeader } from '../../src/frame/encode.js';
import { giveFrameBack, keptSlabs, SLAB_BYTES } from '../../src/frame/frame-slabs.js';

const header = (seq: number): FrameHeader => ({ host: 'h', sampler: 's', instance: 1, seq, beginNs: 1n, endNs: 2n, descriptor: '0123456789abcdef' });
/** a frame of ~1.6 kB: 200 float values */
const values = (seq: number): number[] => Array.from({ length: 200 }, (_, k) => seq + k / 7);

test.serial('a full slab whose frames were all given back is written again; the encoder makes no new one', (t) => {
  const buffers = new Set<ArrayBufferLike>();
  for (let seq = 1; seq <= 400; seq++) {
    const f = encodeFrame(header(seq), values(seq));
    buffers.add(f.buffer);
    giveFrameBack(f);
  }
  // 400 frames of ~1.6 kB are ~10 slabs' worth: two or three carry them all
  t.true(buffers.size <= 3, `${buffers.size} slabs for 400 frames`);
  t.true(keptSlabs() >= 1);
});

test.serial('a frame not given back keeps its bytes, whatever is encoded after it; given twice, it counts once', (t) => {
  const held = encodeFrame(header(7), values(7));
  const copy = Buffer.from(held);
  const twice = encodeFrame(header(8), values(8));
  giveFrameBack(twice);
  giveFrameBack(twice);
  const twiceCopy = Buffer.from(twice);
  // in the held frame's slab: the frames that fit after it, then never again
  const inHeldSlab: boolean[] = [];
  for (let seq = 100; seq < 100 + (4 * SLAB_BYTES) / 1000; seq++) {
    const f = encodeFrame(header(seq), values(seq));
    inHeldSlab.push(f.buffer === held.buffer);
    giveFrameBack(f);
  }
  const firstElsewhere = inHeldSlab.indexOf(false);
  t.true(firstElsewhere >= 0 && !inHeldSlab.slice(firstElsewhere).includes(true), 'its slab was never written again once full');
  t.deepEqual(Buffer.from(held), copy);
  t.is(decodeFrame(held).seq, 7);
  // the slab of `twice` is the held frame's too: a second give could not have freed it
  t.is(twice.buffer, held.buffer);
  t.deepEqual(Buffer.from(twice), twiceCopy);
});

test.serial('bytes from elsewhere are not taken', (t) => {
  const before = keptSlabs();
  giveFrameBack(new Uint8Array(100));
  giveFrameBack(Buffer.allocUnsafeSlow(SLAB_BYTES));
  t.is(keptSlabs(), before);
});

test.serial('only the newest frame is taken back: a stale give after its slab was reused, a late one, or a part of a frame leave the held frames alone', (t) => {
  // frames of one size (seq of the same width), each given back and remembered by slab and offset,
  // until one lands where an earlier one was: its slab was written again
  const seen = new Map<ArrayBufferLike, Map<number, Uint8Array>>();
  let held: Uint8Array | undefined;
  let stale: Uint8Array | undefined;
  for (let seq = 1000; seq < 20_000 && held === undefined; seq++) {
    const f = encodeFrame(header(seq), values(1));
    const before = seen.get(f.buffer)?.get(f.byteOffset);
    if (before !== undefined) {
      held = f;
      stale = before;
      break;
    }
    giveFrameBack(f);
    const bySlab = seen.get(f.buffer) ?? new Map<number, Uint8Array>();
    bySlab.set(f.byteOffset, f);
    seen.set(f.buffer, bySlab);
  }
  if (held === undefined || stale === undefined) return t.fail('no slab was written again');
  const copy = Buffer.from(held);
  // a second give of the old view, which starts where the held frame does
  giveFrameBack(stale);
  // a late give of the held frame itself, once another frame was made, and a part of one
  const other = encodeFrame(header(30_000), values(2));
  giveFrameBack(held);
  giveFrameBack(other);
  const part = encodeFrame(header(30_001), values(3));
  giveFrameBack(part.subarray(16));
  for (let seq = 40_000; seq < 42_000; seq++) giveFrameBack(encodeFrame(header(seq), values(seq)));
  t.deepEqual(Buffer.from(held), copy, 'the held frame was written over');
});
