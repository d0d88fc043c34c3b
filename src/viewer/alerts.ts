/**
 * Alert events for the viewer's markers: an event from REZOLUS_ALERTS
 * checked and cut down to an AlertMark (anyone allowed to publish on
 * `rezolus.alerts.>` can send anything: sizes are bounded, junk is dropped,
 * nothing of the JSON is copied as it came), and AlertLog, the bounded list
 * of the window's events the API answers from. Pure.
 */
import { ALERTS_PREFIX, RULE_NAME } from '../alert/contract.js';
import type { AlertMark, AlertMarkState, AlertsResult } from './api.js';
import { AHEAD_MS } from './frames.js';

/** An event larger than this is not one of the evaluator's (a few hundred bytes, more with many labels). */
export const ALERT_EVENT_MAX_BYTES = 16 * 1024;
/** Events held per host and in all: a publisher inventing events pushes out its own host's oldest first. */
export const ALERTS_PER_HOST = 2000;
export const ALERTS_TOTAL = 20_000;
/** Hosts with events held at most (as many as the fleet page lists). */
export const ALERT_HOSTS = 10_000;
/** Events one answer holds at most (the newest of the range). */
export const ALERTS_ANSWER_MAX = 2000;

const STATES: readonly AlertMarkState[] = ['pending', 'firing', 'resolved', 'stale', 'inactive'];
/** a host token (bus/subjects.ts hostToken) */
const HOST_TOKEN = /^[a-z0-9_-]{1,253}$/;
/** a series label: a Prometheus label name, never a name an object has already (`__proto__`, `constructor`) */
const LABEL_NAME = /^[A-Za-z_][A-Za-z0-9_]{0,127}$/;
const RESERVED = new Set(['__proto__', 'constructor', 'prototype']);
const MAX_LABELS = 32;
const LIMITS = { label: 256, severity: 32, valueText: 64, summary: 1000, file: 1024, error: 1000, iso: 40 } as const;

type Json = Record<string, unknown>;

const isObject = (v: unknown): v is Json => typeof v === 'object' && v !== null && !Array.isArray(v);

/** a string cut to `max` characters (…), undefined when `v` is not a string */
function text(v: unknown, max: number): string | undefined {
  if (typeof v !== 'string') return undefined;
  return v.length <= max ? v : `${v.slice(0, max - 1)}…`;
}

/** an ISO 8601 time as unix ms, undefined when it is not one */
function isoMs(v: unknown): number | undefined {
  if (typeof v !== 'string' || v.length > LIMITS.iso) return undefined;
  const ms = Date.parse(v);
  return Number.isFinite(ms) && ms >= 0 ? ms : undefined;
}

const state = (v: unknown): AlertMarkState | undefined => (STATES as readonly unknown[]).includes(v) ? (v as AlertMarkState) : undefined;

/** The series labels, copied into an object without a prototype; undefined for anything but a small map of strings. */
function series(v: unknown): Record<string, string> | undefined {
  if (v === undefined) return Object.create(null) as Record<string, string>;
  if (!isObject(v)) return undefined;
  const entries = Object.entries(v);
  if (entries.length > MAX_LABELS) return undefined;
  const out = Object.create(null) as Record<string, string>;
  for (const [k, value] of entries) {
    if (!LABEL_NAME.test(k) || RESERVED.has(k) || typeof value !== 'string') return undefined;
    out[k] = text(value, LIMITS.label) as string;
  }
  return out;
}

/** The host and rule tokens of `rezolus.alerts.<host>.<rule>`; undefined for any other subject. */
export function alertSubjectParts(subject: string): { host: string; rule: string } | undefined {
  if (!subject.startsWith(`${ALERTS_PREFIX}.`)) return undefined;
  const rest = subject.slice(ALERTS_PREFIX.length + 1).split('.');
  if (rest.length !== 2) return undefined;
  const [host = '', rule = ''] = rest;
  return HOST_TOKEN.test(host) && RULE_NAME.test(rule) ? { host, rule } : undefined;
}

/**
 * One message of REZOLUS_ALERTS as an AlertMark, or undefined when it is not
 * an alert event of this layout: too large, not JSON, another version, a
 * host or rule other than its subject's (so nobody files an event under
 * another host's page by its body), a time that is not one or is more than
 * AHEAD_MS ahead of `nowMs`, a field of the wrong type.
 */
