/**
 * Replays a past window of frames from the JetStream stream (the hindsight
 * buffer) at read speed: an ordered consumer starting at the window's start
 * time, stopped at its end or at the stream head, deleted when done.
 */
import type { NatsConnection } from '@nats-io/nats-core';
import { DeliverPolicy, jetstream, jetstreamManager } from '@nats-io/jetstream';
import type { Frame } from '../frame/types.js';
import { RezolusError } from '../errors.js';
import type { DescriptorCache } from './descriptors.js';
import { isStreamNotFound } from './api-errors.js';
import { retryOnTimeout } from './retry.js';
import { SeqGuard } from './order.js';
import { frameOnSubject, type SkipStats } from './subscribe.js';
import { hostFilterSubjects, hostSelector, hostToken, METRICS_PREFIX, subjectHostToken } from './subjects.js';

export interface ReplayWindow {
  readonly stream: string;
  /** `*`, names or globs */
  readonly hosts: string;
  /** unix ns, inclusive */
  readonly sinceNs: bigint;
  /** unix ns, inclusive; frames stored later end the replay */
  readonly untilNs: bigint;
}

const LOOKBACK_SLACK_NS = 5_000_000_000n;

/** Refuses a window that starts before what the stream keeps (its max_age). */
export async function checkLookback(nc: NatsConnection, stream: string, sinceNs: bigint, nowNs: bigint): Promise<void> {
  const info = await jetstreamManager(nc)
    .then((jsm) => jsm.streams.info(stream))
    .catch((error: unknown) => {
      if (isStreamNotFound(error)) {
        throw new RezolusError('NO_STREAM', `stream ${stream} not found: is an agent publishing to this NATS server?`, { cause: error });
      }
      // a timeout or a refusal is not an answer about the stream
      throw new RezolusError('NATS_UNAVAILABLE', `cannot read stream ${stream}: ${String(error)}`, { cause: error });
    });
  const maxAgeNs = BigInt(info.config.max_age);
  // a lookback equal to max_age (the default on both sides) is fine; its start moves on while the window is read
  if (maxAgeNs > 0n && nowNs - sinceNs > maxAgeNs + LOOKBACK_SLACK_NS) {
    const keepS = Number(maxAgeNs / 1_000_000_000n);
    throw new RezolusError(
      'LOOKBACK',
      `stream ${stream} keeps only the last ${keepS} s (max_age); asked for ${Math.round(Number(nowNs - sinceNs) / 1e9)} s. Raise [stream] max_age in the agent config (agent.toml) to look further back`,
    );
  }
}

/** A consumer's one filter subject for a host selection, and the host tokens to keep of what it delivers. */
export interface ConsumerFilter {
  readonly filter: string;
  /** undefined: every message the filter delivers is wanted */
  readonly pick: ((token: string) => boolean) | undefined;
}

export function consumerFilter(hosts: string): ConsumerFilter {
  const subjects = hostFilterSubjects(hosts);
  // nats-server 2.9 takes one filter subject: several hosts read the fleet and pick theirs
  const filter = subjects.length === 1 ? (subjects[0] as string) : `${METRICS_PREFIX}.*.>`;
  const names = new Set(hosts.split(',').map((h) => hostToken(h.trim())));
  const glob = hostSelector(hosts);
  return { filter, pick: glob ?? (subjects.length > 1 ? (token: string) => names.has(token) : undefined) };
}

/**
 * Feeds every frame of the window to `onFrame` (with the message bytes it
 * was decoded from), in stream order, waiting whenever it returns a promise
 * (a consumer that is behind); resolves with the number of messages read.
 */
export async function replayFrames(
  nc: NatsConnection,
  w: ReplayWindow,
  cache: DescriptorCache,
  onFrame: (f: Frame, data: Uint8Array) => Promise<void> | undefined,
  skipped: SkipStats,
): Promise<number> {
  const { filter, pick } = consumerFilter(w.hosts);
  const consumer = await retryOnTimeout(() =>
    jetstream(nc).consumers.get(w.stream, {
      deliver_policy: DeliverPolicy.StartTime,
      opt_start_time: new Date(Number(w.sinceNs / 1_000_000n)).toISOString(),
      filter_subjects: filter,
      inactive_threshold: 10_000,
    }),
  );
  let read = 0;
  const guard = new SeqGuard();
  try {
    if ((await consumer.info()).num_pending === 0) return 0;
    const it = await consumer.consume({ max_messages: 1000 });
    try {
      for await (const m of it) {
        if (m.info.timestampNanos > w.untilNs) break;
        read++;
        if (pick === undefined || pick(subjectHostToken(m.subject))) {
          const frame = await frameOnSubject(m.subject, m.data, cache, skipped, guard);
          const wait = frame === undefined ? undefined : onFrame(frame, m.data);
          if (wait !== undefined) await wait;
        }
        if (m.info.pending === 0) break;
      }
    } finally {
      await it.close();
    }
  } finally {
    await consumer.delete().catch(() => undefined);
  }
  return read;
}
