/**
 * The current alerts as a gauge, like Prometheus's ALERTS: the exporter
 * follows the alert state bucket (rezolus_alert_state, written by `rezolus
 * alert`) over its own connection and serves each alert of a host it
 * exports that is pending, firing or stale as
 * `rezolus_alerts{rule,host,severity,state,…} 1`. Resolved and inactive
 * alerts are not served. The bucket may not exist yet (no evaluator has
 * run): it is looked for again every few seconds.
 *
 * With no active alert the family is not written at all, not even its
 * HELP/TYPE header: an exposition family without samples is what
 * test/helpers/exposition-check.ts reports as a problem, and Prometheus
 * stores nothing for it. The name stays claimed all the same (an agent's
 * `rezolus_alerts` family is left out as a conflict, see render.ts).
 */
import type { NatsConnection } from '@nats-io/nats-core';
import type { Logger } from 'pino';
import { openAlertStateBucket } from '../alert/bus.js';
import { ALERT_STATE_BUCKET, type AlertRecord } from '../alert/contract.js';
import { AlertStateWatch, type WatchedRecord } from '../alert/state-watch.js';
import { isStreamNotFound, permissionViolation } from '../bus/api-errors.js';
import { hostMatcher, hostToken } from '../bus/subjects.js';
import { escapeLabelValue } from './names.js';
import { familyDecl } from './plan.js';
import type { RawFamily } from './render.js';
import { alerts as alertsMetric } from './self-metrics.js';

/** How long the exporter waits between tries to open the bucket. */
export const ALERT_BUCKET_RETRY_MS = 3000;

const DECL = familyDecl(alertsMetric.name, 'gauge', alertsMetric.unit, alertsMetric.labels.join(','), alertsMetric.description);

/** The states served; resolved and inactive are not (Prometheus ALERTS shows pending and firing). */
const SERVED: ReadonlySet<string> = new Set(['pending', 'firing', 'stale']);


/**
 * A key as a Prometheus label name: every character outside [a-zA-Z0-9_]
 * becomes `_`, a leading digit gets a `_` before it, and a leading `__`
 * (Prometheus's own names) becomes one `_`. Undefined for an empty key.
 */
export function labelName(key: string): string | undefined {
  if (key === '') return undefined;
  let name = key.replace(/[^a-zA-Z0-9_]/gu, '_');
  if (/^[0-9]/.test(name)) name = `_${name}`;
  if (name.startsWith('__')) name = name.replace(/^_+/, '_');
  return name;
}

/** A label value from a record written by anyone: strings, numbers and booleans; nothing else. */
function labelValue(v: unknown): string | undefined {
  if (typeof v === 'string') return v;
  if (typeof v === 'number' || typeof v === 'boolean' || typeof v === 'bigint') return String(v);
  return undefined;
}

/**
 * The label set `{…}` of an alert: rule, host, severity and state, then the
 * labels of its series and the rule's labels, those two sorted by name.
 * Names are made valid (labelName); of two labels with one name the first
 * in that order wins, so the series labels (which tell the alerts of a rule
 * apart) win over the rule's.
 */
export function alertLabels(r: AlertRecord): string {
  const fixed: [string, string][] = [
    ['rule', labelValue(r.rule) ?? ''],
    ['host', labelValue(r.host) ?? ''],
    ['severity', labelValue(r.severity) ?? ''],
    ['state', labelValue(r.state) ?? ''],
  ];
  const names = new Set(fixed.map(([k]) => k));
  const extra: [string, string][] = [];
  for (const source of [r.series, r.labels]) {
    if (typeof source !== 'object' || source === null) continue;
    for (const [k, v] of Object.entries(source)) {
      const name = labelName(k);
      const value = labelValue(v);
      if (name === undefined || value === undefined || names.has(name)) continue;
      names.add(name);
      extra.push([name, value]);
    }
  }
  extra.sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0));
  return `{${[...fixed, ...extra].map(([k, v]) => `${k}="${escapeLabelValue(v)}"`).join(',')}}`;
}

export interface ExporterAlertsOptions {
  readonly nc: NatsConnection;
  /** the exporter's host selection: `*`, or a comma-separated list of names and globs */
  readonly hosts: string;
  /** between tries to open the bucket; default ALERT_BUCKET_RETRY_MS */
  readonly retryMs?: number;
}