export function parseAlertEvent(subject: string, data: Uint8Array, nowMs: number): AlertMark | undefined {
  const where = alertSubjectParts(subject);
  if (where === undefined || data.length > ALERT_EVENT_MAX_BYTES) return undefined;
  let e: unknown;
  try {
    e = JSON.parse(new TextDecoder('utf-8', { fatal: true }).decode(data));
  } catch {
    return undefined;
  }
  if (!isObject(e) || e.v !== 1 || e.host !== where.host || e.rule !== where.rule) return undefined;
  if (e.kind !== 'transition' && e.kind !== 'capture') return undefined;
  const at = isoMs(e.at);
  const activeAt = isoMs(e.activeAt);
  if (at === undefined || activeAt === undefined || at > nowMs + AHEAD_MS) return undefined;
  const labels = series(e.series);
  const severity = e.severity === undefined ? '' : text(e.severity, LIMITS.severity);
  const summary = e.summary === undefined ? '' : text(e.summary, LIMITS.summary);
  if (labels === undefined || severity === undefined || summary === undefined) return undefined;
  const common = { at, host: where.host, rule: where.rule, severity, series: labels, summary, activeAt };
  if (e.kind === 'capture') {
    const file = e.file === undefined ? undefined : text(e.file, LIMITS.file);
    const error = e.error === undefined ? undefined : text(e.error, LIMITS.error);
    if ((e.file !== undefined && file === undefined) || (e.error !== undefined && error === undefined)) return undefined;
    return {
      ...common, kind: 'capture', state: null, previous: null, value: null, valueText: '', thresholdText: '',
      ...(file === undefined ? {} : { file }),
      ...(error === undefined ? {} : { error }),
    };
  }
  const to = state(e.state);
  const previous = e.previous === undefined ? null : (state(e.previous) ?? undefined);
  const value = e.value === null || e.value === undefined ? null : typeof e.value === 'number' && Number.isFinite(e.value) ? e.value : undefined;
  const valueText = e.valueText === undefined ? '' : text(e.valueText, LIMITS.valueText);
  const thresholdText = e.thresholdText === undefined ? '' : text(e.thresholdText, LIMITS.valueText);
  if (to === undefined || previous === undefined || value === undefined || valueText === undefined || thresholdText === undefined) return undefined;
  return { ...common, kind: 'transition', state: to, previous, value, valueText, thresholdText };
}

/** One alert of a host: its rule and series. */
function alertOf(m: AlertMark): string {
  return `${m.rule}\n${JSON.stringify(Object.keys(m.series).sort().map((k) => [k, m.series[k]]))}`;
}

/** What makes an event the same event (read twice: the feed started again from its last time). */
function eventKey(m: AlertMark): string {
  return `${m.host}\n${alertOf(m)}\n${m.at}\n${m.activeAt}\n${m.kind}\n${m.state ?? ''}`;
}

interface Held {
  readonly mark: AlertMark;
  readonly key: string;
}

/** The index in `list` (sorted by at) where an event at `at` goes: after those at the same time. */
function insertAt(list: readonly Held[], at: number): number {
  let lo = 0;
  let hi = list.length;
  while (lo < hi) {
    const mid = (lo + hi) >>> 1;
    if ((list[mid] as Held).mark.at <= at) lo = mid + 1;
    else hi = mid;
  }
  return lo;
}

/** The first index in `list` whose event is at or after `at`. */
function firstFrom(list: readonly Held[], at: number): number {
  let lo = 0;
  let hi = list.length;
  while (lo < hi) {
    const mid = (lo + hi) >>> 1;
    if ((list[mid] as Held).mark.at < at) lo = mid + 1;
    else hi = mid;
  }
  return lo;
}

export interface AlertLogLimits {
  readonly perHost: number;
  readonly total: number;
  readonly hosts: number;
}

/**
 * The alert events of the last `keepMs`, per host in time order, each once;
 * at most `limits.perHost` per host (its oldest go first), `limits.total` in
 * all (the oldest of all go first) and `limits.hosts` hosts (a new host's
 * events are refused while that many have events).
 */
