import {
  DiscardPolicy,
  RetentionPolicy,
  StorageType,
  type JetStreamManager,
  type StreamConfig,
  type StreamInfo,
} from '@nats-io/jetstream';
import { nanos } from '@nats-io/nats-core';
import type { Logger } from 'pino';
import { NatsPermissionError, StreamConflictError } from '../errors.js';
import { isStreamNotFound, isSubjectOverlap, permissionViolation } from './api-errors.js';
import { METRICS_PREFIX } from './subjects.js';

/** The rolling window that is the hindsight buffer. */
export interface StreamOptions {
  readonly name: string;
  readonly maxAgeMs: number;
  readonly maxBytes: number;
  readonly maxMsgsPerSubject: number;
  readonly duplicateWindowMs: number;
  readonly replicas: number;
}

export const STREAM_SUBJECT = `${METRICS_PREFIX}.>`;

export function streamConfig(o: StreamOptions): Partial<StreamConfig> & { name: string } {
  return {
    name: o.name,
    subjects: [STREAM_SUBJECT],
    retention: RetentionPolicy.Limits,
    storage: StorageType.File,
    discard: DiscardPolicy.Old,
    max_age: nanos(o.maxAgeMs),
    max_bytes: o.maxBytes,
    max_msgs_per_subject: o.maxMsgsPerSubject,
    duplicate_window: nanos(Math.min(o.duplicateWindowMs, o.maxAgeMs)),
    num_replicas: o.replicas,
    allow_direct: true,
    // a rollup is a purge any publisher can send with a header: one host could empty the window
    allow_rollup_hdrs: false,
    description: 'rezolus-nats metric frames: the hindsight window',
  };
}

/**
 * Settings of an existing stream that decide whether it works for us at
 * all, against those `w` wants: they are never changed on a live stream.
 */
export function streamConflicts(c: StreamConfig, w: Partial<StreamConfig>): string[] {
  const problems: string[] = [];
  const subjects = w.subjects ?? [];
  if (subjects.some((x) => !c.subjects.includes(x))) {
    problems.push(`subjects is ${JSON.stringify(c.subjects)}, rezolus needs ${subjects.map((x) => JSON.stringify(x)).join(', ')}`);
  }
  if (w.retention !== undefined && c.retention !== w.retention) problems.push(`retention is "${c.retention}", rezolus needs "${w.retention}"`);
  if (w.storage !== undefined && c.storage !== w.storage) problems.push(`storage is "${c.storage}", rezolus needs "${w.storage}"`);
  if (w.discard !== undefined && c.discard !== w.discard) {
    const why = w.discard === DiscardPolicy.Old ? ' (a full window must drop old frames, not refuse new ones)' : '';
    problems.push(`discard is "${c.discard}", rezolus needs "${w.discard}"${why}`);
  }
  return problems;
}

/** The limits rezolus brings an existing stream (or a bucket's) to: its config field, and the key it is said as. */
const LIMITS = [
  ['max_age', 'max_age'],
  ['max_bytes', 'max_bytes'],
  ['max_msgs_per_subject', 'max_msgs_per_subject'],
  ['duplicate_window', 'duplicate_window'],
  ['num_replicas', 'replicas'],
  ['allow_rollup_hdrs', 'allow_rollup_hdrs'],
] as const;

export interface LimitDifference {
  readonly field: (typeof LIMITS)[number][0];
  /** as the [stream] key says it */
  readonly key: string;
  readonly has: unknown;
  readonly want: unknown;
}

/** The limits `w` sets that the stream's config `c` holds otherwise (an absent allow_rollup_hdrs is false). */
export function limitDifferences(c: StreamConfig, w: Partial<StreamConfig>): LimitDifference[] {
  return LIMITS.filter(([field]) => w[field] !== undefined)
    .map(([field, key]) => ({ field, key, has: field === 'allow_rollup_hdrs' ? c[field] === true : c[field], want: w[field] }))
    .filter((d) => d.has !== d.want);
}

/**
 * Creates the stream, or checks an existing one: settings that conflict are
 * refused with a message naming each one; tunable limits (age, bytes,
 * per-subject cap, duplicate window, replicas) are updated to the options.
 */
export async function ensureStream(jsm: JetStreamManager, o: StreamOptions, log: Logger): Promise<StreamInfo> {
  const wanted = streamConfig(o);
  let info: StreamInfo | undefined;
  try {
    info = await jsm.streams.info(o.name);
  } catch (error) {
    const refused = permissionViolation(error);
    if (refused !== undefined) {
      throw new NatsPermissionError(`this NATS user may not read stream ${o.name} (${refused.message}): check [stream] name and the user's permissions`, { cause: error });
    }
    if (!isStreamNotFound(error)) throw error;
  }
  if (info === undefined) {
    try {
      const created = await jsm.streams.add(wanted);
      log.info({ stream: o.name, max_age_ms: o.maxAgeMs, max_bytes: o.maxBytes }, 'created stream');
      return created;
    } catch (error) {
      const refused = permissionViolation(error);
      if (refused !== undefined) {
        throw new NatsPermissionError(
          `stream ${o.name} does not exist and this NATS user may not create it (${refused.message}): create it once with rezolus setup as the admin user (see rezolus nats-auth)`,
          { cause: error },
        );
      }
      if (isSubjectOverlap(error)) {
        throw new StreamConflictError(
          `cannot create stream ${o.name}: another stream already captures "${STREAM_SUBJECT}" (${(error as Error).message}); ` +
            `set [stream] name to that stream's name or delete it`,
          { cause: error },
        );
      }
      throw error;
    }
  }
  const problems = streamConflicts(info.config, wanted);
  if (problems.length > 0) {
    throw new StreamConflictError(
      `stream ${o.name} exists with settings rezolus cannot use: ${problems.join('; ')}. ` +
        `Delete it (nats stream rm ${o.name}) or set another [stream] name in the config`,
    );
  }
  // [stream] key -> [the stream's value, this agent's]
  const differ = Object.fromEntries(limitDifferences(info.config, wanted).map((d) => [d.key, [d.has, d.want]]));
  if (Object.keys(differ).length === 0) return info;
  const update = jsm.streams.update(o.name, {
    max_age: wanted.max_age,
    max_bytes: wanted.max_bytes,
    max_msgs_per_subject: wanted.max_msgs_per_subject,
    duplicate_window: wanted.duplicate_window,
    num_replicas: wanted.num_replicas,
    allow_rollup_hdrs: false,
  });
  let updated: StreamInfo;
  try {
    updated = await update;
  } catch (error) {
    // a per-host user checks the stream; the admin who created it owns its limits
    if (permissionViolation(error) === undefined) throw error;
    log.warn(
      { stream: o.name, ...differ, err: error },
      `the stream's ${Object.keys(differ).join(', ')} differ from this agent's [stream] settings (stream's, agent's), and this NATS user may not change them: using the stream as it is`,
    );
    return info;
  }
  // The stream is shared by the fleet: whoever changes its limits should see it in the log.
  log.warn({ stream: o.name, ...differ }, `changed the stream's ${Object.keys(differ).join(', ')} to this agent's [stream] settings (old, new)`);
  return updated;
}
