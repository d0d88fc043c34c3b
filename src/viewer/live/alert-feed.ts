/**
 * The live viewer's alert events: one ordered consumer on REZOLUS_ALERTS from
 * now − window that reads the window's events and then goes on delivering
 * each new one as the stream stores it. Reading what the stream stored (not
 * a plain subscription) gives each event once: a transition published by two
 * evaluators, or published again, is stored once (Nats-Msg-Id), and a
 * reconnect resumes after the last event read. Without the stream (no
 * evaluator has run on this bus) there are no events: poke() tries again,
 * quietly, and so it does when the stream goes away and comes back.
 */
import { type Consumer, type ConsumerMessages, DeliverPolicy, jetstream } from '@nats-io/jetstream';
import type { Logger } from 'pino';
import { ALERTS_PREFIX, ALERTS_STREAM } from '../../alert/contract.js';
import { isStreamNotFound } from '../../bus/api-errors.js';
import { hostMatcher } from '../../bus/subjects.js';
import type { BusLink } from '../../sources/link.js';
import type { AlertsResult } from '../api.js';
import { AlertLog, alertSubjectParts, parseAlertEvent } from '../alerts.js';

export class AlertFeed {
  readonly log: AlertLog;
  /** messages dropped as not alert events of this layout */
  junk = 0;
  #messages: ConsumerMessages | undefined;
  /** the read under way, if one is */
  #run: Promise<void> | undefined;
  #stopped = false;
  /** the stream was there at the last try (undefined: not tried yet) */
  #streamThere: boolean | undefined;
  /** when the stream stored the last message read (unix ms): a restart reads from there (that message again, dropped as held) */
  #lastStoredMs = 0;
  readonly #pick: (token: string) => boolean;

  constructor(
    private readonly link: BusLink,
    private windowMs: number,
    hosts: string,
    private readonly logger: Logger,
  ) {
    this.log = new AlertLog(windowMs);
    this.#pick = hostMatcher(hosts);
  }

  setWindow(ms: number): void {
    this.windowMs = ms;
    this.log.setKeep(ms);
  }

  /** Starts reading unless it is reading already; never throws (an error is logged and the next poke tries again). */
  poke(nowMs: number = Date.now()): void {
    this.log.trim(nowMs);
    if (this.#run !== undefined || this.#stopped) return;
    this.#run = this.#read().finally(() => {
      this.#run = undefined;
    });
  }

  /** why the API has no events to give, when that is not that none happened */
  note(): string | undefined {
    if (this.#streamThere === false) return `no alert stream ${ALERTS_STREAM} on this bus yet (no rezolus alert has run); trying again every few seconds`;
    return undefined;
  }

  range(host: string | undefined, from: number, to: number): AlertsResult {
    const note = this.note();
    return { from, to, ...this.log.range(host, from, to), ...(note === undefined ? {} : { note }) };
  }

  /** Alerts of `host` firing now as far as the window's events tell; null while the stream cannot be read. */
  firing(host: string): number | null {
    return this.#streamThere === true ? this.log.firing(host) : null;
  }

  /** Ends the read (its consumer deleted). */
  async stop(): Promise<void> {
    this.#stopped = true;
    void this.#messages?.close();
    await this.#run;
  }

  async #read(): Promise<void> {
    const since = Math.max(Date.now() - this.windowMs, this.#lastStoredMs);
    let messages: ConsumerMessages;
    let consumer: Consumer;
    try {
      consumer = await jetstream(this.link.nc).consumers.get(ALERTS_STREAM, {
        deliver_policy: DeliverPolicy.StartTime,
        opt_start_time: new Date(since).toISOString(),
        filter_subjects: `${ALERTS_PREFIX}.>`,
      });
      // the stream deleted: the iterator ends (and poke starts again from the last event), rather than waiting on a stream that may come back with other sequence numbers
      messages = await consumer.consume({ max_messages: 256, abort_on_missing_resource: true });
    } catch (error) {
      if (isStreamNotFound(error)) {
        if (this.#streamThere !== false) this.logger.info({ stream: ALERTS_STREAM }, 'no alert stream yet: the charts have no alert markers until an evaluator makes it');
        this.#streamThere = false;
      } else this.logger.debug({ err: error }, 'cannot read the alert stream now; trying again');
      return;
    }
    this.#streamThere = true;
    this.#messages = messages;
    if (this.#stopped) await messages.close();
    try {
      for await (const m of messages) {
        this.#take(m.subject, m.data);
        this.#lastStoredMs = Math.floor(m.info.timestampNanos / 1e6);
      }
    } catch (error) {
      this.logger.debug({ err: error }, 'the alert stream read ended; trying again');
    } finally {
      this.#messages = undefined;
      // ended without stop(): the stream went away, or the consumer could not be made again
      if (!this.#stopped) this.#streamThere = undefined;
      await consumer.delete().catch(() => undefined);
    }
  }

  #take(subject: string, data: Uint8Array): void {
    const where = alertSubjectParts(subject);
    if (where !== undefined && !this.#pick(where.host)) return;
    const now = Date.now();
    const mark = parseAlertEvent(subject, data, now);
    if (mark === undefined) {
      if (this.junk++ === 0) this.logger.warn({ subject, bytes: data.length }, 'a message on the alert stream is not an alert event; ignored (and so are the next ones, unlogged)');
      return;
    }
    this.log.add(mark, now);
  }
}
