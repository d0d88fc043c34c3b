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
/** (host, sampler) pairs remembered at most; the least recently used is forgotten first. */
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
      runs = [];
      if (this.#sources.size >= this.#maxSources) {
        const oldest = this.#sources.keys().next().value;
        if (oldest !== undefined) this.#sources.delete(oldest);
      }
    } else {
      // most recently used last, so eviction takes the source quiet the longest
      this.#sources.delete(key);
    }
    this.#sources.set(key, runs);
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
