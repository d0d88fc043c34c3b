/**
 * The frame encoder as it was up to 2026-11-29: the frame built as an object
 * (integers beyond 32 bits as BigInt) and packed by msgpackr. Kept as the
 * oracle of src/frame/encode.ts, which must give the same bytes
 * (test/frame/encode.test.ts), and as the peer of test/bench/frame-encode.ts.
 */
import { Packr } from 'msgpackr';
import type { FrameHeader } from '../../src/frame/encode.js';
import { FRAME_VERSION } from '../../src/frame/types.js';
import type { Value } from '../../src/metrics/point.js';

const packr = new Packr({ useRecords: false, variableMapSize: true });
const U32 = 0x1_0000_0000;
const MAX_SAFE = BigInt(Number.MAX_SAFE_INTEGER);

function wireNumber(v: number): number | bigint {
  if (Number.isInteger(v) && (v >= U32 || v < -0x8000_0000) && v < 2 ** 64 && v >= -(2 ** 63)) return BigInt(v);
  return v;
}

function wireValue(v: Value): unknown {
  if (typeof v === 'number') return wireNumber(v);
  if (typeof v === 'bigint') return v <= MAX_SAFE && v >= -MAX_SAFE ? wireNumber(Number(v)) : v;
  return [v.index, v.count.map(wireNumber)];
}

export function packFrameObject(header: FrameHeader, values: readonly Value[]): Uint8Array {
  const frame: Record<string, unknown> = {
    v: FRAME_VERSION,
    h: header.host,
    s: header.sampler,
    i: header.instance,
    q: header.seq,
    b: header.beginNs,
    e: header.endNs,
    d: header.descriptor,
    x: values.map(wireValue),
  };
  if (header.last === true) frame.l = true;
  return packr.pack(frame);
}
