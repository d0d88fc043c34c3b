/**
 * Forwards alerts to Alertmanager (`POST /api/v2/alerts`), the way a
 * Prometheus server does: it follows the alert state bucket through an
 * AlertStateWatch (records written by any evaluator) and posts
 * - a `firing` record as a firing alert, startsAt = firedAt;
 * - a `resolved` record (and a deleted key, or a record that left firing
 *   any other way) as a resolved alert, endsAt = resolvedAt;
 * - a `stale` record whose episode had fired as still firing, with a
 *   `stale_since` annotation: stale means the evaluator cannot see the
 *   host, not that the condition cleared, and the design never resolves
 *   silently. The data coming back makes it firing or resolved; a host that
 *   is gone for good has its own "host gone silent" rule.
 * - nothing for `pending` (Prometheus does not send pending alerts either),
 *   nor for a stale or resolved record whose episode never fired.
 *
 * Alertmanager forgets an alert that is not re-sent: firing alerts are
 * posted again every `resendMs`, each with endsAt = now + 4 × resendMs (at
 * least a minute), Prometheus's rule, so that the alert resolves by itself
 * when every forwarder is gone, whatever the Alertmanager's resolve_timeout
 * (one shorter than resendMs would otherwise make alerts flap). Resolved
 * alerts are re-sent each round for `resolvedRetainMs` (15 min, as
 * Prometheus) after they resolved, then dropped.
 *
 * A change is posted at once (only the alerts that changed); each round
 * posts everything, at most `maxBatch` alerts and ~1 MiB per POST. Each URL
 * is one Alertmanager (an HA pair or more gets every alert: Alertmanager's
 * gossip does not forward alerts) with its own queue, so a slow or dead one
 * delays nobody else. A failing Alertmanager (refused, timeout, an HTTP
 * error) is logged once per outage with the cause, tried again on the next
 * round (not on each change), and logged again when it answers.
 *
 * Two evaluators each running a forwarder is fine: both follow the same
 * bucket and post the same labels and startsAt, and Alertmanager keeps one
 * alert per label set (its fingerprint) and notifies once per group. A
 * forwarder whose watch lags the other's by a moment can re-post an alert as
 * firing just after the other posted it resolved; its watch brings the
 * resolution a moment later and it posts that at once, well within
 * Alertmanager's group_wait / group_interval.
 *
 * Memory: one entry per firing alert (the watch holds every record anyway)
 * and at most MAX_RESOLVED resolved ones, oldest dropped first.
 */
import { fetchFailure } from '../errors.js';
import type { Logger } from 'pino';
import type { AlertRecord } from './contract.js';
import type { AlertStateWatch, WatchedRecord } from './state-watch.js';

export interface AlertmanagerOptions {
  /**
   * Base URL of each Alertmanager: `http://am:9093`, a path prefix allowed
   * (`https://host/alertmanager`); `/api/v2/alerts` is appended unless the
   * URL ends with it. `user:password@` becomes basic auth.
   */
  readonly urls: readonly string[];
  /** firing alerts (and resolved ones still retained) are posted again this often; default 60 000 (Prometheus's resend delay) */
  readonly resendMs?: number;
  /** one POST's deadline; default 10 000 */
  readonly timeoutMs?: number;
  /** each alert's generatorURL (the viewer, say); `{host}` and `{rule}` are replaced, URL-encoded */
  readonly generatorUrl?: string | undefined;
  /** resolved alerts are posted again each round until this long after they resolved; default 15 min */
  readonly resolvedRetainMs?: number;
  /** alerts per POST; default 256 */
  readonly maxBatch?: number;
}

export const ALERTMANAGER_DEFAULTS = {
  resendMs: 60_000,
  timeoutMs: 10_000,
  resolvedRetainMs: 15 * 60_000,
  maxBatch: 256,
} as const;

/** A POST body is cut before it passes this many bytes (one larger alert still goes alone). */
const MAX_BATCH_BYTES = 1024 * 1024;
/** Resolved alerts kept for re-sending; beyond it the oldest are dropped. */
export const MAX_RESOLVED = 10_000;
/** Changes within this are posted together (the initial load, a burst of transitions). */
const COALESCE_MS = 20;
/** Of an Alertmanager's error body, this much goes to the log. */
const BODY_CHARS = 300;
/** A firing alert's endsAt is at least this far ahead (a loaded machine may post a round late). */
const MIN_VALID_MS = 60_000;
const API_PATH = '/api/v2/alerts';

