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
 * Safe by construction: only the newest frame the encoder made may be given
 * back, once, before it makes another (the bundling sink copies each frame
 * as it comes and gives it back at once). Any other give is ignored: a
 * second one, a frame from earlier (its slab may hold new frames by then),
 * a view of part of a frame, bytes from elsewhere. A frame never given back
 * (held by a test, published alone) keeps its slab out of reuse, and the
 * garbage collector takes it as before.
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
}

const slabs = new WeakMap<ArrayBufferLike, Slab>();
const free: Slab[] = [];
/**
 * The newest frame the encoder made, until given back: the one frame that
 * may be. One reference, not a set of every frame given back (a set's table
 * grew with every frame and was promoted at 10 Hz, test/bench/README.md,
 * "what outlives the young generation").
 */
let newest: Uint8Array | undefined;

/** A slab of at least `bytes`: a kept one when the size is the usual, else a new one. */
export function takeSlab(bytes = SLAB_BYTES): Buffer {
  if (bytes <= SLAB_BYTES) {
    const kept = free.pop();
    if (kept !== undefined) {
      kept.out = 0;
      kept.full = false;
      return kept.bytes;
    }
  }
  const made: Slab = { bytes: Buffer.allocUnsafeSlow(Math.max(bytes, SLAB_BYTES)), out: 0, full: false };
  slabs.set(made.bytes.buffer, made);
  return made.bytes;
}

/** The encoder wrote `frame` into `slab`. */
export function frameWritten(slab: Buffer, frame: Uint8Array): void {
  const s = slabs.get(slab.buffer);
  if (s !== undefined) s.out++;
  newest = frame;
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
 * written again once every frame of it is back. Only the one holder of the
 * newest frame may give it back, before the next is encoded.
 */
export function giveFrameBack(frame: Uint8Array): void {
  if (frame !== newest) return;
  newest = undefined;
  const s = slabs.get(frame.buffer);
  if (s === undefined) return;
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
