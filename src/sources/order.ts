/**
 * The order rule every consumer applies before it uses a frame: per (host,
 * sampler) and agent run (instance), sequence numbers only go up. A frame
 * whose seq is not above the last one used from the same run is a duplicate
 * (a redelivery) or an older frame arriving late (after a reconnect) and is
 * dropped as out of order. A new run (another instance id) starts its own
 * sequence at 1 and is not compared with the old one: what a consumer does
 * with a second run (take over, or count it as contested) is its own rule.
 * Pure, bounded memory.
 */

/** Runs remembered per (host, sampler): a restart, and a second agent claiming the host, fit. */
const RUNS_PER_SOURCE = 4;
/** (host, sampler) pairs remembered at most; the one remembered longest is forgotten first. */
const DEFAULT_MAX_SOURCES = 100_000;

interface Run {
  readonly instance: number;
  seq: number;
}

export class SeqGuard {
  readonly #sources = new Map<string, Run[]>();
  readonly #maxSources: number;

  constructor(maxSources = DEFAULT_MAX_SOURCES) {
    this.#maxSources = maxSources;
  }

  /** (host, sampler) pairs remembered. */
  get size(): number {
    return this.#sources.size;
  }

  /**
   * True, remembering the frame's seq, when it is newer than every frame of
   * its run seen so far; false when it is a duplicate or arrives out of order.
   */
  accept(f: { readonly host: string; readonly sampler: string; readonly instance: number; readonly seq: number }): boolean {
    const key = `${f.host}\u0000${f.sampler}`;
    let runs = this.#sources.get(key);
    if (runs === undefined) {
      if (this.#sources.size >= this.#maxSources) {
        // the source remembered longest goes (insertion order: cheaper than keeping a strict LRU
        // per frame; a live source evicted this way is only remembered afresh from its next frame)
        const oldest = this.#sources.keys().next().value;
        if (oldest !== undefined) this.#sources.delete(oldest);
      }
      runs = [];
      this.#sources.set(key, runs);
    }
    // the common case: the run heard from last
    const last = runs[runs.length - 1];
    if (last !== undefined && last.instance === f.instance) {
      if (f.seq <= last.seq) return false;
      last.seq = f.seq;
      return true;
    }
    const i = runs.findIndex((r) => r.instance === f.instance);
    const run = i === -1 ? undefined : runs[i];
    if (run !== undefined && f.seq <= run.seq) return false;
    if (run === undefined) {
      runs.push({ instance: f.instance, seq: f.seq });
      if (runs.length > RUNS_PER_SOURCE) runs.shift();
    } else {
      run.seq = f.seq;
      // the run heard from last is kept longest
      runs.splice(i, 1);
      runs.push(run);
    }
    return true;
  }
}
