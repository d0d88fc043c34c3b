/**
 * What reading a past window of the stream needs from NATS: a check that the
 * stream still holds the window's start, and a consumer filter for a host
 * selection (the replay and durable sources in src/sources/ use both).
 */
import type { NatsConnection } from '@nats-io/nats-core';
import { jetstreamManager } from '@nats-io/jetstream';
import { LookbackError, NatsUnavailableError, StreamMissingError } from '../errors.js';
import { isStreamNotFound } from './api-errors.js';
import { hostFilterSubjects, hostSelector, hostToken, METRICS_PREFIX } from './subjects.js';

const LOOKBACK_SLACK_NS = 5_000_000_000n;

/** Refuses a window that starts before what the stream keeps (its max_age). */
export async function checkLookback(nc: NatsConnection, stream: string, sinceNs: bigint, nowNs: bigint): Promise<void> {
  const info = await jetstreamManager(nc)
    .then((jsm) => jsm.streams.info(stream))
    .catch((error: unknown) => {
      if (isStreamNotFound(error)) {
        throw new StreamMissingError(stream, { cause: error });
      }
      // a timeout or a refusal is not an answer about the stream
      throw new NatsUnavailableError(`cannot read stream ${stream}: ${String(error)}`, { cause: error });
    });
  const maxAgeNs = BigInt(info.config.max_age);
  // a lookback equal to max_age (the default on both sides) is fine; its start moves on while the window is read
  if (maxAgeNs > 0n && nowNs - sinceNs > maxAgeNs + LOOKBACK_SLACK_NS) {
    const keepS = Number(maxAgeNs / 1_000_000_000n);
    throw new LookbackError(stream, keepS, Math.round(Number(nowNs - sinceNs) / 1e9));
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
