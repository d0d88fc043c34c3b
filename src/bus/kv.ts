import type { NatsConnection } from '@nats-io/nats-core';
import { nanos } from '@nats-io/nats-core';
import {
  DiscardPolicy,
  jetstreamManager,
  RetentionPolicy,
  StorageType,
  type JetStreamManager,
  type StreamConfig,
  type StreamInfo,
} from '@nats-io/jetstream';
import { Kvm, type KV } from '@nats-io/kv';
import type { Logger } from 'pino';
import { isStreamNotFound, permissionViolation } from './api-errors.js';
import { DESCRIPTOR_BUCKET, STATUS_BUCKET } from './subjects.js';

export interface BucketOptions {
  readonly ttlMs: number;
  readonly replicas: number;
}

/** The stream behind a KV bucket. */
export function bucketStream(bucket: string): string {
  return `KV_${bucket}`;
}

/**
 * The stream of a rezolus bucket: what `Kvm.create` makes (one value per key,
 * discard new, direct gets) but with `allow_rollup_hdrs: false`. The client
 * turns rollups on for every bucket it creates, and a rollup is a purge that
 * any writer of one key can send: `Nats-Rollup: all` on a host's own key
 * empties the whole bucket, every other host's descriptors and status with
 * it. Nothing of rezolus purges a key (the one client operation that sends a
 * rollup), so the buckets refuse them.
 */
export function bucketStreamConfig(bucket: string, o: BucketOptions): Partial<StreamConfig> & { name: string } {
  return {
    name: bucketStream(bucket),
    subjects: [`$KV.${bucket}.>`],
    retention: RetentionPolicy.Limits,
    storage: StorageType.File,
    discard: DiscardPolicy.New,
    max_msgs_per_subject: 1,
    max_msg_size: -1,
    max_age: nanos(o.ttlMs),
    num_replicas: o.replicas,
    allow_direct: true,
    allow_rollup_hdrs: false,
  };
}

/** Buckets whose rollups this connection could not turn off and has said so: one warning per bucket. */
const warned = new WeakMap<NatsConnection, Set<string>>();

async function existing(jsm: JetStreamManager, stream: string): Promise<StreamInfo | undefined> {
  try {
    return await jsm.streams.info(stream);
  } catch (error) {
    if (isStreamNotFound(error)) return undefined;
    throw error;
  }
}

/**
 * Creates the bucket's stream when it is missing (refusing rollups), turns
 * rollups off on one that allows them (a bucket made by an older rezolus or
 * by hand) when this user may update it, and otherwise logs once that the
 * bucket can be emptied by any host; then opens it. ttlMs 0: keys never expire.
 */
export async function ensureBucket(nc: NatsConnection, bucket: string, o: BucketOptions, log: Logger | undefined): Promise<KV> {
  const jsm = await jetstreamManager(nc);
  const stream = bucketStream(bucket);
  let info = await existing(jsm, stream);
  if (info === undefined) {
    try {
      info = await jsm.streams.add(bucketStreamConfig(bucket, o));
      log?.info({ bucket, ttl_ms: o.ttlMs }, 'created bucket');
    } catch (error) {
      // another process created it meanwhile; anything else (a user that may not create it) is the caller's to explain
      info = await existing(jsm, stream);
      if (info === undefined) throw error;
    }
  }
  if (info.config.allow_rollup_hdrs === true) {
    try {
      await jsm.streams.update(stream, { allow_rollup_hdrs: false });
      log?.warn({ bucket }, `changed bucket ${bucket}'s allow_rollup_hdrs to false: it allowed rollups, so any host could empty it with a Nats-Rollup header`);
    } catch (error) {
      if (permissionViolation(error) === undefined) throw error;
      const said = warned.get(nc) ?? new Set<string>();
      warned.set(nc, said);
      if (!said.has(bucket)) {
        said.add(bucket);
        log?.warn(
          { bucket, stream, err: error },
          `bucket ${bucket} allows rollups (allow_rollup_hdrs: true), so any host can empty it with a Nats-Rollup header, and this NATS user may not change that: ` +
            'run rezolus setup with the admin user to set allow_rollup_hdrs to false',
        );
      }
    }
  }
  // The stream exists now: Kvm.create opens it as it is.
  return new Kvm(nc).create(bucket, { ttl: o.ttlMs, history: 1, replicas: o.replicas });
}

/** Opens (creating when missing) the content-addressed descriptor bucket; rollups refused (see bucketStreamConfig). */
export async function descriptorBucket(nc: NatsConnection, o: BucketOptions, log?: Logger): Promise<KV> {
  return ensureBucket(nc, DESCRIPTOR_BUCKET, o, log);
}

/** How long a host's status record lasts in the status bucket: an agent gone that long leaves `rezolus status`. */
export const STATUS_TTL_MS = 3_600_000;

/** Opens (creating when missing) the agent status bucket, one key per host; rollups refused (see bucketStreamConfig). */
export async function statusBucket(nc: NatsConnection, o: BucketOptions, log?: Logger): Promise<KV> {
  return ensureBucket(nc, STATUS_BUCKET, o, log);
}

/** Opens the descriptor bucket for reading; consumers never create it. */
export async function openDescriptorBucket(nc: NatsConnection): Promise<KV> {
  return new Kvm(nc).open(DESCRIPTOR_BUCKET);
}
