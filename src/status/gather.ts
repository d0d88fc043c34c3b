/**
 * Reads a BusSnapshot for `rezolus status` with as few requests as the
 * fleet allows, whatever its size:
 * - the stream's info with a subjects filter: per-subject message counts;
 * - one last_per_subject scan of the frame subjects, headers only: each
 *   subject's newest store time (the last frame of each host and sampler);
 * - one last_per_subject scan of each KV bucket (the agents' status
 *   records, the alert records): a bucket is a stream with one subject per
 *   key, so this is what a KV watch does, ended when it has read them all;
 * - the consumer list.
 * The four after the stream's info run side by side. A part this NATS user
 * may not read is reported as unavailable; only a missing connection or a
 * missing stream fail the whole reading.
 */
import { jetstream, jetstreamManager, type ConsumerInfo, type JetStreamClient, type JetStreamManager, type StreamInfo } from '@nats-io/jetstream';
import type { NatsConnection } from '@nats-io/nats-core';
import type { Logger } from 'pino';
import { isStreamNotFound, permissionViolation } from '../bus/api-errors.js';
import { explainConnectError } from '../bus/auth.js';
import { connectBus } from '../bus/connect.js';
import { bucketStream } from '../bus/kv.js';
import { METRICS_PREFIX, STATUS_BUCKET, hostFilterSubjects, hostMatcher, subjectHostToken } from '../bus/subjects.js';
import { NO_NATS_SECURITY, type NatsSecurity } from '../config/nats.js';
import { RezolusError } from '../errors.js';
import { ALERT_STATE_BUCKET, parseRecord } from '../alert/contract.js';
import { parseAgentStatus, type AgentStatusRecord } from './record.js';
import { SCAN_PREFIX, scanLastPerSubject } from './scan.js';
import { STREAM_HOSTS_NAMED, type AlertSnapshot, type BusSnapshot, type ConsumerSnapshot, type StreamHosts, type StreamSnapshot, type SubjectSnapshot, type Unavailable } from './snapshot.js';

export interface GatherOptions {
  readonly url: string;
  readonly security?: NatsSecurity | undefined;
  readonly stream: string;
  /** host names and globs, `*` for every host */
  readonly hosts: string;
  readonly log: Logger;
  /**
   * `url` is the default, taken because no URL was given and no `rezolus up`
   * runs in this directory (oneShotNats said "default"): a missing stream or
   * server is then most likely that, and the messages say so
   */
  readonly fellBack?: boolean;
}

/** Why a default URL was asked, and what to do instead: the messages of a fallback that found nothing. */
const FELL_BACK = 'no rezolus up runs in this directory (./data/nats.url)';
const INSTEAD = 'start one with npm start, or pass --nats URL';

/** No stream of that name on the server: no agent has run against it (or its store was lost). */
export class NoRezolusStreamError extends RezolusError {
  override readonly name = 'NoRezolusStreamError';
  constructor(
    readonly stream: string,
    readonly url: string,
    options?: { cause?: unknown; fellBack?: boolean | undefined },
  ) {
    super(
      'NO_STREAM',
      options?.fellBack === true ? `${FELL_BACK} and ${url} has no rezolus stream ${stream}: ${INSTEAD}` : `no rezolus stream ${stream} on ${url}: is an agent running?`,
      options,
    );
  }
}

const NANOS_PER_MS = 1_000_000;

function isoMs(v: unknown): number | undefined {
  if (typeof v !== 'string' || v.startsWith('0001-')) return undefined;
  const ms = Date.parse(v);
  return Number.isFinite(ms) ? ms : undefined;
}

function streamSnapshot(info: StreamInfo): StreamSnapshot {
  const c = info.config;
  const empty = info.state.messages === 0;
  const cluster = info.cluster;
  return {
    name: c.name,
    subjects: c.subjects ?? [],
    messages: info.state.messages,
    bytes: info.state.bytes,
    firstMs: empty ? undefined : isoMs(info.state.first_ts),
    lastMs: empty ? undefined : isoMs(info.state.last_ts),
    maxAgeMs: Number(c.max_age) / NANOS_PER_MS,
    maxBytes: c.max_bytes,
    maxMsgsPerSubject: c.max_msgs_per_subject,
    replicas: c.num_replicas,
    cluster:
      cluster === undefined
        ? undefined
        : {
            name: cluster.name,
            leader: cluster.leader,
            replicas: (cluster.replicas ?? []).map((p) => ({
              name: p.name,
              current: p.current,
              offline: p.offline === true,
              lag: p.lag ?? 0,
              activeMs: typeof p.active === 'number' ? p.active / NANOS_PER_MS : undefined,
            })),
          },
  };
}

