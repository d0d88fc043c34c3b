/**
 * A poll source: an agent's snapshot endpoint (`/metrics/binary`, see
 * src/agent/snapshot.ts) instead of the bus, the seeds' form
 * `rezolus record http://localhost:4241 out.parquet`. Each poll carries the
 * agent's newest frame of every sampler, the frames published since the
 * previous poll's snapshot (`?since`, so a late poll loses none), and their
 * descriptors; the frames not seen before (by run and seq: a frame served
 * twice is taken once) go through the same checks as the bus's (a
 * FrameIntake whose descriptors come from the snapshot). When it polls:
 * poll-schedule.ts.
 *
 * A recording's window (`window`, poll-window.ts): the rows stamped in
 * (start, start + D], the start being the agent's first answer; only frames
 * whose row falls in it are handed over. With a duration the source ends by
 * itself once the window is complete (every sampler has a frame past its
 * end, or a bound after it), however late its timers fire; stop() ends the
 * window at the last row time before it, and one more poll takes what ended
 * before that.
 */
import { unpack } from 'msgpackr';
import type { Logger } from 'pino';
import { METRICS_PREFIX } from '../bus/subjects.js';
import { envValue } from '../config/env-value.js';
import { fetchFailure } from '../errors.js';
import { decodeFrame } from '../frame/codec.js';
import { parseDescriptor } from '../frame/descriptor.js';
import type { Descriptor } from '../frame/types.js';
import { emptySkipStats, type DescriptorLookup, type SkipStats } from './checks.js';
import { FrameIntake } from './intake.js';
import { PollSchedule, type PolledFrame } from './poll-schedule.js';
import { PollWindow } from './poll-window.js';
import { RunState } from './run-state.js';
import type { FrameHandler, FrameSource } from './source.js';

/** The snapshot URL of an agent address: `http://h:4241` and `http://h:4241/` poll `/metrics/binary`. */
export function snapshotUrl(url: string): string {
  const u = new URL(url);
  if (u.pathname === '/' || u.pathname === '') u.pathname = '/metrics/binary';
  return u.toString();
}

/** The descriptors the snapshots carried (they hold every descriptor their frames use). */
class SnapshotDescriptors implements DescriptorLookup {
  readonly #known = new Map<string, Descriptor>();

