/**
 * Which track each row of a recording belongs to, and where in it: a fleet
 * recording interleaves its hosts' rows by time, and the viewer keeps one
 * track per host with its samples in time order. Built once from the
 * `timestamp` and `host` columns; every series column is then scattered by
 * it. Pure.
 */

/** Unix ns → unix ms, exact to the microsecond (a double cannot hold ns since 1970 exactly). */
export function nsToMs(ns: bigint): number {
  return Number(ns / 1_000n) / 1_000;
}

export interface RowMap {
  /** host names, sorted */
  readonly hosts: readonly string[];
  /** per host (same order): its samples' times, unix ms, ascending */
  readonly times: readonly number[][];
  /** per row of the file: the index of its host */
  readonly hostOf: Uint32Array;
  /** per row of the file: its position in its host's track */
  readonly posOf: Uint32Array;
}

export function rowMap(timestamps: ArrayLike<bigint>, hostNames: ArrayLike<string>): RowMap {
  const n = timestamps.length;
  const hosts = [...new Set(Array.from(hostNames))].sort();
  const index = new Map(hosts.map((h, i) => [h, i]));
  const hostOf = new Uint32Array(n);
  const rowsOf: number[][] = hosts.map(() => []);
  for (let r = 0; r < n; r++) {
    const h = index.get(hostNames[r] as string) as number;
    hostOf[r] = h;
    (rowsOf[h] as number[]).push(r);
  }
  const posOf = new Uint32Array(n);
  const times = rowsOf.map((rows) => {
    const t = rows.map((r) => nsToMs(timestamps[r] as bigint));
    let sorted = true;
    for (let i = 1; i < t.length && sorted; i++) sorted = (t[i] as number) >= (t[i - 1] as number);
    if (!sorted) {
      // rows are written in time order; a file that is not keeps each host's samples in order all the same
      const order = rows.map((_, i) => i).sort((a, b) => (t[a] as number) - (t[b] as number) || a - b);
      const reordered = order.map((i) => rows[i] as number);
      reordered.forEach((r, i) => (rows[i] = r));
      return order.map((i) => t[i] as number);
    }
    return t;
  });
  rowsOf.forEach((rows) => rows.forEach((r, pos) => (posOf[r] = pos)));
  return { hosts, times, hostOf, posOf };
}
