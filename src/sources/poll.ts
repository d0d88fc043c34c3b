/**
 * A poll source: an agent's snapshot endpoint (`/metrics/binary`, see
 * src/agent/snapshot.ts) instead of the bus, the seeds' form
 * `rezolus record http://localhost:4241 out.parquet`. Each poll carries the
 * agent's recent frames and their descriptors; the frames not seen before
 * go through the same checks as the bus's (a FrameIntake whose descriptors
 * come from the snapshot).
 */
import { unpack } from 'msgpackr';
import type { Logger } from 'pino';
import { METRICS_PREFIX } from '../bus/subjects.js';
import { decodeFrame } from '../frame/codec.js';
import { parseDescriptor } from '../frame/descriptor.js';
import type { Descriptor } from '../frame/types.js';
import { emptySkipStats, type DescriptorLookup, type SkipStats } from './checks.js';
import { FrameIntake } from './intake.js';
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

/** fetch's "fetch failed" with what failed underneath (ECONNREFUSED 127.0.0.1:4241, a DNS error, ...). */
export function fetchErrorText(error: unknown): string {
  if (!(error instanceof Error)) return String(error);
  const cause = error.cause as { code?: unknown; message?: unknown } | undefined;
  const detail = typeof cause?.message === 'string' && cause.message !== '' ? cause.message : typeof cause?.code === 'string' ? cause.code : undefined;
  return detail === undefined || error.message.includes(detail) ? error.message : `${error.message}: ${detail}`;
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
  #wake: (() => void) | undefined;
  #failures = 0;
  #lastError: string | undefined;

  constructor(
    private readonly options: PollOptions,
    private readonly log: Logger,
  ) {
    this.target = snapshotUrl(options.url);
    this.done = this.#state.done;
  }

  /** Why the last poll failed, when it did. */
  lastError(): string | undefined {
    return this.#lastError;
  }

  start(onFrame: FrameHandler): Promise<void> {
    if (this.#state.beginStart()) this.#state.started(this.#run(new FrameIntake(this.#descriptors, this.skipped, onFrame, this.log)));
    return Promise.resolve();
  }

  stop(): void {
    this.#state.stop();
    this.#wake?.();
  }

  async #pollOnce(intake: FrameIntake): Promise<void> {
    const token = this.options.token ?? process.env.REZOLUS_HTTP_TOKEN;
    const headers = token !== undefined && token !== '' ? { authorization: `Bearer ${token}` } : undefined;
    const res = await fetch(this.target, { signal: AbortSignal.timeout(Math.max(2000, 2 * this.options.intervalMs)), headers });
    if (res.status === 401) throw new Error(`${this.target} answered 401: set REZOLUS_HTTP_TOKEN to the agent's [http] token`);
    if (!res.ok) throw new Error(`${this.target} answered ${res.status}`);
    const snap = unpack(await boundedBody(res, this.target)) as { frames?: Uint8Array[]; descriptors?: Record<string, string> };
    for (const [hash, json] of Object.entries(snap.descriptors ?? {})) this.#descriptors.add(hash, json);
    for (const bytes of snap.frames ?? []) {
      const raw = decodeFrame(bytes);
      const key = `${raw.host}/${raw.sampler}/${raw.instance}`;
      if ((this.#seen.get(key) ?? 0) >= raw.seq) continue;
      // a later snapshot may carry its descriptor: not seen yet
      if (this.#descriptors.peek(raw.descriptor) === undefined) continue;
      this.#seen.set(key, raw.seq);
      const wait = intake.take(`${METRICS_PREFIX}.${raw.host}.${raw.sampler}`, bytes);
      if (wait !== undefined) await wait;
    }
  }

  async #run(intake: FrameIntake): Promise<void> {
    while (!this.#state.stopped) {
      await this.#pollOnce(intake).then(
        () => {
          this.#failures = 0;
          this.#lastError = undefined;
        },
        (error: unknown) => {
          this.#lastError = fetchErrorText(error);
          if (this.#failures++ === 0) this.log.warn({ url: this.target, err: error }, 'polling the agent failed; retrying every interval');
        },
      );
      if (this.#state.stopped) break;
      // the next whole interval of the wall clock
      const wait = this.options.intervalMs - (Date.now() % this.options.intervalMs);
      await new Promise<void>((r) => {
        this.#wake = r;
        setTimeout(r, wait);
      });
    }
  }
}
