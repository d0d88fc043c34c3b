/**
 * Polls an agent's snapshot endpoint (`/metrics/binary`, see
 * src/agent/snapshot.ts) instead of the bus: the seeds' form
 * `rezolus record http://localhost:4241 out.parquet`. Each poll yields the
 * frames not seen before.
 */
import { unpack } from 'msgpackr';
import type { Logger } from 'pino';
import { decodeFrame, resolveFrame } from '../frame/codec.js';
import { parseDescriptor } from '../frame/descriptor.js';
import type { Descriptor, Frame } from '../frame/types.js';

/** The snapshot URL of an agent address: `http://h:4241` and `http://h:4241/` poll `/metrics/binary`. */
export function snapshotUrl(url: string): string {
  const u = new URL(url);
  if (u.pathname === '/' || u.pathname === '') u.pathname = '/metrics/binary';
  return u.toString();
}

export interface Poller {
  stop(): void;
  /** resolves after the last poll */
  readonly done: Promise<void>;
  /** why the last poll failed, when it did */
  lastError(): string | undefined;
}

export function pollSnapshots(url: string, intervalMs: number, onFrame: (f: Frame, data: Uint8Array) => void, log: Logger): Poller {
  const target = snapshotUrl(url);
  const descriptors = new Map<string, Descriptor>();
  const seen = new Map<string, number>();
  let stopped = false;
  let wake: (() => void) | undefined;
  let failures = 0;
  let lastError: string | undefined;
  const pollOnce = async (): Promise<void> => {
    // an agent serving off loopback wants its [http] token: REZOLUS_HTTP_TOKEN
    const token = process.env.REZOLUS_HTTP_TOKEN;
    const headers = token !== undefined && token !== '' ? { authorization: `Bearer ${token}` } : undefined;
    const res = await fetch(target, { signal: AbortSignal.timeout(Math.max(2000, 2 * intervalMs)), headers });
    if (res.status === 401) throw new Error(`${target} answered 401: set REZOLUS_HTTP_TOKEN to the agent's [http] token`);
    if (!res.ok) throw new Error(`${target} answered ${res.status}`);
    const snap = unpack(new Uint8Array(await res.arrayBuffer())) as { frames?: Uint8Array[]; descriptors?: Record<string, string> };
    for (const [hash, json] of Object.entries(snap.descriptors ?? {})) if (!descriptors.has(hash)) descriptors.set(hash, parseDescriptor(json));
    for (const bytes of snap.frames ?? []) {
      const raw = decodeFrame(bytes);
      const key = `${raw.host}/${raw.sampler}/${raw.instance}`;
      if ((seen.get(key) ?? 0) >= raw.seq) continue;
      const d = descriptors.get(raw.descriptor);
      if (d === undefined) continue;
      seen.set(key, raw.seq);
      onFrame(resolveFrame(raw, d), bytes);
    }
  };
  const done = (async () => {
    while (!stopped) {
      await pollOnce().then(
        () => {
          failures = 0;
          lastError = undefined;
        },
        (error: unknown) => {
          lastError = error instanceof Error ? error.message : String(error);
          if (failures++ === 0) log.warn({ url: target, error: String(error) }, 'polling the agent failed; retrying every interval');
        },
      );
      if (stopped) break;
      // the next whole interval of the wall clock
      const wait = intervalMs - (Date.now() % intervalMs);
      await new Promise<void>((r) => {
        wake = r;
        setTimeout(r, wait);
      });
    }
  })();
  return {
    done,
    lastError: () => lastError,
    stop() {
      stopped = true;
      wake?.();
    },
  };
}