/** One alert as `POST /api/v2/alerts` takes it. */
export interface PostableAlert {
  readonly labels: Readonly<Record<string, string>>;
  readonly annotations: Readonly<Record<string, string>>;
  readonly startsAt: string;
  readonly endsAt?: string;
  readonly generatorURL?: string;
}

/** How one Alertmanager is doing, for logs and self-metrics. */
export interface AlertmanagerTargetStatus {
  /** the URL posted to, without credentials */
  readonly url: string;
  /** undefined until the first POST ended */
  readonly up: boolean | undefined;
  /** POSTs accepted (2xx) and failed */
  readonly posts: number;
  readonly failures: number;
  /** alerts in accepted POSTs */
  readonly alertsSent: number;
  /** the last failure's cause */
  readonly lastError?: string | undefined;
  /** unix ms the current outage began */
  readonly downSince?: number | undefined;
}

export interface AlertmanagerStatus {
  readonly firing: number;
  readonly resolved: number;
  readonly targets: readonly AlertmanagerTargetStatus[];
}

/** `[a-zA-Z_][a-zA-Z0-9_]*`, as Prometheus label names: other characters become `_`, a leading digit gets `_` before it. */
export function sanitizeLabelName(name: string): string {
  const s = name.replace(/[^a-zA-Z0-9_]/g, '_');
  return s === '' ? '_' : /^[0-9]/.test(s) ? `_${s}` : s;
}

/**
 * The labels of a record's alert: alertname (the rule), host, severity, the
 * rule's labels, then the series' labels. A later label whose name is taken
 * by a different value is kept as `exported_<name>` (Prometheus's rule for a
 * scraped label that collides), so that distinct series stay distinct
 * alerts and alertname and host cannot be overridden. Empty values are left
 * out (Prometheus treats them as absent).
 */
export function alertmanagerLabels(r: Pick<AlertRecord, 'rule' | 'host' | 'severity' | 'labels' | 'series'>): Record<string, string> {
  const out = new Map<string, string>();
  const put = (name: string, raw: unknown): void => {
    const value = String(raw ?? '');
    if (value === '') return;
    let n = sanitizeLabelName(name);
    while (out.has(n) && out.get(n) !== value) n = `exported_${n}`;
    out.set(n, value);
  };
  put('alertname', r.rule);
  put('host', r.host);
  put('severity', r.severity);
  for (const [k, v] of Object.entries(r.labels ?? {})) put(k, v);
  for (const [k, v] of Object.entries(r.series ?? {})) put(k, v);
  return Object.fromEntries(out);
}

/** Whether the record's episode (since activeAt) fired and has not resolved since. */
function firedAndNotResolved(r: AlertRecord): boolean {
  if (r.firedAt === undefined || r.firedAt < r.activeAt) return false;
  return r.resolvedAt === undefined || r.resolvedAt < r.firedAt;
}

/** What Alertmanager should hear of a record: a firing alert, a resolved one, or nothing. */
type Desired =
  | { readonly kind: 'firing'; readonly alert: Alert }
  | { readonly kind: 'resolved'; readonly alert: Alert; readonly endsAt: number }
  | undefined;

interface Alert {
  /** identity: the sorted labels */
  readonly fp: string;
  readonly labels: Record<string, string>;
  readonly annotations: Record<string, string>;
  /** unix ms */
  readonly startsAt: number;
  readonly generatorURL?: string | undefined;
}

interface Entry extends Alert {
  /** set when resolved: posted with this endsAt until it is past retention */
  readonly resolvedAt?: number | undefined;
}

function fingerprint(labels: Record<string, string>): string {
  return JSON.stringify(Object.keys(labels).sort().map((k) => [k, labels[k]]));
}

function sameAlert(a: Entry, b: Entry): boolean {
  return a.startsAt === b.startsAt && a.resolvedAt === b.resolvedAt && a.generatorURL === b.generatorURL && JSON.stringify(a.annotations) === JSON.stringify(b.annotations);
}

interface Target {
  /** where to POST (no credentials in it) */
  readonly url: string;
  readonly headers: Readonly<Record<string, string>>;
  /** alerts changed since they were last posted here */
  readonly dirty: Set<string>;
  /** the next POSTs carry every alert (a round) */
  full: boolean;
  busy: Promise<void> | undefined;
  up: boolean | undefined;
  downSince: number | undefined;
  lastError: string | undefined;
  posts: number;
  failures: number;
  alertsSent: number;
}

