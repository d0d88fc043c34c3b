/**
 * The newest message of every subject of a stream under a filter, in one
 * pass: an ordered consumer with deliver policy last_per_subject. The
 * server walks its per-subject index and sends one message per subject,
 * so a 1000-host fleet costs one consumer, not one request per subject
 * (nats-server 2.9 has no batched direct get). With `headersOnly` the
 * server leaves the payload out: the store time and the subject are what
 * the frame scan needs.
 *
 * The scan ends after as many messages as the consumer had pending when it
 * was made (one per subject); messages stored meanwhile may come before
 * that count is reached, which only makes a subject's newest time newer.
 * The consumer is deleted at the end (an ordered consumer otherwise lingers
 * for its inactive threshold, 5 minutes).
 */
import { randomBytes } from 'node:crypto';
import { DeliverPolicy, type JetStreamClient, type JsMsg } from '@nats-io/jetstream';
import { NatsUnavailableError } from '../errors.js';

/** Name prefix of this command's consumers, so the consumer list can leave them out. */
export const SCAN_PREFIX = 'rezolus_status';

/** A scan that has not ended after this long is given up (a server that went away meanwhile). */
const SCAN_PATIENCE_MS = 60_000;

export interface ScanOptions {
  readonly stream: string;
  readonly filter: string;
  readonly headersOnly: boolean;
  /** default SCAN_PATIENCE_MS */
  readonly patienceMs?: number;
}

/** Hands the newest message of each subject to `take`; resolves with how many were read. */
export async function scanLastPerSubject(js: JetStreamClient, o: ScanOptions, take: (m: JsMsg) => void): Promise<number> {
  // an ordered consumer on an empty stream never answers its info request: nothing to scan anyway
  const jsm = await js.jetstreamManager();
  if ((await jsm.streams.info(o.stream)).state.messages === 0) return 0;
  const consumer = await js.consumers.get(o.stream, {
    // the client numbers its ordered consumers from 1 in each process: two runs at once need names of their own
    name_prefix: `${SCAN_PREFIX}_${randomBytes(6).toString('hex')}`,
    deliver_policy: DeliverPolicy.LastPerSubject,
    filter_subjects: o.filter,
    headers_only: o.headersOnly,
  });
  const messages = await consumer.consume({ max_messages: 1000 });
  let read = 0;
  let timedOut = false;
  const timer = setTimeout(() => {
    timedOut = true;
    void messages.close();
  }, o.patienceMs ?? SCAN_PATIENCE_MS);
  try {
    // the creation's answer: one pending message per subject
    const expected = await Promise.race([
      consumer.info(true).then((i) => i.num_pending),
      new Promise<number>((resolve) =>
        setTimeout(() => {
          timedOut = true;
          resolve(0);
        }, o.patienceMs ?? SCAN_PATIENCE_MS).unref(),
      ),
    ]);
    if (expected > 0) {
      for await (const m of messages) {
        read++;
        take(m);
        if (m.info.pending === 0 || read >= expected) break;
      }
    }
  } finally {
    clearTimeout(timer);
    await messages.close();
    await consumer.delete().catch(() => undefined);
  }
  if (timedOut) throw new NatsUnavailableError(`reading the newest messages of ${o.stream} (${o.filter}) took over ${(o.patienceMs ?? SCAN_PATIENCE_MS) / 1000} s`);
  return read;
}
