/**
 * Where alerting lives on the bus: the events stream (created or tuned by
 * the evaluator, read by the viewer and the forwarder) and the state bucket.
 */
import { DiscardPolicy, jetstreamManager, RetentionPolicy, StorageType, type StreamConfig, type StreamInfo } from '@nats-io/jetstream';
import type { KV } from '@nats-io/kv';
import { Kvm } from '@nats-io/kv';
import { nanos, type NatsConnection } from '@nats-io/nats-core';
import type { Logger } from 'pino';
import { isStreamNotFound, permissionViolation } from '../bus/api-errors.js';
import { NatsPermissionError } from '../errors.js';
import { ensureBucket } from '../bus/kv.js';
import { ALERT_STATE_BUCKET, ALERTS_PREFIX, ALERTS_STREAM } from './contract.js';

export interface AlertStreamOptions {
  readonly maxAgeMs: number;
  readonly maxBytes: number;
  readonly replicas: number;
}

/** A repeated transition within this window is dropped by the server (two evaluators, a retried publish). */
export const ALERT_DUPLICATE_WINDOW_MS = 120_000;

export function alertStreamConfig(o: AlertStreamOptions): Partial<StreamConfig> & { name: string } {
  return {
    name: ALERTS_STREAM,
    subjects: [`${ALERTS_PREFIX}.>`],
    retention: RetentionPolicy.Limits,
    storage: StorageType.File,
    discard: DiscardPolicy.Old,
    max_age: nanos(o.maxAgeMs),
    max_bytes: o.maxBytes,
    duplicate_window: nanos(Math.min(ALERT_DUPLICATE_WINDOW_MS, o.maxAgeMs)),
    num_replicas: o.replicas,
    allow_direct: true,
    allow_rollup_hdrs: false,
    description: 'rezolus-nats alert events: one per state transition and per incident capture',
  };
}

const ADMIN_HINT = 'create it once as the admin user: rezolus setup --alerts with the same alerts.toml and the admin\'s credentials (see rezolus nats-auth)';

/**
 * Creates the events stream, or brings an existing one's limits to the
 * options. A user that may not create it (the rezolus-alert user of
 * nats-auth: the admin makes it) is told so in one line; one that may not
 * change its limits goes on with the stream as it is.
 */
export async function ensureAlertStream(nc: NatsConnection, o: AlertStreamOptions, log: Logger): Promise<StreamInfo> {
  const jsm = await jetstreamManager(nc);
  const wanted = alertStreamConfig(o);
  let info: StreamInfo | undefined;
  try {
    info = await jsm.streams.info(ALERTS_STREAM);
  } catch (error) {
    if (!isStreamNotFound(error)) {
      const refused = permissionViolation(error);
      if (refused !== undefined) throw new NatsPermissionError(`this NATS user may not read stream ${ALERTS_STREAM} (${refused.message})`, { cause: error });
      throw error;
    }
  }
  if (info !== undefined) {
    const c = info.config;
    if (c.max_age === wanted.max_age && c.max_bytes === wanted.max_bytes && c.num_replicas === wanted.num_replicas) return info;
    try {
      const updated = await jsm.streams.update(ALERTS_STREAM, { ...c, max_age: wanted.max_age as number, max_bytes: wanted.max_bytes as number, num_replicas: wanted.num_replicas as number });
      log.info({ stream: ALERTS_STREAM }, 'updated the alert stream limits');
      return updated;
    } catch (error) {
      if (permissionViolation(error) === undefined) throw error;
      log.warn({ stream: ALERTS_STREAM, max_age_ns: c.max_age, max_bytes: c.max_bytes, replicas: c.num_replicas }, `stream ${ALERTS_STREAM} has other limits than [general] events_max_age, events_max_bytes or replicas, and this NATS user may not change them: going on with the stream as it is`);
      return info;
    }
  }
  try {
    const created = await jsm.streams.add(wanted);
    log.info({ stream: ALERTS_STREAM, max_age_ms: o.maxAgeMs }, 'created the alert stream');
    return created;
  } catch (error) {
    const refused = permissionViolation(error);
    if (refused !== undefined) throw new NatsPermissionError(`stream ${ALERTS_STREAM} does not exist and this NATS user may not create it (${refused.message}): ${ADMIN_HINT}`, { cause: error });
    // another evaluator made it meanwhile
    try {
      return await jsm.streams.info(ALERTS_STREAM);
    } catch {
      throw error;
    }
  }
}

/** Opens the state bucket, creating it when missing (keys never expire: a firing alert may last). */
export async function alertStateBucket(nc: NatsConnection, replicas: number, log: Logger | undefined): Promise<KV> {
  try {
    return await ensureBucket(nc, ALERT_STATE_BUCKET, { ttlMs: 0, replicas }, log);
  } catch (error) {
    const refused = permissionViolation(error);
    if (refused !== undefined) throw new NatsPermissionError(`bucket ${ALERT_STATE_BUCKET} does not exist and this NATS user may not create it (${refused.message}): ${ADMIN_HINT}`, { cause: error });
    throw error;
  }
}

/** Opens the state bucket for reading (the exporter, the forwarder); throws when no evaluator made it yet. */
export async function openAlertStateBucket(nc: NatsConnection): Promise<KV> {
  return new Kvm(nc).open(ALERT_STATE_BUCKET);
}
