/**
 * What `rezolus status` reads from the bus, before any judgement: the
 * stream's info, the last message of each frame subject, the agents' status
 * records, the alert records and the stream's consumers. gather.ts fills it
 * from NATS; assess.ts turns it into the report. Plain data, so the
 * judgement and the formatting are tested on fixtures.
 */
import type { AgentStatusRecord } from './record.js';

export interface ClusterReplica {
  readonly name: string;
  readonly current: boolean;
  readonly offline: boolean;
  /** operations behind the leader */
  readonly lag: number;
  /** ms since the leader last heard from it */
  readonly activeMs: number | undefined;
}

export interface StreamSnapshot {
  readonly name: string;
  /** the stream's configured subjects */
  readonly subjects: readonly string[];
  readonly messages: number;
  readonly bytes: number;
  /** store time of the oldest and newest message (unix ms); undefined when the stream is empty */
  readonly firstMs: number | undefined;
  readonly lastMs: number | undefined;
  /** 0 = no limit */
  readonly maxAgeMs: number;
  /** -1 = no limit */
  readonly maxBytes: number;
  /** -1 = no limit */
  readonly maxMsgsPerSubject: number;
  readonly replicas: number;
  /** undefined on a server that is not part of a cluster (and reports none) */
  readonly cluster: { readonly name: string | undefined; readonly leader: string | undefined; readonly replicas: readonly ClusterReplica[] } | undefined;
}

/** One frame subject `rezolus.metrics.<host>.<sampler>` of the window. */
export interface SubjectSnapshot {
  readonly host: string;
  readonly sampler: string;
  /** messages the stream holds on it */
  readonly messages: number;
  /** store time of its newest message (unix ms); undefined when it was not read */
  readonly lastMs: number | undefined;
}

export interface ConsumerSnapshot {
  readonly name: string;
  readonly durable: boolean;
  /** its filter subject(s), joined by ", "; undefined = the whole stream */
  readonly filter: string | undefined;
  /** messages not delivered yet */
  readonly pending: number;
  /** delivered, not acked yet */
  readonly ackPending: number;
  readonly redelivered: number;
  /** pull requests waiting */
  readonly waiting: number;
  /** the last delivery (or, with none, the last ack) as unix ms */
  readonly lastActiveMs: number | undefined;
}

export interface AlertSnapshot {
  readonly host: string;
  readonly rule: string;
  readonly state: string;
}

/** A part that could not be read: what was tried and why, as one line. */
export type Unavailable = { readonly unavailable: string };

export interface BusSnapshot {
  /** the NATS URL read from */
  readonly url: string;
  /** when the reading ended (unix ms): the ages are taken from here */
  readonly atMs: number;
  readonly stream: StreamSnapshot;
  /** the frame subjects of the selected hosts */
  readonly subjects: readonly SubjectSnapshot[];
  /** the selected hosts' status records; empty when the bucket does not exist */
  readonly statuses: readonly AgentStatusRecord[] | Unavailable;
  /** alert records of the selected hosts; undefined when no evaluator made the bucket */
  readonly alerts: readonly AlertSnapshot[] | undefined | Unavailable;
  /** every consumer of the stream but this command's own */
  readonly consumers: readonly ConsumerSnapshot[] | Unavailable;
  /**
   * When a --hosts selection other than `*` found no host (no frames, no
   * status record): the hosts the stream holds frames of, so the report can
   * name them; undefined otherwise, or when they could not be read.
   */
  readonly streamHosts?: StreamHosts | undefined;
}

/** The hosts a stream holds frames of: how many, and the first of them by name. */
export interface StreamHosts {
  readonly count: number;
  /** sorted, at most STREAM_HOSTS_NAMED */
  readonly names: readonly string[];
}

/** How many host names a report gives when --hosts matched none. */
export const STREAM_HOSTS_NAMED = 20;

export function isUnavailable(v: unknown): v is Unavailable {
  return typeof v === 'object' && v !== null && 'unavailable' in v;
}
