/**
 * Makes transitions stick, once: each one is a compare-and-set on the
 * alert's KV record (of two evaluators making the same transition one
 * wins, the other reads the winner's record), then one event published with
 * a Nats-Msg-Id the server deduplicates, then the record marked published.
 * A record left unpublished (its writer died between the two steps) is
 * published by whichever evaluator sweeps it first; the msg id makes a
 * second publish a duplicate the stream drops.
 */
import { JetStreamApiError, type JetStreamClient } from '@nats-io/jetstream';
import { isNoStreamAnswer, isStreamNotFound } from '../bus/api-errors.js';
import type { KV } from '@nats-io/kv';
import type { Logger } from 'pino';
import {
  alertSubject,
  captureEvent,
  captureMsgId,
  parseRecord,
  transitionEvent,
  transitionMsgId,
  type AlertCapture,
  type AlertRecord,
  type CaptureResult,
} from './contract.js';
import type { AlertInput } from './evaluator.js';
import type { Transition } from './machine.js';
import type { AlertRule } from './rules.js';
import type { AlertStateWatch } from './state-watch.js';
import { formatValue } from './units.js';

/** How long an unpublished record is left to its writer before another evaluator publishes it. */
export const PUBLISH_GRACE_MS = 3000;
const RECOVER_EVERY_MS = 5000;
/** Label values and summaries longer than this are cut in records and events (a record must fit a NATS message). */
const MAX_TEXT = 1024;

/** A compare-and-set that lost: the key's revision moved (another evaluator wrote it). */
function casLost(error: unknown): boolean {
  const code = (error as { code?: unknown }).code;
  return error instanceof JetStreamApiError && (code === 10071 || code === 10164);
}

/** The stream or bucket is not there (deleted, or a store wiped): a write cannot succeed until it is made again. */
function storeLost(error: unknown): boolean {
  return isStreamNotFound(error) || isNoStreamAnswer(error);
}

const cut = (text: string, max = MAX_TEXT): string => (text.length > max ? `${text.slice(0, max - 1)}…` : text);

const encoder = new TextEncoder();

/** The summary with `{host}`, `{rule}`, `{value}`, `{threshold}`, `{state}` and `{<series label>}` filled in. */
export function renderSummary(template: string, fields: Readonly<Record<string, string>>): string {
  return template.replace(/\{([a-zA-Z_][a-zA-Z0-9_.]*)\}/g, (all, name: string) => (Object.hasOwn(fields, name) ? (fields[name] as string) : all));
}

export interface TransitionStats {
  /** transitions this evaluator wrote */
  won: number;
  /** transitions another evaluator wrote first */
  lost: number;
  /** events published (transitions and captures; duplicates the server dropped included) */
  published: number;
  /** publishes the server said were duplicates */
  duplicates: number;
  failures: number;
}

export class Transitions {
  readonly stats: TransitionStats = { won: 0, lost: 0, published: 0, duplicates: 0, failures: 0 };
  readonly #publishing = new Set<string>();
  /** the last problem said per key: the same one is not said every round */
  readonly #said = new Map<string, string>();
  #recovering: Promise<void> | undefined;
  #lastRecovery = 0;

  constructor(
    private readonly kv: KV,
    private readonly js: JetStreamClient,
    private readonly watch: AlertStateWatch,
    readonly evaluator: string,
    private readonly log: Logger,
    /** makes the events stream and the state bucket again when they were lost (deleted, a store wiped) */
    private readonly restore: () => Promise<void> = async () => undefined,
  ) {}

