/**
 * Page decompression for both ways a recording is read (hyparquet and
 * chunk.ts): GZIP, the codec the recorder writes, by node's zlib (native:
 * several times faster than the JavaScript inflate); the other codecs by
 * hyparquet-compressors.
 */
import { gunzipSync } from 'node:zlib';
import type { Compressors } from 'hyparquet';
import { compressors } from 'hyparquet-compressors';

export const COMPRESSORS: Compressors = {
  ...compressors,
  GZIP: (input: Uint8Array) => gunzipSync(input),
};

/** A page's bytes uncompressed; throws when the codec is unknown or the length is not the one announced. */
export function decompress(codec: string, input: Uint8Array, length: number): Uint8Array {
  if (codec === 'UNCOMPRESSED') return input;
  const inflate = COMPRESSORS[codec as keyof Compressors];
  if (inflate === undefined) throw new Error(`unsupported compression codec ${codec}`);
  const out = inflate(input, length);
  if (out.length !== length) throw new Error(`a page inflated to ${out.length} bytes, not the ${length} its header gives`);
  return out;
}
