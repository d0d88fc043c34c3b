/**
 * The slabs the frame encoder writes frames into (encode.ts), kept for reuse
 * once every frame written into one was given back.
 *
 * A frame is a view of a 64 KiB slab. At 10 Hz the agent filled one every
 * ~0.7 s, and a slab lives until its last frame is bundled (up to
 * bundle_interval later): long enough for V8 to promote it, and promoted its
 * memory waited for the next full GC, some 40–80 s later (test/bench/
 * README.md, "the 10 Hz RSS between full GCs"). The bundling sink
 * gives each frame back once it is copied into its bundle (the agent's only
 * holder of a frame: the HTTP snapshot keeps copies of its own), and a slab
 * that was full and has every frame back is written again.
 *
 * Safe by construction: a slab is reused only when each of its frames was
 * given back, once (a second give of the same view is ignored, as is a
 * view of bytes from elsewhere); a frame never given back (held by a test,
 * published alone and dropped) keeps its slab out of reuse, and the garbage
 * collector takes it as before.
 */

export const SLAB_BYTES = 64 * 1024;
/** Full slabs kept for reuse, at most: a few ticks' frames at 10 Hz. */
const KEEP = 4;

interface Slab {
  readonly bytes: Buffer;
  /** frames written into it and not given back */
  out: number;
  /** full: the encoder writes into another */
  full: boolean;
  /**
   * one bit per 8 bytes of the slab, set when the frame starting there was
   * given back: a frame takes more than 8 bytes, so no two start in one
   * grain. A bitmap, not a set of the views: a set's table grew with every
   * frame and was promoted at 10 Hz (test/bench/README.md, "what outlives
   * the young generation").
   */
  readonly given: Uint8Array;
}

const GRAIN_SHIFT = 3;
const slabs = new WeakMap<ArrayBufferLike, Slab>();
const free: Slab[] = [];

/** A slab of at least `bytes`: a kept one when the size is the usual, else a new one. */
export function takeSlab(bytes = SLAB_BYTES): Buffer {
  if (bytes <= SLAB_BYTES) {
    const kept = free.pop();
    if (kept !== undefined) {
      kept.out = 0;
      kept.full = false;
      kept.given.fill(0);
      return kept.bytes;
    }
  }
  const size = Math.max(bytes, SLAB_BYTES);
  const made: Slab = { bytes: Buffer.allocUnsafeSlow(size), out: 0, full: false, given: new Uint8Array(Math.ceil((size >> GRAIN_SHIFT) / 8) + 1) };
  slabs.set(made.bytes.buffer, made);
  return made.bytes;
}

/** The encoder wrote a frame into `slab`. */
export function frameWritten(slab: Buffer): void {
  const s = slabs.get(slab.buffer);
  if (s !== undefined) s.out++;
}

/** The encoder writes into another slab from now: this one is reused once its frames are back. */
export function slabFull(slab: Buffer): void {
  const s = slabs.get(slab.buffer);
  if (s === undefined) return;
  s.full = true;
  keepIfDone(s);
}

/**
 * A frame nobody reads any more (copied into a bundle): its slab may be
 * written again once every frame of it is back. Only the one holder of a
 * frame may give it back.
 */
export function giveFrameBack(frame: Uint8Array): void {
  const s = slabs.get(frame.buffer);
  if (s === undefined) return;
  const grain = (frame.byteOffset - s.bytes.byteOffset) >> GRAIN_SHIFT;
  const bit = 1 << (grain & 7);
  const at = grain >> 3;
  if (at >= s.given.length || ((s.given[at] as number) & bit) !== 0) return;
  s.given[at] = (s.given[at] as number) | bit;
  s.out--;
  keepIfDone(s);
}

function keepIfDone(s: Slab): void {
  if (s.full && s.out === 0 && s.bytes.length === SLAB_BYTES && free.length < KEEP && !free.includes(s)) free.push(s);
}

/** Slabs kept for reuse (tests). */
export function keptSlabs(): number {
  return free.length;
}
