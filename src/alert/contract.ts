/**
 * The alerting contract on the bus, shared by the evaluator, the exporter's
 * gauge, the Alertmanager forwarder and the viewer's markers:
 * - events: one JSON AlertEvent per state transition (and one per incident
 *   capture) on `rezolus.alerts.<host>.<rule>` in stream REZOLUS_ALERTS,
 *   with a Nats-Msg-Id that makes a repeat a duplicate the server drops;
 * - state: one AlertRecord per alert in KV bucket `rezolus_alert_state`
 *   under `<host>.<rule>.<series>`, written with compare-and-set so that of
 *   two evaluators exactly one makes each transition.
 * Times are unix milliseconds in the KV record and ISO 8601 in events.
 */
import { createHash } from 'node:crypto';
import { CONTRACT } from '../bus/subjects.js';

export const ALERTS_PREFIX = `${CONTRACT.prefix}.alerts`;
export const ALERTS_STREAM = 'REZOLUS_ALERTS';
export const ALERT_STATE_BUCKET = 'rezolus_alert_state';

/** inactive has no event of its own: an alert that was never pending has no record either. */
export type AlertState = 'inactive' | 'pending' | 'firing' | 'resolved' | 'stale';

/** A rule name: one subject token, lower case. */
export const RULE_NAME = /^[a-z][a-z0-9_]{0,63}$/;

/** The series an alert is about: {} for a rule that sums its series, else the label values of one series. */
export type SeriesLabels = Readonly<Record<string, string>>;

/** `_` for a summed rule, else 12 hex digits of the labels (a subject and KV key token). */
export function seriesId(labels: SeriesLabels): string {
  const keys = Object.keys(labels).sort();
  if (keys.length === 0) return '_';
  const canonical = JSON.stringify(keys.map((k) => [k, labels[k]]));
  return createHash('sha256').update(canonical).digest('hex').slice(0, 12);
}

export function alertSubject(host: string, rule: string): string {
  return `${ALERTS_PREFIX}.${host}.${rule}`;
}

/** KV key of one alert. */
export function alertKey(host: string, rule: string, series: string): string {
  return `${host}.${rule}.${series}`;
}

/** What a capture of the incident window gave: a file, or why there is none. */
export interface CaptureResult {
  /** the Parquet file written, as the evaluator that wrote it sees the path */
  readonly file?: string;
  /** unix ms: the window written */
  readonly since: number;
  readonly until: number;
  /** rows and bytes of the file */
  readonly rows?: number;
  readonly bytes?: number;
  /** why no file was written */
  readonly error?: string;
}

export interface AlertCapture {
  readonly since: number;
  readonly until: number;
  /** the evaluator that writes it (another takes it over when it is overdue) */
  readonly owner: string;
  /** the episode it captures */
  readonly activeAt: number;
  readonly firedAt: number;
  readonly result?: CaptureResult | undefined;
}

/** The KV value of one alert (JSON). */
export interface AlertRecord {
  readonly v: 1;
  readonly rule: string;
  readonly host: string;
  readonly series: SeriesLabels;
  readonly state: AlertState;
  /** the state before the last transition */
  readonly previous: AlertState;
  /** transitions in this episode (since activeAt), from 1: two transitions to one state in one episode (firing, stale, firing) keep distinct ids */
  readonly seq: number;
  /** unix ms the condition became true (the start of this alert's episode) */
  readonly activeAt: number;
  readonly firedAt?: number | undefined;
  readonly resolvedAt?: number | undefined;
  readonly staleAt?: number | undefined;
  /** the measured value at the transition, in the metric's unit; null when there is none (missing data) */
  readonly value: number | null;
  readonly threshold: number;
  readonly unit: string;
  /** value and threshold as people read them (`1.2 ms`, `5ms`); absent in records of older evaluators */
  readonly valueText?: string | undefined;
  readonly thresholdText?: string | undefined;
  readonly severity: string;
  readonly labels: Readonly<Record<string, string>>;
  readonly summary: string;
  readonly runbook?: string | undefined;
  /** who made the transition */
  readonly evaluator: string;
  /** the fingerprint of the rule definition the writer judged with (rules.ts) */
  readonly ruleHash?: string | undefined;
  /** unix ms of the transition */
  readonly at: number;
  /** whether the transition's event was published (false: an evaluator still has to) */
  readonly published: boolean;
  /**
   * The incident capture after a firing: due at `until`, then its result. It
   * names its own episode (activeAt, firedAt): a record may move on to a new
   * episode before the capture of the last one is written.
   */
  readonly capture?: AlertCapture | undefined;
}