/** Why a part could not be read, as one line. */
function unavailable(what: string, error: unknown): Unavailable {
  const refused = permissionViolation(error);
  if (refused !== undefined) return { unavailable: `${what}: this NATS user may not (${refused.message})` };
  return { unavailable: `${what}: ${(error as Error).message ?? String(error)}` };
}

/** The selection's frame subjects: counts from the stream's info, newest store times from one scan. */
async function frameSubjects(js: JetStreamClient, info: StreamInfo, filter: string, wanted: (host: string) => boolean): Promise<SubjectSnapshot[]> {
  const counts = info.state.subjects ?? {};
  const newest = new Map<string, number>();
  if (Object.keys(counts).length > 0) {
    await scanLastPerSubject(js, { stream: info.config.name, filter, headersOnly: true }, (m) => {
      const ms = m.info.timestampNanos / NANOS_PER_MS;
      if (ms > (newest.get(m.subject) ?? 0)) newest.set(m.subject, ms);
    });
  }
  const out: SubjectSnapshot[] = [];
  for (const subject of new Set([...Object.keys(counts), ...newest.keys()])) {
    const host = subjectHostToken(subject);
    if (!wanted(host)) continue;
    const sampler = subject.slice(METRICS_PREFIX.length + host.length + 2);
    out.push({ host, sampler, messages: counts[subject] ?? 0, lastMs: newest.get(subject) });
  }
  return out;
}

/**
 * The current value of every key of a bucket (deleted keys left out), or
 * undefined when the bucket does not exist.
 */
async function bucketValues(js: JetStreamClient, bucket: string): Promise<Map<string, Uint8Array> | undefined> {
  const prefix = `$KV.${bucket}.`;
  const values = new Map<string, Uint8Array>();
  try {
    await scanLastPerSubject(js, { stream: bucketStream(bucket), filter: `${prefix}>`, headersOnly: false }, (m) => {
      const op = m.headers?.get('KV-Operation') ?? '';
      const key = m.subject.slice(prefix.length);
      if (op === 'DEL' || op === 'PURGE') values.delete(key);
      else values.set(key, m.data);
    });
  } catch (error) {
    if (isStreamNotFound(error)) return undefined;
    throw error;
  }
  return values;
}

async function statuses(js: JetStreamClient, wanted: (host: string) => boolean): Promise<AgentStatusRecord[] | Unavailable> {
  try {
    const values = await bucketValues(js, STATUS_BUCKET);
    const out: AgentStatusRecord[] = [];
    for (const [key, data] of values ?? []) {
      if (!wanted(key)) continue;
      const record = parseAgentStatus(key, data);
      if (record !== undefined) out.push(record);
    }
    return out;
  } catch (error) {
    return unavailable(`status bucket ${STATUS_BUCKET}`, error);
  }
}

async function alerts(js: JetStreamClient, wanted: (host: string) => boolean): Promise<AlertSnapshot[] | undefined | Unavailable> {
  try {
    const values = await bucketValues(js, ALERT_STATE_BUCKET);
    if (values === undefined) return undefined;
    const out: AlertSnapshot[] = [];
    for (const data of values.values()) {
      const r = parseRecord(data);
      if (r !== undefined && wanted(r.host)) out.push({ host: r.host, rule: r.rule, state: r.state });
    }
    return out;
  } catch (error) {
    return unavailable(`alert state bucket ${ALERT_STATE_BUCKET}`, error);
  }
}

function consumerSnapshot(ci: ConsumerInfo): ConsumerSnapshot {
  const c = ci.config;
  const filters = c.filter_subjects ?? (c.filter_subject === undefined || c.filter_subject === '' ? [] : [c.filter_subject]);
  // the server sends last_active as an RFC 3339 time (the client's type says nanoseconds)
  const active = isoMs((ci.delivered as { last_active?: unknown }).last_active) ?? isoMs((ci.ack_floor as { last_active?: unknown }).last_active);
  return {
    name: ci.name,
    durable: c.durable_name !== undefined && c.durable_name !== '',
    filter: filters.length === 0 ? undefined : filters.join(', '),
    pending: ci.num_pending,
    ackPending: ci.num_ack_pending,
    redelivered: ci.num_redelivered,
    waiting: ci.num_waiting,
    lastActiveMs: active,
  };
}

