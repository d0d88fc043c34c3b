/**
 * Reads the alert events stream from a time on (an ordered consumer), for
 * `rezolus alert events`: each event handed over in stream order, then the
 * new ones as they are stored, until `until` (when given) or stop.
 */
import { DeliverPolicy, jetstream } from '@nats-io/jetstream';
import type { NatsSecurity } from '../config/nats.js';
import { hostMatcher } from '../bus/subjects.js';
import { NatsUnavailableError, RezolusError } from '../errors.js';
import { silentLogger } from '../log/logger.js';
import { BusLink } from '../sources/link.js';
import { isStreamNotFound } from '../bus/api-errors.js';
import { ALERTS_PREFIX, ALERTS_STREAM, type AlertEvent } from './contract.js';

export interface FollowOptions {
  readonly url: string;
  readonly security?: NatsSecurity | undefined;
  /** unix ms */
  readonly since: number;
  /** unix ms: end once the events stored up to then are read; undefined = follow */
  readonly until: number | undefined;
  /** host names and globs; undefined = every host */
  readonly hosts: string | undefined;
}

/** Hands each event to `onEvent`; resolves with how many it handed over. `onStop` receives a function that ends the reading. */
export async function followAlertEvents(o: FollowOptions, onEvent: (e: AlertEvent) => void, onStop: (stop: () => void) => void): Promise<number> {
  let link: BusLink;
  try {
    link = await BusLink.open({ url: o.url, security: o.security, name: 'rezolus alert events', waitOnFirstConnect: false }, silentLogger());
  } catch (error) {
    // BusLink's error already names the URL and the cause
    if (error instanceof RezolusError) throw error;
    throw new NatsUnavailableError(`cannot connect to NATS at ${o.url}: ${(error as Error).message}`, { cause: error });
  }
  const wanted = hostMatcher(o.hosts ?? '*');
  let n = 0;
  try {
    let consumer;
    try {
      consumer = await jetstream(link.nc).consumers.get(ALERTS_STREAM, {
        deliver_policy: DeliverPolicy.StartTime,
        opt_start_time: new Date(o.since).toISOString(),
        filter_subjects: `${ALERTS_PREFIX}.>`,
      });
    } catch (error) {
      if (isStreamNotFound(error)) return 0; // no evaluator has run: no events
      throw error;
    }
    const messages = await consumer.consume({ max_messages: 256 });
    onStop(() => void messages.close());
    // with --until: end once caught up with what the stream held when reading began
    const last = o.until === undefined ? undefined : (await consumer.info(true)).num_pending;
    if (last === 0) await messages.close();
    let read = 0;
    for await (const m of messages) {
      read++;
      const stored = m.info.timestampNanos / 1e6;
      if (o.until !== undefined && stored > o.until) break;
      try {
        const e = JSON.parse(new TextDecoder().decode(m.data)) as AlertEvent;
        if (typeof e === 'object' && e !== null && typeof e.host === 'string' && wanted(e.host)) {
          onEvent(e);
          n++;
        }
      } catch {
        // not JSON: not an event of ours
      }
      if (o.until !== undefined && m.info.pending === 0) break;
      if (last !== undefined && read >= last) break;
    }
    await messages.close();
    await consumer.delete().catch(() => undefined);
  } finally {
    await link.close();
  }
  return n;
}