/** Common fields of every event. */
interface EventBase {
  readonly v: 1;
  readonly rule: string;
  readonly host: string;
  readonly series: SeriesLabels;
  readonly severity: string;
  readonly labels: Readonly<Record<string, string>>;
  readonly summary: string;
  readonly runbook?: string | undefined;
  readonly activeAt: string;
  readonly evaluator: string;
  /** ISO time of the event */
  readonly at: string;
}

export interface TransitionEvent extends EventBase {
  readonly kind: 'transition';
  readonly state: Exclude<AlertState, 'inactive'> | 'inactive';
  readonly previous: AlertState;
  readonly value: number | null;
  /** value and threshold as people read them (`1.2 ms`) */
  readonly valueText: string;
  readonly threshold: number;
  readonly thresholdText: string;
  readonly unit: string;
  readonly firedAt?: string | undefined;
  readonly resolvedAt?: string | undefined;
}

export interface CaptureEvent extends EventBase {
  readonly kind: 'capture';
  readonly firedAt?: string | undefined;
  readonly since: string;
  readonly until: string;
  /** the Parquet file, when written */
  readonly file?: string | undefined;
  readonly rows?: number | undefined;
  readonly bytes?: number | undefined;
  /** why nothing was written */
  readonly error?: string | undefined;
}

export type AlertEvent = TransitionEvent | CaptureEvent;

/** Nats-Msg-Id of a transition: the same transition published twice (two evaluators, a retry) is stored once. */
export function transitionMsgId(r: Pick<AlertRecord, 'host' | 'rule' | 'series' | 'activeAt' | 'seq' | 'state'>): string {
  return `${r.host}.${r.rule}.${seriesId(r.series)}.${r.activeAt}.${r.seq}.${r.state}`;
}

export function captureMsgId(r: Pick<AlertRecord, 'host' | 'rule' | 'series'>, c: Pick<AlertCapture, 'activeAt'>): string {
  return `${r.host}.${r.rule}.${seriesId(r.series)}.${c.activeAt}.capture`;
}

const iso = (ms: number | undefined): string | undefined => (ms === undefined ? undefined : new Date(ms).toISOString());

function base(r: AlertRecord): EventBase {
  return {
    v: 1, rule: r.rule, host: r.host, series: r.series, severity: r.severity, labels: r.labels, summary: r.summary,
    ...(r.runbook === undefined ? {} : { runbook: r.runbook }),
    activeAt: new Date(r.activeAt).toISOString(), evaluator: r.evaluator, at: new Date(r.at).toISOString(),
  };
}

/** The event of a record's last transition. */
export function transitionEvent(r: AlertRecord, valueText: string, thresholdText: string): TransitionEvent {
  return {
    ...base(r), kind: 'transition', state: r.state, previous: r.previous, value: r.value, valueText,
    threshold: r.threshold, thresholdText, unit: r.unit, firedAt: iso(r.firedAt), resolvedAt: iso(r.resolvedAt),
  };
}

/** The event of a capture's result; the alert fields are the captured episode's. */
export function captureEvent(r: AlertRecord, episode: Pick<AlertCapture, 'activeAt' | 'firedAt'>, c: CaptureResult, at: number, evaluator: string): CaptureEvent {
  return {
    ...base(r), activeAt: new Date(episode.activeAt).toISOString(), at: new Date(at).toISOString(), evaluator, kind: 'capture', firedAt: iso(episode.firedAt),
    since: new Date(c.since).toISOString(), until: new Date(c.until).toISOString(),
    ...(c.file === undefined ? {} : { file: c.file, rows: c.rows, bytes: c.bytes }),
    ...(c.error === undefined ? {} : { error: c.error }),
  };
}