function target(raw: string): Target {
  let u: URL;
  try {
    u = new URL(raw);
  } catch {
    throw new Error(`alertmanager URL ${JSON.stringify(raw)} is not a URL (e.g. http://127.0.0.1:9093)`);
  }
  if (u.protocol !== 'http:' && u.protocol !== 'https:') throw new Error(`alertmanager URL ${JSON.stringify(raw)}: only http and https`);
  const headers: Record<string, string> = { 'content-type': 'application/json' };
  if (u.username !== '' || u.password !== '') {
    // fetch refuses URLs with credentials; and they stay out of the logs
    const user = decodeURIComponent(u.username);
    const password = decodeURIComponent(u.password);
    headers['authorization'] = `Basic ${Buffer.from(`${user}:${password}`).toString('base64')}`;
    u.username = '';
    u.password = '';
  }
  u.hash = '';
  const path = u.pathname.replace(/\/+$/, '');
  u.pathname = path.endsWith(API_PATH) ? path : `${path}${API_PATH}`;
  return {
    url: u.toString(), headers, dirty: new Set(), full: false, busy: undefined,
    up: undefined, downSince: undefined, lastError: undefined, posts: 0, failures: 0, alertsSent: 0,
  };
}

export class AlertmanagerForwarder {
  readonly #resendMs: number;
  readonly #timeoutMs: number;
  readonly #retainMs: number;
  readonly #maxBatch: number;
  readonly #generatorUrl: string | undefined;
  readonly #targets: Target[];
  /** by fingerprint: every alert being posted, firing and retained resolved */
  readonly #alerts = new Map<string, Entry>();
  /** the resolved ones' fingerprints, oldest first, and when they resolved */
  readonly #resolved = new Map<string, number>();
  /** KV key → fingerprint of the firing alert posted for it */
  readonly #byKey = new Map<string, string>();
  readonly #abort = new AbortController();
  #round: NodeJS.Timeout | undefined;
  #soon: NodeJS.Timeout | undefined;
  #listening = false;
  #stopped = false;
  #warnedEvict = false;

  constructor(
    options: AlertmanagerOptions,
    private readonly watch: AlertStateWatch,
    private readonly log: Logger,
  ) {
    if (options.urls.length === 0) throw new Error('alertmanager: no URL given');
    this.#targets = options.urls.map(target);
    this.#resendMs = positive('resendMs', options.resendMs ?? ALERTMANAGER_DEFAULTS.resendMs);
    this.#timeoutMs = positive('timeoutMs', options.timeoutMs ?? ALERTMANAGER_DEFAULTS.timeoutMs);
    this.#retainMs = positive('resolvedRetainMs', options.resolvedRetainMs ?? ALERTMANAGER_DEFAULTS.resolvedRetainMs);
    this.#maxBatch = Math.max(1, Math.floor(positive('maxBatch', options.maxBatch ?? ALERTMANAGER_DEFAULTS.maxBatch)));
    this.#generatorUrl = options.generatorUrl;
    if (this.#generatorUrl !== undefined && !URL.canParse(this.#generatorUrl.replaceAll('{host}', 'h').replaceAll('{rule}', 'r'))) {
      throw new Error(`alertmanager: generatorUrl ${JSON.stringify(this.#generatorUrl)} is not a URL`);
    }
  }