export class ExporterAlerts {
  readonly #selected: (token: string) => boolean;
  /** KV key -> label set of each served alert (selected host, served state) */
  readonly #served = new Map<string, string>();
  #watch: AlertStateWatch | undefined;
  #stopped = false;
  #wake: (() => void) | undefined;
  #loop: Promise<void> = Promise.resolve();

  constructor(
    private readonly options: ExporterAlertsOptions,
    private readonly log: Logger,
  ) {
    this.#selected = hostMatcher(options.hosts);
  }

  /** Starts looking for the bucket in the background; it is followed as soon as it is there. */
  start(): void {
    this.#loop = this.#open().catch((error: unknown) => this.log.error({ err: error }, 'following the alert state bucket failed'));
  }

  /** whether the bucket is followed (the family is served) */
  get following(): boolean {
    return this.#watch !== undefined;
  }

  /** The rezolus_alerts family (written only with sample lines), or undefined while the bucket is not followed. */
  family(): RawFamily | undefined {
    if (this.#watch === undefined) return undefined;
    let text = '';
    let lines = 0;
    const seen = new Set<string>();
    for (const key of [...this.#served.keys()].sort()) {
      const labels = this.#served.get(key) as string;
      // two alerts whose names came out alike after labelName: served once
      if (seen.has(labels)) continue;
      seen.add(labels);
      text += `${DECL.name}${labels} 1\n`;
      lines++;
    }
    return { decl: DECL, text, lines };
  }

  /** Stops following at once; the promise resolves when a try to open the bucket that was under way has ended. */
  stop(): Promise<void> {
    this.#stopped = true;
    this.#wake?.();
    const watch = this.#watch;
    this.#watch = undefined;
    return Promise.all([watch?.stop(), this.#loop]).then(() => undefined);
  }

  #take(key: string, now: WatchedRecord | undefined): void {
    const r = now?.record;
    if (r === undefined || !SERVED.has(r.state) || !this.#selected(hostToken(String(r.host)))) this.#served.delete(key);
    else this.#served.set(key, alertLabels(r));
  }

  async #open(): Promise<void> {
    const retryMs = this.options.retryMs ?? ALERT_BUCKET_RETRY_MS;
    for (let said = false; !this.#stopped; ) {
      let watch: AlertStateWatch | undefined;
      try {
        watch = new AlertStateWatch(await openAlertStateBucket(this.options.nc), this.log);
        watch.onChange((key, now) => this.#take(key, now));
        await watch.start();
      } catch (error) {
        await watch?.stop().catch(() => undefined);
        this.#served.clear();
        const refused = permissionViolation(error);
        if (refused !== undefined) {
          this.log.warn(
            { bucket: ALERT_STATE_BUCKET, err: error },
            `this NATS user may not follow the alert state bucket ${ALERT_STATE_BUCKET}: rezolus_alerts is not served (grant it and restart the exporter)`,
          );
          return;
        }
        if (!said) {
          const why = isStreamNotFound(error) ? 'not there yet (no rezolus alert has run)' : 'cannot be read now';
          // an expected state, not a failure: no stack in the line
          const detail = isStreamNotFound(error) ? {} : { err: error };
          this.log.info({ bucket: ALERT_STATE_BUCKET, ...detail }, `alert state bucket ${why}; looking again every ${retryMs / 1000} s, rezolus_alerts is served once it is there`);
          said = true;
        } else this.log.debug({ bucket: ALERT_STATE_BUCKET, err: error }, 'alert state bucket still not readable');
        await new Promise<void>((resolve) => {
          const timer = setTimeout(resolve, retryMs);
          this.#wake = () => {
            clearTimeout(timer);
            resolve();
          };
        });
        this.#wake = undefined;
        continue;
      }
      if (this.#stopped) {
        await watch.stop();
        this.#served.clear();
        return;
      }
      this.#watch = watch;
      this.log.info({ bucket: ALERT_STATE_BUCKET, alerts: this.#served.size }, 'following the alert state bucket');
      return;
    }
  }
}
