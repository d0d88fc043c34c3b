/**
 * Paths of the files a sampler reads every tick, joined once: `join` and a
 * template string make a new string each time, which the open-files map
 * then hashes again; a path from here is the same string every tick, its
 * hash kept. At 1 Hz the agent runs in V8's interpreter (agent/v8-flags.ts),
 * where node:path's join and normalize were 2.6 % of a tick's time.
 *
 * Cgroups come and go: `mark()` then `sweep()` forgets the paths not
 * joined in between. Without it the paths of cgroups long gone stayed until
 * `maxEntries` (100 cgroups made and removed under new names every 10 s
 * took the 1 Hz agent's live heap from 11 to 21 MiB in 7 minutes).
 */
import { join } from 'node:path';

interface Entry {
  readonly path: string;
  /** the generation (mark) of its last join */
  used: number;
}

export class PathCache {
  readonly #dirs = new Map<string, Map<string, Entry>>();
  #entries = 0;
  #generation = 0;

  /** @param maxEntries paths kept before all are forgotten, between sweeps too */
  constructor(private readonly maxEntries = 16_384) {}

  /** join(dir, name), the same string for the same arguments while it is kept. */
  join(dir: string, name: string): string {
    let names = this.#dirs.get(dir);
    const kept = names?.get(name);
    if (kept !== undefined) {
      kept.used = this.#generation;
      return kept.path;
    }
    if (this.#entries >= this.maxEntries) {
      this.#dirs.clear();
      this.#entries = 0;
      names = undefined;
    }
    if (names === undefined) {
      names = new Map();
      this.#dirs.set(dir, names);
    }
    const path = join(dir, name);
    names.set(name, { path, used: this.#generation });
    this.#entries++;
    return path;
  }

  /** Starts a generation: the next sweep() keeps only what is joined from now on. */
  mark(): void {
    this.#generation++;
  }

  /** Forgets the paths not joined since the last mark(). */
  sweep(): void {
    for (const [dir, names] of this.#dirs) {
      for (const [name, e] of names) {
        if (e.used === this.#generation) continue;
        names.delete(name);
        this.#entries--;
      }
      if (names.size === 0) this.#dirs.delete(dir);
    }
  }

  /** paths kept */
  get size(): number {
    return this.#entries;
  }
}
