/**
 * The bytes of the agent's bundles, lent and given back once acked.
 *
 * A bundle lives from its tick until JetStream acks it (~500 ms at 10 Hz):
 * long enough for V8 to promote its ArrayBuffer, whose memory then waits
 * for the next full GC (every 40 s or so in the agent). At 10 Hz that was
 * ~90 kB a second of dead bundles, a rise of several MiB of RSS between full
 * GCs (test/bench/README.md, "the 10 Hz RSS between full GCs"). Lent from a
 * few kept buffers, the same memory carries every bundle.
 *
 * Safe by construction: only a buffer lent here and not yet given back is
 * taken back (a second give, or one of bytes from elsewhere, is ignored),
 * and one never given back (dropped from a full publish buffer, held by a
 * test) is left to the garbage collector as any other.
 */

/** Buffers kept for reuse, at most: a tick's bundle and one or two in flight. */
const KEEP = 4;
/** Kept bytes at most: a larger buffer goes to the garbage collector. */
const KEEP_BYTES = 2 * 1024 * 1024;
/**
 * Memory for `n` bytes that are written again with a little more or less later (a host's next bundles,
 * a sampler's next frames): an eighth more, in whole 256 bytes. No more: during an outage nothing is
 * given back and every bundle takes a new buffer, counted against [buffer] max_bytes by its bundle's
 * size (a 16 KiB grain held 2 kB bundles in 6.8x the memory counted).
 */
export function roomFor(n: number): number {
  return Math.ceil((Math.max(n, 1) + n / 8) / 256) * 256;
}

export class BundleBytes {
  /** buffers given back, ready to lend */
  readonly #free: ArrayBuffer[] = [];
  #freeBytes = 0;
  /** buffers lent and not yet given back */
  readonly #lent = new WeakSet<ArrayBuffer>();

  /** `n` bytes to write a bundle into: a kept buffer's start, or a new buffer's. */
  take(n: number): Buffer {
    let best = -1;
    for (let i = 0; i < this.#free.length; i++) {
      const cap = (this.#free[i] as ArrayBuffer).byteLength;
      if (cap >= n && (best < 0 || cap < (this.#free[best] as ArrayBuffer).byteLength)) best = i;
    }
    let buffer: ArrayBuffer;
    if (best >= 0) {
      buffer = this.#free[best] as ArrayBuffer;
      this.#free.splice(best, 1);
      this.#freeBytes -= buffer.byteLength;
    } else {
      buffer = Buffer.allocUnsafeSlow(roomFor(n)).buffer as ArrayBuffer;
    }
    this.#lent.add(buffer);
    return Buffer.from(buffer, 0, n);
  }

  /** The bytes of a bundle nobody reads any more (acked): lent here, they are kept for the next. */
  give(bytes: Uint8Array): void {
    const buffer = bytes.buffer;
    if (!(buffer instanceof ArrayBuffer) || !this.#lent.has(buffer)) return;
    this.#lent.delete(buffer);
    if (buffer.byteLength > KEEP_BYTES) return;
    this.#free.push(buffer);
    this.#freeBytes += buffer.byteLength;
    // over the bounds: the smallest goes first (a larger one serves every size it does)
    while (this.#free.length > KEEP || this.#freeBytes > KEEP_BYTES) {
      let smallest = 0;
      for (let i = 1; i < this.#free.length; i++) if ((this.#free[i] as ArrayBuffer).byteLength < (this.#free[smallest] as ArrayBuffer).byteLength) smallest = i;
      this.#freeBytes -= (this.#free[smallest] as ArrayBuffer).byteLength;
      this.#free.splice(smallest, 1);
    }
  }

  /** Buffers kept for reuse (tests). */
  get kept(): number {
    return this.#free.length;
  }
}

/** The agent's: its bundling sink takes, its publisher gives back on ack. */
export const bundleBytes = new BundleBytes();
