/**
 * `rezolus setup`: creates, or brings to the configured settings, what the
 * fleet's processes need on the server and a per-role NATS user may not
 * create: the frames stream and the descriptor and status buckets (the
 * agents' [stream] and [descriptors]), and with alert settings the alert
 * events stream and the alert state bucket. Each is said as it is made
 * ready: created, updated (what changed) or unchanged; what this user may
 * not create or change, or a stream whose subjects or kind rezolus cannot
 * use, stops it with one line. Nothing is published and no host's status
 * written: unlike an agent run as the admin for a few seconds, it leaves
 * no host behind in `rezolus status`.
 */
import { jetstreamManager, type JetStreamManager, type StreamConfig, type StreamInfo } from '@nats-io/jetstream';
import type { Logger } from 'pino';
import { alertStreamConfig } from '../alert/bus.js';
import { ALERT_STATE_BUCKET, ALERTS_STREAM } from '../alert/contract.js';
import { isStreamNotFound, isSubjectOverlap, permissionViolation } from '../bus/api-errors.js';
import { connectBus } from '../bus/connect.js';
import { bucketStreamConfig, STATUS_TTL_MS } from '../bus/kv.js';
import { untilReady } from '../bus/ready.js';
import { limitDifferences, streamConfig, streamConflicts, type StreamOptions } from '../bus/stream.js';
import { DESCRIPTOR_BUCKET, STATUS_BUCKET } from '../bus/subjects.js';
import type { NatsSecurity } from '../config/nats.js';
import { formatBytes, formatDuration } from '../config/units.js';
import { NatsPermissionError, RezolusError } from '../errors.js';

export interface SetupOptions {
  readonly natsUrl: string;
  readonly nats: NatsSecurity;
  readonly stream: StreamOptions;
  readonly descriptorTtlMs: number;
  /** the alert events stream's limits and the alert objects' replicas; undefined: no alert objects */
  readonly alerts?: { readonly maxAgeMs: number; readonly maxBytes: number; readonly replicas: number } | undefined;
  /** how long to wait for JetStream to answer at all (a cluster electing its leader); default 2 min */
  readonly waitMs?: number;
}

type Wanted = Partial<StreamConfig> & { name: string };

/** How a limit is said (LimitDifference.field); a limit not here is said as it is. */
const SAID: Partial<Record<keyof StreamConfig, (v: unknown) => string>> = {
  max_age: (v) => (Number(v) === 0 ? 'none' : formatDuration(Number(v) / 1e6)),
  max_bytes: (v) => (Number(v) < 0 ? 'none' : formatBytes(Number(v))),
  duplicate_window: (v) => formatDuration(Number(v) / 1e6),
};
const say = (field: keyof StreamConfig, v: unknown): string => (SAID[field] ?? String)(v);

/** A refusal of what only the admin may do, said as such; anything else as it is. */
function adminOnly(what: string): (error: unknown) => never {
  return (error) => {
    const p = permissionViolation(error);
    if (p?.operation === 'subscription') {
      throw new NatsPermissionError(`this NATS user may not receive replies on ${p.subject} (a per-host user has an inbox of its own): run rezolus setup with the admin's credentials (see rezolus nats-auth)`, { cause: error });
    }
    if (p !== undefined) throw new NatsPermissionError(`this NATS user may not ${what} (${p.message}): run rezolus setup with the admin's credentials (see rezolus nats-auth)`, { cause: error });
    if (error instanceof RezolusError) throw error;
    throw new RezolusError('SETUP_FAILED', `cannot ${what}: ${error instanceof Error ? error.message : String(error)}`, { cause: error });
  };
}