  #warnOnce(key: string, message: string, error: unknown): void {
    const kind = (error as Error).message;
    if (this.#said.get(key) === kind) return;
    if (this.#said.size > 10_000) this.#said.clear();
    this.#said.set(key, kind);
    this.log.warn({ key, err: error }, message);
  }

  /** The stream or the bucket is gone: make them again (at most every 5 s, one at a time). */
  #recover(): void {
    if (this.#recovering !== undefined || Date.now() - this.#lastRecovery < RECOVER_EVERY_MS) return;
    this.#lastRecovery = Date.now();
    this.log.warn('the alert events stream or state bucket is gone: making them again');
    this.#recovering = this.restore()
      .then(() => this.#said.clear())
      .catch((error: unknown) => this.log.error({ err: error }, 'could not make the alert stream and bucket again'))
      .finally(() => (this.#recovering = undefined));
  }

  /** The record a transition writes. */
  record(input: AlertInput, t: Transition, now: number, capture: AlertRecord['capture']): AlertRecord {
    const rule = input.rule;
    const valueText = formatValue(t.value, rule.dimension, rule.unit);
    const series: Record<string, string> = {};
    for (const [k, v] of Object.entries(input.series)) series[k] = cut(v);
    const fields: Record<string, string> = {
      ...series,
      host: input.host, rule: rule.name, value: valueText, threshold: rule.thresholdText, state: t.state, metric: rule.metric,
    };
    return {
      v: 1, rule: rule.name, host: input.host, series, state: t.state, previous: t.previous, seq: t.seq,
      activeAt: t.activeAt, firedAt: t.firedAt, resolvedAt: t.resolvedAt, staleAt: t.staleAt, value: t.value,
      threshold: rule.threshold, unit: rule.unit, valueText, thresholdText: rule.thresholdText, severity: rule.severity, labels: rule.labels,
      summary: cut(renderSummary(rule.summary, fields), 4 * MAX_TEXT), runbook: rule.runbook, evaluator: this.evaluator, ruleHash: rule.fingerprint, at: now,
      published: false, capture,
    };
  }

  /** Writes the transition (compare-and-set against the record this evaluator has seen) and publishes it; false when another evaluator was first. */
  async apply(key: string, rule: AlertRule, record: AlertRecord): Promise<boolean> {
    const seen = this.watch.get(key);
    let revision: number;
    try {
      revision = seen === undefined ? await this.kv.create(key, encoder.encode(JSON.stringify(record))) : await this.kv.update(key, encoder.encode(JSON.stringify(record)), seen.revision);
    } catch (error) {
      if (casLost(error)) {
        this.stats.lost++;
        this.log.debug({ key }, 'transition written by another evaluator first');
        await this.#reread(key);
      } else {
        this.stats.failures++;
        this.#warnOnce(key, `writing alert ${record.rule} on ${record.host} (${record.previous} -> ${record.state}) failed; it is tried again: ${(error as Error).message}`, error);
        if (storeLost(error)) this.#recover();
      }
      return false;
    }
    this.stats.won++;
    this.watch.note(key, record, revision);
    this.log.info({ key, state: record.state, previous: record.previous, value: record.value }, `alert ${rule.name} on ${record.host}: ${record.previous} -> ${record.state} (${record.valueText ?? record.value}, threshold ${rule.thresholdText})`);
    await this.publish(key, rule, record, revision);
    return true;
  }

  /** Publishes a record's transition event, then marks it published (when nobody wrote it meanwhile). */
  async publish(key: string, rule: AlertRule, record: AlertRecord, revision: number): Promise<void> {
    if (this.#publishing.has(key)) return;
    this.#publishing.add(key);
    try {
      const event = transitionEvent(record, formatValue(record.value, rule.dimension, rule.unit), rule.thresholdText);
      await this.#send(alertSubject(record.host, record.rule), event, transitionMsgId(record));
      await this.#markPublished(key, record, revision);
    } catch (error) {
      this.stats.failures++;
      this.#warnOnce(key, `publishing the event of alert ${record.rule} on ${record.host} failed; it is tried again: ${(error as Error).message}`, error);
      if (storeLost(error)) this.#recover();
    } finally {
      this.#publishing.delete(key);
    }
  }

  /**
   * Marks the record's transition published. When the record changed
   * meanwhile without a new transition (a capture result stored beside it),
   * the mark is made on the newer revision; a new transition, or a record
   * another evaluator marked, is left as it is.
   */
  async #markPublished(key: string, record: AlertRecord, revision: number): Promise<void> {
    let rec = record;
    let rev = revision;
    for (let tries = 0; tries < 3; tries++) {
      const done: AlertRecord = { ...rec, published: true };
      try {
        this.watch.note(key, done, await this.kv.update(key, encoder.encode(JSON.stringify(done)), rev));
        return;
      } catch {
        await this.#reread(key);
        const now = this.watch.get(key);
        const same = now !== undefined && now.record.activeAt === record.activeAt && now.record.seq === record.seq && now.record.state === record.state;
        if (!same || now.record.published) return;
        rec = now.record;
        rev = now.revision;
      }
    }
  }

  /** Publishes the capture's event. */
  async publishCapture(record: AlertRecord, episode: AlertCapture, result: CaptureResult, now: number): Promise<void> {
    await this.#send(alertSubject(record.host, record.rule), captureEvent(record, episode, result, now, this.evaluator), captureMsgId(record, episode));
  }

  /** Publishes the records whose writer has not after the grace time. */
  async sweep(now: number, ruleOf: (name: string) => AlertRule | undefined): Promise<void> {
    const due: Promise<void>[] = [];
    for (const [key, { record, revision }] of this.watch.records()) {
      if (record.published || now - record.at < PUBLISH_GRACE_MS) continue;
      const rule = ruleOf(record.rule);
      if (rule === undefined) continue;
      due.push(this.publish(key, rule, record, revision));
    }
    await Promise.all(due);
  }

  /**
   * Deletes the records of alerts that ended (resolved or inactive, their
   * event published, their capture written) more than `afterMs` ago and
   * that no window feeds: the bucket keeps what is active and recent, not
   * every series that ever crossed a threshold. Compare-and-set, so a
   * record another evaluator just changed stays.
   */
  async prune(now: number, afterMs: number, fed: (key: string) => boolean): Promise<number> {
    let pruned = 0;
    for (const [key, { record, revision }] of [...this.watch.records()]) {
      const ended = record.state === 'resolved' || record.state === 'inactive';
      const captured = record.capture === undefined || record.capture.result !== undefined;
      if (!ended || !record.published || !captured || now - record.at < afterMs || fed(key)) continue;
      try {
        await this.kv.delete(key, { previousSeq: revision });
        pruned++;
      } catch {
        // changed meanwhile: it stays
      }
    }
    return pruned;
  }

  async #send(subject: string, event: object, msgID: string): Promise<void> {
    const ack = await this.js.publish(subject, encoder.encode(JSON.stringify(event)), { msgID });
    this.stats.published++;
    if (ack.duplicate) this.stats.duplicates++;
  }

  async #reread(key: string): Promise<void> {
    try {
      const e = await this.kv.get(key);
      if (e === null || e.operation !== 'PUT') return;
      const r = parseRecord(e.value);
      if (r !== undefined) this.watch.note(key, r, e.revision);
    } catch (error) {
      this.log.debug({ key, err: error }, 'reading an alert record failed');
    }
  }
}
