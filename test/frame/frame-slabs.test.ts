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
