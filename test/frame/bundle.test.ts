import test from 'ava';
import { decode as msgpackDecode, encode as msgpackEncode } from '@msgpack/msgpack';
import { bundleBytesAtMost, bundleFrames, encodeBundle, MAX_BUNDLE_FRAMES, MIN_FRAME_BYTES } from '../../src/frame/bundle.js';
import { FrameDecodeError } from '../../src/frame/codec.js';
import { prng } from '../helpers/prng.js';

function bytes(n: number, seed: number): Uint8Array {
  const out = new Uint8Array(n);
  for (let i = 0; i < n; i++) out[i] = (i * 31 + seed) & 0xff;
  return out;
}

const SHAPES: readonly (readonly number[])[] = [
  [],
  [MIN_FRAME_BYTES],
  [24, 255, 256],
  [65_535, 65_536, 30],
  Array.from({ length: 15 }, (_, i) => 24 + i * 7),
  Array.from({ length: 16 }, (_, i) => 300 + i),
  Array.from({ length: MAX_BUNDLE_FRAMES }, () => 40),
];

test('a bundle is a msgpack array of bin that an independent reader decodes to the same frames; bundleFrames gives them back as views', (t) => {
  for (const sizes of SHAPES) {
    const frames = sizes.map((n, i) => bytes(n, i));
    const data = encodeBundle(frames);
    const independent = msgpackDecode(data) as Uint8Array[];
    t.is(independent.length, frames.length);
    t.true(independent.every((f, i) => Buffer.from(f).equals(frames[i] as Uint8Array)), `sizes ${sizes.slice(0, 4).join(',')}`);
    const back = bundleFrames(data);
    t.deepEqual(back.map((f) => Buffer.from(f).toString('hex')), frames.map((f) => Buffer.from(f).toString('hex')));
    t.true(back.every((f) => f.buffer === data.buffer), 'views, not copies');
    t.true(data.byteLength <= bundleBytesAtMost(frames.length, sizes.reduce((a, b) => a + b, 0)));
  }
});

test('what another msgpack writer makes of an array of bin reads the same', (t) => {
  const frames = [bytes(30, 1), bytes(300, 2), bytes(70_000, 3)];
  const data = msgpackEncode(frames);
  t.deepEqual(bundleFrames(data).map((f) => f.byteLength), [30, 300, 70_000]);
});

test('a hostile bundle of half a million empty elements is refused at its header, before any element is split off', (t) => {
  // what one host may publish on its own subject: 1 MiB of bin8 of length 0 (the server's default max_payload)
  const count = 512 * 1024 - 3;
  const data = Buffer.alloc(5 + count * 2);
  data[0] = 0xdd;
  data.writeUInt32BE(count, 1);
  for (let at = 5; at < data.length; at += 2) data[at] = 0xc4;
  const error = t.throws(() => bundleFrames(data));
  t.true(error instanceof FrameDecodeError);
  t.regex(error?.message ?? '', /more than 1024/);
});

test('malformed bundles are a FrameDecodeError, never another error and never a frame', (t) => {
  const good = encodeBundle([bytes(40, 1), bytes(300, 2)]);
  const cases: Record<string, Uint8Array> = {
    empty: new Uint8Array(0),
    map: msgpackEncode({ a: 1 }),
    'string element': msgpackEncode(['x']),
    'int element': msgpackEncode([1]),
    truncated: good.subarray(0, good.byteLength - 1),
    'bytes after': Buffer.concat([good, Buffer.from([0])]),
    'count beyond the bytes': Buffer.from([0xdd, 0xff, 0xff, 0xff, 0xff, 0xc4, 0x00]),
    'length beyond the end': Buffer.from([0x91, 0xc6, 0x7f, 0xff, 0xff, 0xff, 0x00]),
    'an element shorter than a frame': encodeBundle([bytes(40, 1), bytes(MIN_FRAME_BYTES - 1, 2)]),
    'an empty element': encodeBundle([bytes(40, 1), new Uint8Array(0)]),
    'more elements than a bundle holds': encodeBundle(Array.from({ length: MAX_BUNDLE_FRAMES + 1 }, () => bytes(24, 0))),
  };
  for (const [name, data] of Object.entries(cases)) {
    const error = t.throws(() => bundleFrames(data), undefined, name);
    t.true(error instanceof FrameDecodeError, name);
  }
  const random = prng(19);
  for (let round = 0; round < 5000; round++) {
    const noise = Uint8Array.from({ length: 1 + Math.floor(random() * 40) }, () => Math.floor(random() * 256));
    if (round % 2 === 0) noise[0] = 0x90 | ((noise[0] as number) & 0x0f);
    try {
      bundleFrames(noise);
    } catch (error) {
      if (!(error instanceof FrameDecodeError)) t.fail(`noise ${Buffer.from(noise).toString('hex')}: ${String(error)}`);
    }
  }
  t.pass();
});
