/**
 * Files a cgroup lacks, not opened again at every refresh: pids.current at a
 * v1 root, the pressure files where PSI is off, a controller's files in a
 * v2 cgroup whose parent does not enable it. A failed open costs ~30 µs at
 * 1 Hz in V8's interpreter, most of it the error node throws. A path whose
 * open failed with ENOENT is tried again once `retryAfter` refreshes have
 * passed, or at once after `clear()` (the sampler calls it when a listing
 * changes): a controller enabled later for a cgroup that exists already
 * shows within `retryAfter` refreshes.
 */
import type { ReadFile } from './read.js';

/** What a path known to be missing throws: made once, so throwing it costs no stack trace. */
export const KNOWN_MISSING = new Error('missing at the last try');

export class MissingFiles {
  /** path -> the refresh count when its open failed */
  private readonly since = new Map<string, number>();
  private refreshes = 0;

  constructor(readonly retryAfter: number) {}

  /** Paths known to be missing now. */
  get size(): number {
    return this.since.size;
  }

  /** `read(path)`, or KNOWN_MISSING thrown without a try while the path's last failure is recent. */
  read(read: ReadFile, path: string): string {
    const at = this.since.get(path);
    if (at !== undefined && this.refreshes - at < this.retryAfter) throw KNOWN_MISSING;
    try {
      const text = read(path);
      if (at !== undefined) this.since.delete(path);
      return text;
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code === 'ENOENT') this.since.set(path, this.refreshes);
      throw error;
    }
  }

  /** After each refresh: counts it, and forgets the paths that are due again (they do not pile up). */
  refreshed(): void {
    this.refreshes++;
    if (this.refreshes % this.retryAfter !== 0) return;
    for (const [path, at] of this.since) if (this.refreshes - at >= this.retryAfter) this.since.delete(path);
  }

  /** Every path is tried again at its next read. */
  clear(): void {
    this.since.clear();
  }
}