export class AlertLog {
  readonly #hosts = new Map<string, Held[]>();
  readonly #keys = new Set<string>();
  #total = 0;
  /** events refused: a host beyond the bound, or older than the window */
  refused = 0;

  constructor(
    private keepMs: number,
    private readonly limits: AlertLogLimits = { perHost: ALERTS_PER_HOST, total: ALERTS_TOTAL, hosts: ALERT_HOSTS },
  ) {}

  get size(): number {
    return this.#total;
  }

  setKeep(ms: number): void {
    this.keepMs = ms;
  }

  /** Takes an event; false when it is held already, older than the window, or of a host beyond the bound. */
  add(mark: AlertMark, nowMs: number = Date.now()): boolean {
    if (mark.at < nowMs - this.keepMs) {
      this.refused++;
      return false;
    }
    const key = eventKey(mark);
    if (this.#keys.has(key)) return false;
    let list = this.#hosts.get(mark.host);
    if (list === undefined) {
      if (this.#hosts.size >= this.limits.hosts) {
        this.refused++;
        return false;
      }
      list = [];
      this.#hosts.set(mark.host, list);
    }
    list.splice(insertAt(list, mark.at), 0, { mark, key });
    this.#keys.add(key);
    this.#total++;
    if (list.length > this.limits.perHost) this.#drop(mark.host, list, list.length - this.limits.perHost);
    // compacted to 90 %: the sort runs once per tenth of the bound of new events
    if (this.#total > this.limits.total) this.#dropOldest(this.#total - Math.floor(this.limits.total * 0.9));
    return true;
  }

  /** Drops the events older than the window. */
  trim(nowMs: number): void {
    const before = nowMs - this.keepMs;
    for (const [host, list] of this.#hosts) this.#drop(host, list, firstFrom(list, before));
  }

  /** The events with from ≤ at ≤ to of `host` (undefined: every host), oldest first; the newest `max` of them. */
  range(host: string | undefined, from: number, to: number, max: number = ALERTS_ANSWER_MAX): Pick<AlertsResult, 'events' | 'omitted'> {
    const lists = host === undefined ? [...this.#hosts.values()] : [this.#hosts.get(host) ?? []];
    let events: AlertMark[] = [];
    for (const list of lists) {
      const end = insertAt(list, to);
      for (let i = firstFrom(list, from); i < end; i++) events.push((list[i] as Held).mark);
    }
    if (lists.length > 1) events.sort((a, b) => a.at - b.at);
    const omitted = Math.max(0, events.length - max);
    if (omitted > 0) events = events.slice(omitted);
    return omitted > 0 ? { events, omitted } : { events };
  }

  /** Alerts of `host` whose newest transition held is `firing`. */
  firing(host: string): number {
    const last = new Map<string, AlertMarkState>();
    for (const { mark } of this.#hosts.get(host) ?? []) if (mark.kind === 'transition' && mark.state !== null) last.set(alertOf(mark), mark.state);
    let n = 0;
    for (const s of last.values()) if (s === 'firing') n++;
    return n;
  }

  /** hosts with events held */
  hosts(): string[] {
    return [...this.#hosts.keys()].sort();
  }

  #drop(host: string, list: Held[], count: number): void {
    if (count <= 0) return;
    for (const h of list.splice(0, count)) this.#keys.delete(h.key);
    this.#total -= count;
    if (list.length === 0) this.#hosts.delete(host);
  }

  /** Drops the `count` oldest events of all hosts. */
  #dropOldest(count: number): void {
    const all: Held[] = [];
    for (const list of this.#hosts.values()) all.push(...list);
    all.sort((a, b) => a.mark.at - b.mark.at);
    const gone = new Set(all.slice(0, count));
    for (const [host, list] of this.#hosts) {
      const rest = list.filter((h) => !gone.has(h));
      const removed = list.length - rest.length;
      if (removed === 0) continue;
      for (const h of list) if (gone.has(h)) this.#keys.delete(h.key);
      this.#total -= removed;
      if (rest.length === 0) this.#hosts.delete(host);
      else this.#hosts.set(host, rest);
    }
  }
}