/** `what` created as `w`, or an existing one's limits brought to `w`: the line that says which. */
async function align(jsm: JetStreamManager, w: Wanted, what: string): Promise<string> {
  let info: StreamInfo | undefined;
  try {
    info = await jsm.streams.info(w.name);
  } catch (error) {
    if (!isStreamNotFound(error)) adminOnly(`read ${what}`)(error);
  }
  // the limits a user sets: age, size and replicas
  const shown = (c: Partial<StreamConfig>): string =>
    (['max_age', 'max_bytes', 'num_replicas'] as const)
      .filter((k) => w[k] !== undefined)
      .map((k) => `${k === 'num_replicas' ? 'replicas' : k} ${say(k, c[k])}`)
      .join(', ');
  if (info === undefined) {
    await jsm.streams.add(w).catch((error: unknown) => {
      if (isSubjectOverlap(error)) {
        throw new RezolusError('SETUP_FAILED', `cannot create ${what}: another stream already captures ${JSON.stringify(w.subjects)} (${(error as Error).message}); delete that stream or name it in the config`, { cause: error });
      }
      return adminOnly(`create ${what}`)(error);
    });
    return `${what}: created (${shown(w)})`;
  }
  const bad = streamConflicts(info.config, w);
  if (bad.length > 0) throw new RezolusError('SETUP_FAILED', `${what} exists with settings rezolus cannot use: ${bad.join('; ')}. Delete it (nats stream rm ${w.name}) and run rezolus setup again`);
  const off = limitDifferences(info.config, w);
  if (off.length === 0) return `${what}: unchanged (${shown(info.config)})`;
  const changes = off.map((d) => `${d.key} ${say(d.field, d.has)} -> ${say(d.field, d.want)}`).join(', ');
  await jsm.streams.update(w.name, Object.fromEntries(off.map((d) => [d.field, d.want]))).catch(adminOnly(`change ${what} (${changes})`));
  return `${what}: updated (${changes})`;
}

/** Creates or updates them, saying each as it is ready (`say`); throws a RezolusError with one line on the first that cannot be. */
export async function runSetup(o: SetupOptions, log: Logger, say: (line: string) => void): Promise<void> {
  // the connection's own error lines (a refused inbox) would repeat the one line a refusal ends with; --log-level info shows them
  const busLog = log.isLevelEnabled('info') ? log : log.child({}, { level: 'fatal' });
  const nc = await connectBus({ url: o.natsUrl, name: 'rezolus setup', log: busLog, waitOnFirstConnect: false, security: o.nats });
  let deadline: NodeJS.Timeout | undefined;
  try {
    // a cluster answers its JetStream API once it has a meta leader, and a new R3 stream once its peers are current: waited
    // for, said every 30 s, and given up after waitMs (a one-shot command must end)
    const waitMs = o.waitMs ?? 120_000;
    const gaveUp = new Promise<never>((_, reject) => {
      deadline = setTimeout(() => reject(new RezolusError('SETUP_TIMEOUT', `JetStream at ${o.natsUrl} did not answer within ${formatDuration(waitMs)} (a cluster without a leader, or its peers away?)`)), waitMs);
    });
    const ready = <T>(what: string, call: () => Promise<T>): Promise<T> => Promise.race([untilReady(call, { log, what }), gaveUp]);
    const jsm = await ready(`JetStream at ${o.natsUrl}`, async () => {
      const m = await jetstreamManager(nc, { checkAPI: false });
      await m.getAccountInfo().catch((error: unknown) => {
        if (permissionViolation(error) === undefined && /not enabled/i.test(String(error))) {
          throw new RezolusError('JETSTREAM_UNAVAILABLE', `NATS at ${o.natsUrl} has no JetStream (start nats-server with -js)`, { cause: error });
        }
        return adminOnly('use the JetStream API')(error);
      });
      return m;
    });
    const s = o.stream;
    const wanted: [Wanted, string][] = [
      [streamConfig(s), `stream ${s.name}`],
      [bucketStreamConfig(DESCRIPTOR_BUCKET, { ttlMs: o.descriptorTtlMs, replicas: s.replicas }), `bucket ${DESCRIPTOR_BUCKET}`],
      [bucketStreamConfig(STATUS_BUCKET, { ttlMs: STATUS_TTL_MS, replicas: s.replicas }), `bucket ${STATUS_BUCKET}`],
    ];
    const a = o.alerts;
    if (a !== undefined) {
      wanted.push([alertStreamConfig(a), `stream ${ALERTS_STREAM}`], [bucketStreamConfig(ALERT_STATE_BUCKET, { ttlMs: 0, replicas: a.replicas }), `bucket ${ALERT_STATE_BUCKET}`]);
    }
    const clustered = nc.info?.cluster !== undefined;
    for (const [w, what] of wanted) {
      const line = await ready(what, () => align(jsm, w, what));
      const lonely = !clustered && (w.num_replicas ?? 1) > 1 ? ' (this NATS server is not in a cluster: it keeps one copy)' : '';
      say(`${line}${lonely}`);
    }
  } finally {
    clearTimeout(deadline);
    await nc.close().catch(() => undefined);
  }
}
