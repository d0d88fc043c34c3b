import type { NatsConnection } from '@nats-io/nats-core';
import { Kvm, type KV } from '@nats-io/kv';
import { DESCRIPTOR_BUCKET, STATUS_BUCKET } from './subjects.js';

export interface BucketOptions {
  readonly ttlMs: number;
  readonly replicas: number;
}

/** Opens (creating when missing) the content-addressed descriptor bucket. */
export async function descriptorBucket(nc: NatsConnection, o: BucketOptions): Promise<KV> {
  return new Kvm(nc).create(DESCRIPTOR_BUCKET, { ttl: o.ttlMs, history: 1, replicas: o.replicas });
}

/** Opens (creating when missing) the agent status bucket, one key per host. */
export async function statusBucket(nc: NatsConnection, o: BucketOptions): Promise<KV> {
  return new Kvm(nc).create(STATUS_BUCKET, { ttl: o.ttlMs, history: 1, replicas: o.replicas });
}

/** Opens the descriptor bucket for reading; consumers never create it. */
export async function openDescriptorBucket(nc: NatsConnection): Promise<KV> {
  return new Kvm(nc).open(DESCRIPTOR_BUCKET);
}
