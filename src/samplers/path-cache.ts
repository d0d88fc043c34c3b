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

/** directory, then name, to the joined path */
type Paths = Map<string, Map<string, string>>;

export class PathCache {
  #current: Paths = new Map();
  #currentSize = 0;
  /** after mark(): the paths kept before it and not joined since (moved back to #current when joined) */
  #before: Paths | undefined;
  #beforeSize = 0;

  /** @param maxEntries paths kept before all are forgotten, between sweeps too */
  constructor(private readonly maxEntries = 16_384) {}

  /** join(dir, name), the same string for the same arguments while it is kept. */
  join(dir: string, name: string): string {
    let names = this.#current.get(dir);
    const kept = names?.get(name);
    if (kept !== undefined) return kept;
    let path = this.#takeBefore(dir, name);
    if (path === undefined) {
      if (this.size >= this.maxEntries) {
        this.#current.clear();
        this.#currentSize = 0;
        this.#before = undefined;
        this.#beforeSize = 0;
        names = undefined;
      }
      path = join(dir, name);
    }
    if (names === undefined) {
      names = new Map();
      this.#current.set(dir, names);
    }
    names.set(name, path);
    this.#currentSize++;
    return path;
  }

  /** Starts a generation: the next sweep() keeps only what is joined from now on. */
  mark(): void {
    // what was kept before an earlier mark and not joined since is not joined since this one either
    this.#before = this.#current;
    this.#beforeSize = this.#currentSize;
    this.#current = new Map();
    this.#currentSize = 0;
  }

  /** Forgets the paths not joined since the last mark(). */
  sweep(): void {
    this.#before = undefined;
    this.#beforeSize = 0;
  }

  /** paths kept */
  get size(): number {
    return this.#currentSize + this.#beforeSize;
  }

  #takeBefore(dir: string, name: string): string | undefined {
    const names = this.#before?.get(dir);
    const path = names?.get(name);
    if (path === undefined || names === undefined) return undefined;
    names.delete(name);
    this.#beforeSize--;
    if (names.size === 0) this.#before?.delete(dir);
    return path;
  }
}
