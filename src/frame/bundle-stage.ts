/**
 * A bundle being gathered (bundle.ts): each frame's bin element is written
 * into memory the stage keeps, as the frame comes, so that the frame can be
 * given back to the encoder at once (frame-slabs.ts) rather than held, as a
 * view, until its bundle goes. At 10 Hz a bundle gathers for up to 500 ms:
 * held views lived long enough for V8 to promote them, and waited in the old
 * space for a full GC (test/bench/README.md, "what outlives the young
 * generation"). The kept memory grows to the largest bundle gathered (at
 * most the server's max_payload) and is written again for every bundle.
 */
import { arrayHeaderSize, writeArrayHeader, writeBinElement } from './bundle.js';

/** A bin header takes at most this (bin32). */
const BIN_HEADER_MAX = 5;
const FIRST_BYTES = 16 * 1024;

export class BundleStage {
  #bytes: Buffer = Buffer.allocUnsafeSlow(FIRST_BYTES);
  #at = 0;
  #count = 0;
  #frameBytes = 0;

  /** frames gathered since the last bundle */
  get count(): number {
    return this.#count;
  }

  /** their bytes, without the bin headers */
  get frameBytes(): number {
    return this.#frameBytes;
  }

  /** Copies `frame` into the bundle being gathered: the caller may give it back at once. */
  add(frame: Uint8Array): void {
    const need = this.#at + BIN_HEADER_MAX + frame.byteLength;
    if (need > this.#bytes.byteLength) {
      const grown = Buffer.allocUnsafeSlow(Math.max(need, 2 * this.#bytes.byteLength));
      this.#bytes.copy(grown, 0, 0, this.#at);
      this.#bytes = grown;
    }
    this.#at = writeBinElement(this.#bytes, this.#at, frame);
    this.#count++;
    this.#frameBytes += frame.byteLength;
  }

  /** The bundle of the frames gathered, written into `alloc(size)`; the stage is empty after. */
  take(alloc: (size: number) => Buffer = Buffer.allocUnsafe): Uint8Array {
    const head = arrayHeaderSize(this.#count);
    const out = alloc(head + this.#at);
    writeArrayHeader(out, 0, this.#count);
    this.#bytes.copy(out, head, 0, this.#at);
    this.#at = 0;
    this.#count = 0;
    this.#frameBytes = 0;
    return out;
  }
}
