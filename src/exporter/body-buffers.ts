/**
 * The memory /metrics bodies are written into, used again once nothing
 * reads it. A body of 1000 hosts is 30-45 MB: a new buffer per render cost
 * ~35 ms of page faults and zeroing on a quiet 2-vCPU VM (5.7 ms to copy
 * into one used before) and ~100 ms beside a busy fleet, and each one fed
 * V8's external-memory pressure until a GC freed it.
 *
 * A body has readers: the render pacer while it may serve the body again,
 * and every reply still sending it. When the last one is done its memory
 * becomes the spare, and the next render that fits writes there. A reader
 * that never reports its end only means that memory is not used again (the
 * counts are in a WeakMap, nothing is kept alive).
 */
export class BodyBuffers {
  #spare: ArrayBuffer | undefined;
  readonly #readers = new WeakMap<ArrayBufferLike, number>();
  #reused = 0;
  #held = 0;

  /** Bodies some reader holds now. */
  get held(): number {
    return this.#held;
  }

  /** Renders that wrote into memory of an earlier body. */
  get reused(): number {
    return this.#reused;
  }

  /**
   * A buffer of exactly `size` bytes that nothing reads: in the spare when it
   * holds `size` and is not more than twice as large, else in new memory
   * with an eighth more room (a fleet grows by a few hosts at a time).
   */
  take(size: number): Buffer {
    const spare = this.#spare;
    this.#spare = undefined;
    if (spare !== undefined && spare.byteLength >= size && spare.byteLength <= 2 * size) {
      this.#reused++;
      return Buffer.from(spare, 0, size);
    }
    const memory = new ArrayBuffer(Math.max(size + Math.floor(size / 8), 1));
    return Buffer.from(memory, 0, size);
  }

  /** One more reader of `body`, until a matching done(). */
  hold(body: Buffer): void {
    // memory read again is not spare, whatever the count said before
    if (this.#spare === body.buffer) this.#spare = undefined;
    const readers = this.#readers.get(body.buffer) ?? 0;
    if (readers === 0) this.#held++;
    this.#readers.set(body.buffer, readers + 1);
  }

  /** A reader of `body` is done with it; after the last, its memory may be written again. */
  done(body: Buffer): void {
    const left = (this.#readers.get(body.buffer) ?? 0) - 1;
    if (left > 0) {
      this.#readers.set(body.buffer, left);
      return;
    }
    if (this.#readers.delete(body.buffer)) this.#held--;
    const memory = body.buffer;
    if (!(memory instanceof ArrayBuffer)) return;
    // the larger of two stays: a fleet's bodies only vary by a few percent
    if (this.#spare === undefined || this.#spare.byteLength < memory.byteLength) this.#spare = memory;
  }
}
