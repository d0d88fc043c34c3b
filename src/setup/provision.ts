/**
 * `rezolus setup`: creates, or brings to the configured settings, what the
 * fleet's processes need on the server and a per-role NATS user may not
 * create: the frames stream and the descriptor and status buckets (as an
 * agent at start), and with alert settings the alert events stream and the
 * alert state bucket (as `rezolus alert` at start). Nothing is published
 * and no host's status is written: unlike an agent run as the admin for a
 * few seconds, it leaves no host behind in `rezolus status`.
 */
import { jetstreamManager } from '@nats-io/jetstream';
import type { Logger } from 'pino';
import { alertStateBucket, ensureAlertStream } from '../alert/bus.js';
import { ALERT_STATE_BUCKET, ALERTS_STREAM } from '../alert/contract.js';
import { permissionViolation } from '../bus/api-errors.js';
import { connectBus } from '../bus/connect.js';
import { descriptorBucket, STATUS_TTL_MS, statusBucket } from '../bus/kv.js';
import { untilReady } from '../bus/ready.js';
import { ensureStream, type StreamOptions } from '../bus/stream.js';
import { DESCRIPTOR_BUCKET, STATUS_BUCKET } from '../bus/subjects.js';
import type { NatsSecurity } from '../config/nats.js';
import { formatDuration, formatBytes } from '../config/units.js';
import { NatsPermissionError } from '../errors.js';

export interface SetupOptions {
  readonly natsUrl: string;
  readonly nats: NatsSecurity;
  readonly stream: StreamOptions;
  readonly descriptorTtlMs: number;
  /** the alert events stream's limits and the alert objects' replicas; undefined: no alert objects */
  readonly alerts?: { readonly maxAgeMs: number; readonly maxBytes: number; readonly replicas: number } | undefined;
}

/** A refusal of what only the admin may do, said as such; anything else as it is. */
function adminOnly(what: string): (error: unknown) => never {
  return (error) => {
    const p = permissionViolation(error);
    if (p !== undefined) throw new NatsPermissionError(`this NATS user may not ${what} (${p.message}): run rezolus setup with the admin's credentials (see rezolus nats-auth)`, { cause: error });
    throw error;
  };
}

/** Creates or updates them; one line per object made ready, for the user. */
export async function runSetup(o: SetupOptions, log: Logger): Promise<string[]> {
  // the connection's own error lines (a refused inbox) would repeat the one line a refusal ends with; --log-level info shows them
  const busLog = log.isLevelEnabled('info') ? log : log.child({}, { level: 'fatal' });
  const nc = await connectBus({ url: o.natsUrl, name: 'rezolus setup', log: busLog, waitOnFirstConnect: false, security: o.nats });
  try {
    // a cluster answers its JetStream API once it has a meta leader, and a new R3 stream once its peers are current
    const ready = <T>(what: string, call: () => Promise<T>): Promise<T> => untilReady(call, { log, what });
    const jsm = await ready(`JetStream at ${o.natsUrl}`, async () => {
      const m = await jetstreamManager(nc, { checkAPI: false });
      await m.getAccountInfo().catch(adminOnly('use the JetStream API'));
      return m;
    });
    const s = o.stream;
    const lines: string[] = [];
    await ready(`stream ${s.name}`, () => ensureStream(jsm, s, log));
    lines.push(`stream ${s.name}: ready (max_age ${formatDuration(s.maxAgeMs)}, max_bytes ${formatBytes(s.maxBytes)}, ${s.replicas} replica${s.replicas === 1 ? '' : 's'})`);
    await ready(`bucket ${DESCRIPTOR_BUCKET}`, () => descriptorBucket(nc, { ttlMs: o.descriptorTtlMs, replicas: s.replicas }, log).catch(adminOnly(`create or change bucket ${DESCRIPTOR_BUCKET}`)));
    lines.push(`bucket ${DESCRIPTOR_BUCKET}: ready (ttl ${formatDuration(o.descriptorTtlMs)})`);
    await ready(`bucket ${STATUS_BUCKET}`, () => statusBucket(nc, { ttlMs: STATUS_TTL_MS, replicas: s.replicas }, log).catch(adminOnly(`create or change bucket ${STATUS_BUCKET}`)));
    lines.push(`bucket ${STATUS_BUCKET}: ready (ttl ${formatDuration(STATUS_TTL_MS)})`);
    const a = o.alerts;
    if (a !== undefined) {
      await ready(`stream ${ALERTS_STREAM}`, () => ensureAlertStream(nc, a, log));
      lines.push(`stream ${ALERTS_STREAM}: ready (max_age ${formatDuration(a.maxAgeMs)}, max_bytes ${formatBytes(a.maxBytes)}, ${a.replicas} replica${a.replicas === 1 ? '' : 's'})`);
      await ready(`bucket ${ALERT_STATE_BUCKET}`, () => alertStateBucket(nc, a.replicas, log));
      lines.push(`bucket ${ALERT_STATE_BUCKET}: ready`);
    }
    return lines;
  } finally {
    await nc.close().catch(() => undefined);
  }
}