  add(hash: string, json: string): void {
    if (!this.#known.has(hash)) this.#known.set(hash, parseDescriptor(json));
  }

  peek(hash: string): Descriptor | undefined {
    return this.#known.get(hash);
  }

  resolve(hash: string): Promise<Descriptor | undefined> {
    return Promise.resolve(this.#known.get(hash));
  }
}

/**
 * A snapshot is one frame per sampler with its descriptors (tens of KB; a
 * host with thousands of cgroups a few MB): a body beyond this is not an
 * agent's, and is not read further.
 */
export const MAX_SNAPSHOT_BYTES = 64 * 1024 * 1024;

/** The body, read up to MAX_SNAPSHOT_BYTES; throws beyond it (the rest is not read). */
async function boundedBody(res: Response, target: string): Promise<Uint8Array> {
  const declared = Number(res.headers.get('content-length') ?? Number.NaN);
  if (declared > MAX_SNAPSHOT_BYTES) throw new Error(`${target} sent ${declared} bytes, more than a snapshot's ${MAX_SNAPSHOT_BYTES}: not an agent?`);
  if (res.body === null) return new Uint8Array(0);
  const chunks: Uint8Array[] = [];
  let size = 0;
  const reader = res.body.getReader();
  for (;;) {
    const { done, value } = await reader.read();
    if (done) break;
    size += value.byteLength;
    if (size > MAX_SNAPSHOT_BYTES) {
      await reader.cancel();
      throw new Error(`${target} sent more than a snapshot's ${MAX_SNAPSHOT_BYTES} bytes: not an agent?`);
    }
    chunks.push(value);
  }
  const body = new Uint8Array(size);
  let at = 0;
  for (const c of chunks) {
    body.set(c, at);
    at += c.byteLength;
  }
  return body;
}

export interface PollOptions {
  /** the agent's address (`http://host:4241`) or its snapshot URL */
  readonly url: string;
  readonly intervalMs: number;
  /** the agent's [http] token, when it serves off loopback; default env REZOLUS_HTTP_TOKEN */
  readonly token?: string | undefined;
  /**
   * A recording's window (poll-window.ts): only the frames of the rows
   * stamped after the first answer and up to durationMs later, or stop();
   * with durationMs the source ends by itself. Without it (the viewer) every
   * new frame, as it comes.
   */
  readonly window?: { readonly durationMs?: number | undefined } | undefined;
}

const MS = 1_000_000n;

function wallNs(): bigint {
  return BigInt(Date.now()) * MS;
}

export class PollSource implements FrameSource {
  readonly kind = 'poll';
  readonly skipped: SkipStats = emptySkipStats();
  readonly done: Promise<void>;
  readonly target: string;
  readonly #descriptors = new SnapshotDescriptors();
  /** the last seq used per agent run and sampler: a poll repeats what the previous one carried */
  readonly #seen = new Map<string, number>();
  readonly #state = new RunState();
  readonly #schedule: PollSchedule;
  readonly #intervalNs: bigint;
  #wake: (() => void) | undefined;
  #failures = 0;
  #lastError: string | undefined;
  /** the `at` of the last snapshot (the agent's clock): the next poll asks for the frames since */
  #sinceNs: bigint | undefined;
  /** a recording's rows (start() makes it) */
  #window: PollWindow | undefined;
  /** the end of each sampler's newest frame, as the last answered poll carried it */
  #newestEnds: bigint[] = [];

  constructor(
    private readonly options: PollOptions,
    private readonly log: Logger,
  ) {
    this.target = snapshotUrl(options.url);
    this.done = this.#state.done;
    this.#intervalNs = BigInt(options.intervalMs) * MS;
    this.#schedule = new PollSchedule(this.#intervalNs);
  }

  /** Why the last poll failed, when it did. */
  lastError(): string | undefined {
    return this.#lastError;
  }

  start(onFrame: FrameHandler): Promise<void> {
    if (this.#state.beginStart()) {
      const window = this.options.window;
      if (window !== undefined) {
        const duration = window.durationMs === undefined ? undefined : BigInt(window.durationMs) * MS;
        this.#window = new PollWindow(this.#intervalNs, duration, wallNs());
      }
      this.#state.started(this.#run(new FrameIntake(this.#descriptors, this.skipped, onFrame, this.log)));
    }
    return Promise.resolve();
  }

  stop(): void {
    if (!this.#state.stopped) this.#window?.stop(wallNs());
    this.#state.stop();
    this.#wake?.();
  }

  /** One poll, within timeoutMs (the body too). */
  async #pollOnce(intake: FrameIntake, timeoutMs: number): Promise<PolledFrame[]> {
    const token = this.options.token ?? envValue(process.env.REZOLUS_HTTP_TOKEN ?? '');
    const headers = token !== '' ? { authorization: `Bearer ${token}` } : undefined;
    // the frames published since the last snapshot too: a late poll loses none (src/agent/snapshot.ts)
    const url = this.#sinceNs === undefined ? this.target : `${this.target}${this.target.includes('?') ? '&' : '?'}since=${this.#sinceNs}`;
    // a timer of our own: AbortSignal.timeout() can miss its time after a GC on Node 20 (see alert/alertmanager.ts)
    const ac = new AbortController();
    const timer = setTimeout(() => ac.abort(new DOMException(`no answer within ${timeoutMs} ms`, 'TimeoutError')), timeoutMs);
    try {
      return await this.#read(intake, await fetch(url, { signal: ac.signal, headers }));
    } finally {
      clearTimeout(timer);
    }
  }

  /** The snapshot of one poll: hands over its new frames within the window; the newest frame of every sampler it carried. */
  async #read(intake: FrameIntake, res: Response): Promise<PolledFrame[]> {
    if (res.status === 401) throw new Error(`${this.target} answered 401: set REZOLUS_HTTP_TOKEN to the agent's [http] token`);
    if (!res.ok) throw new Error(`${this.target} answered ${res.status}`);
    const snap = unpack(await boundedBody(res, this.target)) as { at?: unknown; frames?: Uint8Array[]; descriptors?: Record<string, string> };
    for (const [hash, json] of Object.entries(snap.descriptors ?? {})) this.#descriptors.add(hash, json);
    // the first answer starts a recording's window (an agent from before `at`: our clock)
    const window = this.#window;
    window?.answered(typeof snap.at === 'bigint' ? snap.at : wallNs(), wallNs());
    const carried: PolledFrame[] = [];
    for (const bytes of snap.frames ?? []) {
      const raw = decodeFrame(bytes);
      const key = `${raw.host}/${raw.sampler}/${raw.instance}`;
      carried.push({ key, seq: raw.seq, beginNs: raw.beginNs, endNs: raw.endNs });
      if ((this.#seen.get(key) ?? 0) >= raw.seq) continue;
      const place = window?.place(raw.endNs);
      // ended after the recording's last row: not this recording's
      if (place === 'after') continue;
      // a later snapshot may carry its descriptor: not seen yet
      if (this.#descriptors.peek(raw.descriptor) === undefined) continue;
      this.#seen.set(key, raw.seq);
      // the values of a row before the recording's first
      if (place === 'before') continue;
      const wait = intake.take(`${METRICS_PREFIX}.${raw.host}.${raw.sampler}`, bytes);
      if (wait !== undefined) await wait;
    }
    // the next poll asks for what came after this snapshot (an agent from before `at` serves the newest frames only)
    this.#sinceNs = typeof snap.at === 'bigint' ? snap.at : undefined;
    this.#newestEnds = newestEnds(carried);
    return carried;
  }

  /** Polls; the wait until the next poll (ns). */
  async #poll(intake: FrameIntake, timeoutMs: number): Promise<bigint> {
    try {
      const carried = await this.#pollOnce(intake, timeoutMs);
      if (this.#failures > 0) this.log.info({ url: this.target, failures: this.#failures }, `the agent answers again after ${this.#failures} failed polls`);
      this.#failures = 0;
      this.#lastError = undefined;
      return this.#schedule.polled(carried, wallNs());
    } catch (error) {
      const why = fetchFailure(error, timeoutMs);
      // once, and again when the cause changes (refused, then no answer ...): not every interval
      if (why !== this.#lastError) this.log.warn({ url: this.target, err: error, failures: this.#failures + 1 }, `polling ${this.target} failed: ${why}; retrying every interval`);
      this.#lastError = why;
      this.#failures++;
      return this.#schedule.failed(wallNs());
    }
  }

  async #run(intake: FrameIntake): Promise<void> {
    const timeoutMs = Math.max(2000, 2 * this.options.intervalMs);
    const window = this.#window;
    while (!this.#state.stopped) {
      let waitNs = await this.#poll(intake, timeoutMs);
      if (this.#state.stopped) break;
      // a recording with a duration ends by itself, once complete (poll-window.ts)
      const now = wallNs();
      if (window?.complete(this.#newestEnds, now) === true) return;
      const deadline = window?.deadlineNs();
      if (deadline !== undefined && deadline - now < waitNs) waitNs = deadline - now;
      await new Promise<void>((r) => {
        this.#wake = r;
        setTimeout(r, Number(waitNs / MS));
      });
    }
    // stopped: the frames that ended before the window's new end and no poll took yet (not after a failed poll: the agent is away)
    if (window !== undefined && this.#failures === 0) await this.#poll(intake, Math.min(timeoutMs, 1000));
  }
}

/** The end of each sampler's newest frame among those a poll carried. */
function newestEnds(carried: readonly PolledFrame[]): bigint[] {
  const newest = new Map<string, bigint>();
  for (const f of carried) {
    const e = newest.get(f.key);
    if (e === undefined || f.endNs > e) newest.set(f.key, f.endNs);
  }
  return [...newest.values()];
}