  /** Takes the watch's records (now and as they change) and starts the resend rounds. The watch may be started before or after. */
  start(): void {
    if (this.#listening || this.#stopped) return;
    this.#listening = true;
    this.watch.onChange((key, now) => {
      try {
        this.#take(key, now);
      } catch (error) {
        // the watch calls listeners of a deleted key without a guard
        this.log.error({ err: error, key }, 'alertmanager forwarder: record not taken');
      }
    });
    for (const [key, now] of this.watch.records()) this.#take(key, now);
    this.#round = setInterval(() => this.#resendAll(), this.#resendMs);
    this.#round.unref();
    this.log.info({ alertmanagers: this.#targets.map((t) => t.url), resend_ms: this.#resendMs }, 'forwarding alerts to alertmanager');
  }

  /** Stops the rounds, aborts POSTs in flight and waits for them; nothing is posted after. */
  async stop(): Promise<void> {
    this.#stopped = true;
    clearInterval(this.#round);
    clearTimeout(this.#soon);
    this.#abort.abort();
    await Promise.all(this.#targets.map((t) => t.busy));
  }

  status(): AlertmanagerStatus {
    return {
      firing: this.#alerts.size - this.#resolved.size,
      resolved: this.#resolved.size,
      targets: this.#targets.map((t) => ({
        url: t.url, up: t.up, posts: t.posts, failures: t.failures, alertsSent: t.alertsSent, lastError: t.lastError, downSince: t.downSince,
      })),
    };
  }

  #desired(r: AlertRecord): Desired {
    switch (r.state) {
      case 'firing':
        return { kind: 'firing', alert: this.#alert(r, r.firedAt ?? r.at, false) };
      case 'stale':
        return firedAndNotResolved(r) ? { kind: 'firing', alert: this.#alert(r, r.firedAt ?? r.at, true) } : undefined;
      case 'resolved':
        if (r.firedAt === undefined || r.firedAt < r.activeAt) return undefined; // resolved without firing: never posted
        return { kind: 'resolved', alert: this.#alert(r, r.firedAt, false), endsAt: r.resolvedAt ?? r.at };
      default:
        return undefined;
    }
  }

  #alert(r: AlertRecord, startsAt: number, stale: boolean): Alert {
    const labels = alertmanagerLabels(r);
    const annotations: Record<string, string> = { summary: r.summary, threshold: r.thresholdText ?? String(r.threshold) };
    if (r.value !== null && r.value !== undefined) annotations['value'] = r.valueText ?? String(r.value);
    if (r.runbook !== undefined && r.runbook !== '') annotations['runbook_url'] = r.runbook;
    if (stale) annotations['stale_since'] = new Date(r.staleAt ?? r.at).toISOString();
    const file = r.capture?.result?.file;
    if (file !== undefined) annotations['incident_file'] = file;
    const generatorURL = this.#generatorUrl?.replaceAll('{host}', encodeURIComponent(r.host)).replaceAll('{rule}', encodeURIComponent(r.rule));
    return { fp: fingerprint(labels), labels, annotations, startsAt, generatorURL };
  }

  #take(key: string, now: WatchedRecord | undefined): void {
    if (this.#stopped) return;
    const held = this.#byKey.get(key);
    const want = now === undefined ? undefined : this.#desired(now.record);
    if (want?.kind === 'firing') {
      if (held !== undefined && held !== want.alert.fp) this.#resolve(held, Date.now());
      this.#byKey.set(key, want.alert.fp);
      this.#set({ ...want.alert, resolvedAt: undefined });
      return;
    }
    this.#byKey.delete(key);
    if (want?.kind === 'resolved') {
      if (held !== undefined && held !== want.alert.fp) this.#resolve(held, want.endsAt);
      // a forwarder started long after the resolution has nothing to tell
      if (held !== undefined || want.endsAt + this.#retainMs > Date.now()) this.#set({ ...want.alert, resolvedAt: Math.max(want.endsAt, want.alert.startsAt) });
      return;
    }
    // pending, inactive, stale before firing, deleted: an alert posted as firing has ended
    if (held !== undefined) this.#resolve(held, Math.min(now?.record.at ?? Date.now(), Date.now()));
  }

  #resolve(fp: string, at: number): void {
    const e = this.#alerts.get(fp);
    if (e === undefined || e.resolvedAt !== undefined) return;
    this.#set({ ...e, resolvedAt: Math.max(at, e.startsAt) });
  }

  #set(e: Entry): void {
    const had = this.#alerts.get(e.fp);
    if (had !== undefined && sameAlert(had, e)) return;
    this.#alerts.set(e.fp, e);
    this.#resolved.delete(e.fp);
    if (e.resolvedAt !== undefined) {
      this.#resolved.set(e.fp, e.resolvedAt);
      this.#evict();
    }
    for (const t of this.#targets) t.dirty.add(e.fp);
    this.#postSoon();
  }

  #evict(): void {
    if (this.#resolved.size <= MAX_RESOLVED) return;
    if (!this.#warnedEvict) {
      this.#warnedEvict = true;
      this.log.warn({ max: MAX_RESOLVED }, 'alertmanager forwarder: too many resolved alerts to re-send; dropping the oldest');
    }
    for (const fp of this.#resolved.keys()) {
      if (this.#resolved.size <= MAX_RESOLVED) break;
      this.#resolved.delete(fp);
      this.#alerts.delete(fp);
    }
  }

  #postSoon(): void {
    if (this.#soon !== undefined || this.#stopped || !this.#listening) return;
    this.#soon = setTimeout(() => {
      this.#soon = undefined;
      // a down Alertmanager waits for the next round
      for (const t of this.#targets) if (t.up !== false) this.#drive(t);
    }, COALESCE_MS);
  }

  #resendAll(): void {
    const now = Date.now();
    for (const [fp, at] of this.#resolved) {
      if (at + this.#retainMs > now) continue;
      this.#resolved.delete(fp);
      this.#alerts.delete(fp);
    }
    for (const t of this.#targets) {
      t.full = true;
      this.#drive(t);
    }
  }

  /** Posts what this Alertmanager is due, one POST at a time; stops at the first failure (the next round tries again). */
  #drive(t: Target): void {
    if (t.busy !== undefined || this.#stopped) return;
    t.busy = (async () => {
      while (!this.#stopped) {
        const fps = t.full ? [...this.#alerts.keys()] : [...t.dirty];
        t.full = false;
        t.dirty.clear();
        if (fps.length === 0) return;
        if (!(await this.#post(t, fps))) return;
      }
    })()
      .catch((error: unknown) => this.log.error({ err: error, alertmanager: t.url }, 'alertmanager forwarder: posting failed'))
      .finally(() => {
        t.busy = undefined;
      });
  }

  async #post(t: Target, fps: readonly string[]): Promise<boolean> {
    const now = Date.now();
    const batches: string[][] = [];
    let batch: string[] = [];
    let bytes = 0;
    for (const fp of fps) {
      const e = this.#alerts.get(fp);
      if (e === undefined) continue; // dropped meanwhile
      let json: string;
      try {
        json = JSON.stringify(this.#body(e, now));
      } catch (error) {
        // one alert that cannot be written (a date out of range) must not hold back the others
        this.log.warn({ alertmanager: t.url, err: error, labels: e.labels }, 'an alert could not be encoded for Alertmanager; left out');
        this.#alerts.delete(fp);
        continue;
      }
      const size = Buffer.byteLength(json) + 1;
      if (batch.length > 0 && (batch.length >= this.#maxBatch || bytes + size > MAX_BATCH_BYTES)) {
        batches.push(batch);
        batch = [];
        bytes = 0;
      }
      batch.push(json);
      bytes += size;
    }
    if (batch.length > 0) batches.push(batch);
    for (const b of batches) {
      const failure = await this.#send(t, `[${b.join(',')}]`);
      if (failure !== undefined) {
        this.#down(t, failure, b.length);
        return false;
      }
      t.posts++;
      t.alertsSent += b.length;
      if (t.up === false) this.log.info({ alertmanager: t.url, down_ms: Date.now() - (t.downSince ?? Date.now()) }, 'alertmanager answers again; alerts posted');
      t.up = true;
      t.downSince = undefined;
    }
    return true;
  }

  /** One POST; undefined when accepted, else why not. */
  async #send(t: Target, body: string): Promise<string | undefined> {
    // one controller and a plain timer that holds it: in Node 20 a signal made by AbortSignal.any()
    // over AbortSignal.timeout() never fires once a GC ran meanwhile (seen here: a POST to a server
    // that never answers hung on; reproduced with node --expose-gc on 20.20), leaving this Alertmanager's queue stuck
    const ac = new AbortController();
    const timer = setTimeout(() => ac.abort(new DOMException(`no answer within ${this.#timeoutMs} ms`, 'TimeoutError')), this.#timeoutMs);
    const onStop = (): void => ac.abort();
    this.#abort.signal.addEventListener('abort', onStop, { once: true });
    try {
      const res = await fetch(t.url, { method: 'POST', headers: t.headers, body, signal: ac.signal });
      const text = await res.text();
      if (res.ok) return undefined;
      return `HTTP ${res.status}: ${text.trim().slice(0, BODY_CHARS) || res.statusText}`;
    } catch (error) {
      if (this.#stopped) return 'stopped';
      return fetchFailure(error, this.#timeoutMs);
    } finally {
      clearTimeout(timer);
      this.#abort.signal.removeEventListener('abort', onStop);
    }
  }

  #down(t: Target, why: string, alerts: number): void {
    t.failures++;
    t.lastError = why;
    if (this.#stopped) return;
    if (t.up !== false) {
      t.up = false;
      t.downSince = Date.now();
      this.log.warn({ alertmanager: t.url, cause: why, alerts }, 'alertmanager did not take the alerts; trying again each resend round');
    } else {
      this.log.debug({ alertmanager: t.url, cause: why }, 'alertmanager still failing');
    }
  }

  #body(e: Entry, now: number): PostableAlert {
    const validMs = Math.max(4 * this.#resendMs, MIN_VALID_MS);
    const endsAt = e.resolvedAt ?? now + validMs;
    return {
      labels: e.labels,
      annotations: e.annotations,
      startsAt: new Date(e.startsAt).toISOString(),
      endsAt: new Date(Math.max(endsAt, e.startsAt)).toISOString(),
      ...(e.generatorURL === undefined ? {} : { generatorURL: e.generatorURL }),
    };
  }
}

function positive(name: string, v: number): number {
  if (!Number.isFinite(v) || v <= 0) throw new Error(`alertmanager: ${name} must be a positive number, got ${v}`);
  return v;
}
