/**
 * Wall-clock nanoseconds with sub-millisecond resolution: Date.now() anchors
 * a monotonic hrtime reading, re-anchored every minute so NTP steps show up.
 */
const REANCHOR_NS = 60_000_000_000n;
let anchorWall = 0n;
let anchorHr = -REANCHOR_NS - 1n;

export function nowNs(): bigint {
  const hr = process.hrtime.bigint();
  if (hr - anchorHr > REANCHOR_NS) {
    // Date.now() truncates to the millisecond: the middle of it is the best estimate.
    anchorWall = BigInt(Date.now()) * 1_000_000n + 500_000n;
    anchorHr = hr;
  }
  return anchorWall + (hr - anchorHr);
}

/** Milliseconds until the next whole multiple of intervalMs on the wall clock. */
export function msToNextTick(intervalMs: number, nowMs = Date.now()): number {
  return intervalMs - (nowMs % intervalMs);
}