/** A host token as subjects carry it: also a path segment of incident files, so nothing else is accepted from a record. */
const HOST_TOKEN = /^[a-z0-9_-]{1,128}$/;
const STATES: readonly string[] = ['inactive', 'pending', 'firing', 'resolved', 'stale'];
/** unix ms that Date can print (toISOString throws beyond ±8.64e15) */
const isTime = (x: unknown): x is number => typeof x === 'number' && Number.isFinite(x) && x >= 0 && x <= 8.64e15;
const isOptTime = (x: unknown): boolean => x === undefined || isTime(x);
const isStr = (x: unknown, max = 65_536): x is string => typeof x === 'string' && x.length <= max;
const isOptStr = (x: unknown): boolean => x === undefined || isStr(x);
const isStringMap = (x: unknown): boolean =>
  typeof x === 'object' && x !== null && !Array.isArray(x) && Object.keys(x).length <= 256 && Object.entries(x).every(([k, v]) => k !== '__proto__' && isStr(k, 256) && isStr(v));

function isCapture(c: unknown): boolean {
  if (c === undefined) return true;
  if (typeof c !== 'object' || c === null) return false;
  const x = c as Record<string, unknown>;
  if (!isTime(x.since) || !isTime(x.until) || !isTime(x.activeAt) || !isTime(x.firedAt) || !isStr(x.owner, 512)) return false;
  if (x.result === undefined) return true;
  if (typeof x.result !== 'object' || x.result === null) return false;
  const r = x.result as Record<string, unknown>;
  return isTime(r.since) && isTime(r.until) && isOptStr(r.file) && isOptStr(r.error) && (r.rows === undefined || typeof r.rows === 'number') && (r.bytes === undefined || typeof r.bytes === 'number');
}

/**
 * Parses a KV value; undefined when it is not a record of this layout (a
 * hand-written, foreign or hostile key): every field the evaluator, the
 * forwarder and the exporter use is checked, and host and rule must be
 * subject tokens, since they name files and subjects.
 */
export function parseRecord(data: Uint8Array): AlertRecord | undefined {
  let r: Record<string, unknown>;
  try {
    const parsed: unknown = JSON.parse(new TextDecoder().decode(data));
    if (typeof parsed !== 'object' || parsed === null || Array.isArray(parsed)) return undefined;
    r = parsed as Record<string, unknown>;
  } catch {
    return undefined;
  }
  const ok =
    r.v === 1 &&
    isStr(r.rule) && RULE_NAME.test(r.rule) &&
    isStr(r.host) && HOST_TOKEN.test(r.host) &&
    isStringMap(r.series) &&
    isStr(r.state) && STATES.includes(r.state) &&
    isStr(r.previous) && STATES.includes(r.previous) &&
    typeof r.seq === 'number' && Number.isSafeInteger(r.seq) && r.seq >= 0 &&
    isTime(r.activeAt) && isOptTime(r.firedAt) && isOptTime(r.resolvedAt) && isOptTime(r.staleAt) && isTime(r.at) &&
    (r.value === null || (typeof r.value === 'number' && Number.isFinite(r.value))) &&
    typeof r.threshold === 'number' && Number.isFinite(r.threshold) &&
    isStr(r.unit, 64) && isOptStr(r.valueText) && isOptStr(r.thresholdText) &&
    isStr(r.severity, 256) && isStringMap(r.labels) && isStr(r.summary) && isOptStr(r.runbook) &&
    isStr(r.evaluator, 512) && isOptStr(r.ruleHash) && typeof r.published === 'boolean' && isCapture(r.capture);
  return ok ? (r as unknown as AlertRecord) : undefined;
}
