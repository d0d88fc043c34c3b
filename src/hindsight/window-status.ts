/** What GET /status says of the stream's window: per host, messages held and the oldest and newest frame's store time. */
import { jetstreamManager } from '@nats-io/jetstream';
import type { NatsConnection } from '@nats-io/nats-core';
import { METRICS_PREFIX } from '../bus/subjects.js';

export async function windowStatus(nc: NatsConnection, stream: string): Promise<Record<string, unknown>> {
  const jsm = await jetstreamManager(nc);
  const info = await jsm.streams.info(stream, { subjects_filter: `${METRICS_PREFIX}.>` });
  const hosts: Record<string, { messages: number; oldest: string | undefined; newest: string | undefined }> = {};
  const lastBySubject = new Map<string, string>();
  for (const [subject, count] of Object.entries(info.state.subjects ?? {})) {
    const host = subject.split('.')[2] ?? '?';
    const h = (hosts[host] ??= { messages: 0, oldest: undefined, newest: undefined });
    h.messages += count;
    lastBySubject.set(subject, host);
  }
  const firstSeq = info.state.first_seq;
  for (const [subject, host] of lastBySubject) {
    const h = hosts[host];
    if (h === undefined) continue;
    const last = await jsm.streams.getMessage(stream, { last_by_subj: subject }).catch(() => null);
    const newest = last?.time.toISOString();
    if (newest !== undefined && (h.newest === undefined || newest > h.newest)) h.newest = newest;
    // STREAM.MSG.GET takes next_by_subj (the first message of a subject from a sequence); the client's type lacks it
    const first = await jsm.streams.getMessage(stream, { seq: firstSeq, next_by_subj: subject } as unknown as { seq: number }).catch(() => null);
    const oldest = first?.time.toISOString();
    if (oldest !== undefined && (h.oldest === undefined || oldest < h.oldest)) h.oldest = oldest;
  }
  return {
    stream,
    max_age_s: Number(BigInt(info.config.max_age) / 1_000_000_000n),
    oldest: info.state.first_ts,
    newest: info.state.last_ts,
    bytes: info.state.bytes,
    messages: info.state.messages,
    hosts,
  };
}
