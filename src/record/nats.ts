/** The recorder's NATS chores: closing its connection, and naming the hosts a stream holds (to point at a typo). */
import type { NatsConnection } from '@nats-io/nats-core';
import { jetstreamManager } from '@nats-io/jetstream';
import { METRICS_PREFIX, subjectHostToken } from '../bus/subjects.js';

/** Drains the connection, or closes it when draining takes over 2 s (a server gone away). */
export async function closeBus(nc: NatsConnection): Promise<void> {
  const timeout = new Promise<'late'>((resolve) => setTimeout(() => resolve('late'), 2000).unref());
  const drained = nc.drain().then(() => 'drained' as const, () => 'failed' as const);
  if ((await Promise.race([drained, timeout])) !== 'drained') await nc.close().catch(() => undefined);
}

/** Up to 20 host tokens the stream holds frames of (sorted), or undefined when that cannot be read. */
export async function streamHosts(nc: NatsConnection, stream: string): Promise<string[] | undefined> {
  try {
    const info = await (await jetstreamManager(nc)).streams.info(stream, { subjects_filter: `${METRICS_PREFIX}.>` });
    return [...new Set(Object.keys(info.state.subjects ?? {}).map(subjectHostToken))].sort().slice(0, 20);
  } catch {
    return undefined;
  }
}