async function consumers(jsm: JetStreamManager, stream: string): Promise<ConsumerSnapshot[] | Unavailable> {
  try {
    const out: ConsumerSnapshot[] = [];
    for await (const ci of jsm.consumers.list(stream)) {
      if (!ci.name.startsWith(SCAN_PREFIX)) out.push(consumerSnapshot(ci));
    }
    return out;
  } catch (error) {
    return unavailable(`consumers of ${stream}`, error);
  }
}

/**
 * The hosts the stream holds frames of (one more stream info, over every
 * frame subject): asked only when a selection found none, to name them.
 * Undefined when they cannot be read; the report then goes without them.
 */
async function streamHosts(jsm: JetStreamManager, stream: string): Promise<StreamHosts | undefined> {
  try {
    const info = await jsm.streams.info(stream, { subjects_filter: `${METRICS_PREFIX}.>` });
    const hosts = [...new Set(Object.keys(info.state.subjects ?? {}).map(subjectHostToken))].sort();
    return { count: hosts.length, names: hosts.slice(0, STREAM_HOSTS_NAMED) };
  } catch {
    return undefined;
  }
}

/** One subject filter for a selection: a single host's subjects, else every host's (picked afterwards). */
function frameFilter(hosts: string): string {
  const subjects = hostFilterSubjects(hosts);
  return subjects.length === 1 && subjects[0] !== undefined ? subjects[0] : `${METRICS_PREFIX}.>`;
}

async function read(nc: NatsConnection, o: GatherOptions): Promise<BusSnapshot> {
  let jsm: JetStreamManager;
  try {
    jsm = await jetstreamManager(nc);
  } catch (error) {
    throw new RezolusError('NO_JETSTREAM', `NATS at ${o.url} does not answer JetStream requests (is it started with -js?): ${(error as Error).message}`, { cause: error });
  }
  const js = jetstream(nc);
  const filter = frameFilter(o.hosts);
  let info: StreamInfo;
  try {
    info = await jsm.streams.info(o.stream, { subjects_filter: filter });
  } catch (error) {
    if (isStreamNotFound(error)) throw new NoRezolusStreamError(o.stream, o.url, { cause: error, fellBack: o.fellBack });
    const refused = permissionViolation(error);
    if (refused !== undefined) throw new RezolusError('NATS_PERMISSION', `this NATS user may not read the info of stream ${o.stream} (${refused.message})`, { cause: error });
    throw error;
  }
  const wanted = hostMatcher(o.hosts);
  const frames = frameSubjects(js, info, filter, wanted).catch((error: unknown) => {
    const refused = permissionViolation(error);
    if (refused === undefined) throw error;
    throw new RezolusError('NATS_PERMISSION', `this NATS user may not read the newest frames of stream ${o.stream} with a consumer (${refused.message})`, { cause: error });
  });
  const [subjects, status, alert, consumerList] = await Promise.all([
    frames,
    statuses(js, wanted),
    alerts(js, wanted),
    consumers(jsm, o.stream),
  ]);
  const noneFound = o.hosts !== '*' && subjects.length === 0 && (!Array.isArray(status) || status.length === 0);
  const others = noneFound ? await streamHosts(jsm, o.stream) : undefined;
  return { url: o.url, atMs: Date.now(), stream: streamSnapshot(info), subjects, statuses: status, alerts: alert, consumers: consumerList, streamHosts: others };
}

/** Connects (failing at once when NATS does not answer), reads, and closes. */
export async function gatherStatus(o: GatherOptions): Promise<BusSnapshot> {
  let nc: NatsConnection;
  try {
    nc = await connectBus({ url: o.url, name: 'rezolus status', log: o.log, waitOnFirstConnect: false, security: o.security });
  } catch (error) {
    if (o.fellBack !== true || !(error instanceof RezolusError) || error.code !== 'NATS_CONNECT') throw error;
    const why = explainConnectError(error.cause, o.security ?? NO_NATS_SECURITY);
    throw new RezolusError('NATS_CONNECT', `${FELL_BACK} and nothing answers at ${o.url} (${why}): ${INSTEAD}`, { cause: error });
  }
  try {
    return await read(nc, o);
  } finally {
    await nc.close();
  }
}
