/**
 * Wall-clock nanoseconds with sub-millisecond resolution: Date.now() anchors
 * a monotonic hrtime reading, re-anchored every minute so NTP steps show up.
 */
const REANCHOR_NS = 60_000_000_000n;
/** An anchor whose Date.now() took longer than this to read (the thread was preempted) is taken again. */
const TIGHT_NS = 200_000n;
const ANCHOR_TRIES = 5;
let anchorWall = 0n;
let anchorHr = -REANCHOR_NS - 1n;

/** One try at an anchor: Date.now() read between two hrtime readings. */
export interface AnchorRead {
  readonly h0: bigint;
  readonly wallMs: number;
  readonly h1: bigint;
}

/**
 * The anchor a set of tries gives: the tightest pair, Date.now() matched with
 * the middle of its hrtime bracket. A thread preempted between a single pair
 * of reads (tens of ms on a busy machine) would otherwise put every
 * timestamp of the next minute that far off.
 */
export function tightestAnchor(reads: readonly AnchorRead[]): { wallNs: bigint; hrNs: bigint } {
  let best: AnchorRead | undefined;
  for (const r of reads) if (best === undefined || r.h1 - r.h0 < best.h1 - best.h0) best = r;
  if (best === undefined) throw new Error('no anchor read');
  // Date.now() truncates to the millisecond: the middle of it is the best estimate.
  return { wallNs: BigInt(best.wallMs) * 1_000_000n + 500_000n, hrNs: best.h0 + (best.h1 - best.h0) / 2n };
}

function anchor(): void {
  const reads: AnchorRead[] = [];
  for (let i = 0; i < ANCHOR_TRIES; i++) {
    const h0 = process.hrtime.bigint();
    const wallMs = Date.now();
    const h1 = process.hrtime.bigint();
    reads.push({ h0, wallMs, h1 });
    if (h1 - h0 <= TIGHT_NS) break;
  }
  const a = tightestAnchor(reads);
  anchorWall = a.wallNs;
  anchorHr = a.hrNs;
}

export function nowNs(): bigint {
  const hr = process.hrtime.bigint();
  if (hr - anchorHr > REANCHOR_NS) anchor();
  return anchorWall + (hr - anchorHr);
}

/** Milliseconds until the next whole multiple of intervalMs on the wall clock. */
export function msToNextTick(intervalMs: number, nowMs = Date.now()): number {
  return intervalMs - (nowMs % intervalMs);
}

/**
 * Calls `fn` every `everyMs`, `lagMs` past each whole multiple of it on the
 * wall clock (unref'd timers); returns the stop. An agent's periodic chores
 * set so (`lagMs` past a whole second) run in the wake-up of its tick, set
 * 1 ms past the boundary, instead of waking the process at a time of their
 * own: ~0.2 ms of CPU each on a VM (test/bench/README.md, "wake-ups").
 */
export function everyOnTheClock(everyMs: number, lagMs: number, fn: () => void): () => void {
  if (!(everyMs >= 1 && Number.isInteger(everyMs))) throw new RangeError(`everyOnTheClock: a period of whole milliseconds, at least 1, got ${everyMs}`);
  if (!(lagMs >= 0 && lagMs < everyMs)) throw new RangeError(`everyOnTheClock: a lag from 0 to below the period, got ${lagMs}`);
  let timer: NodeJS.Timeout | undefined;
  let stopped = false;
  const arm = (): void => {
    if (stopped) return;
    timer = setTimeout(() => {
      // the next one first: a call that throws does not end the series
      arm();
      fn();
    }, msToNextTick(everyMs) + lagMs);
    timer.unref();
  };
  arm();
  return () => {
    stopped = true;
    clearTimeout(timer);
  };
}
