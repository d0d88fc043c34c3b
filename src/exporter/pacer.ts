/**
 * How often /metrics renders anew. A render runs on the thread that also
 * reads the frames from NATS; while it runs, frames wait in the socket and
 * then in the server, which cuts a live subscriber off once 64 MiB wait for
 * it ("Slow Consumer Detected") and the frames in between are gone. A fleet
 * exporter scraped every second spends most of its time rendering (1000
 * hosts: a 42 MB body, 0.2 s on a quiet core, seconds on a busy one), so
 * after a render of T ms, a scrape within `reuseFactor` × T of its end gets
 * the same body again: renders then take at most 1 / (1 + reuseFactor) of
 * the time and the rest is left to the frames. A render that cost less
 * than `floorMs` of CPU is always made anew: the figures of a small fleet
 * are never repeated, however busy the machine (T itself is wall time, the
 * time the frames waited).
 */
export interface RenderPacerOptions {
  /** a render that cost less CPU than this is never reused, ms (default 100) */
  readonly floorMs?: number;
  /** a render of T ms is reused for scrapes up to this many T after it ended (default 2) */
  readonly reuseFactor?: number;
  /** the monotonic clock renders are timed by, ms (default performance.now; tests set their own) */
  readonly clock?: () => number;
}

export class RenderPacer<T> {
  readonly #floorMs: number;
  readonly #reuseFactor: number;
  /** the clock renders are timed by, ms */
  readonly now: () => number;
  #last: { readonly value: T; readonly endMs: number; readonly tookMs: number } | undefined;
  #reused = 0;

  constructor(options: RenderPacerOptions = {}) {
    this.#floorMs = options.floorMs ?? 100;
    this.#reuseFactor = options.reuseFactor ?? 2;
    this.now = options.clock ?? (() => performance.now());
  }

  /** Scrapes answered with an earlier render's body. */
  get reused(): number {
    return this.#reused;
  }

  /** The last render's result when a scrape at `nowMs` should get it again, else undefined (render anew). */
  reuse(nowMs: number): T | undefined {
    const last = this.#last;
    if (last === undefined) return undefined;
    // a clock stepped back, or a render long ago: anew
    if (nowMs < last.endMs || nowMs - last.endMs >= last.tookMs * this.#reuseFactor) return undefined;
    this.#reused++;
    return last.value;
  }

  /**
   * Notes a render that started at `startMs` and ended at `endMs` (a monotonic
   * clock), using `cpuMs` of its thread's CPU. Only a render that may be
   * reused is kept (the one kept before is let go either way): returns
   * whether it was.
   */
  rendered(value: T, startMs: number, endMs: number, cpuMs: number): boolean {
    this.#last = cpuMs < this.#floorMs || this.#reuseFactor <= 0 ? undefined : { value, endMs, tookMs: Math.max(0, endMs - startMs) };
    return this.#last !== undefined;
  }
}
