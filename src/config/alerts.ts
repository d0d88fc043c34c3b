/**
 * config/alerts.toml: the evaluator's settings ([general], [defaults],
 * [capture], [alertmanager], [nats], [log]) and its rules ([[rule]], checked
 * by alert/rules.ts against the metric catalog the caller passes).
 */
import { readRules, type AlertRule, type Catalog, type Missing } from '../alert/rules.js';
import { DEFAULT_STREAM } from '../bus/subjects.js';
import { ConfigError } from '../errors.js';
import { loadConfig } from './load.js';
import { readNatsSecurity, type NatsSecurity } from './nats.js';
import { logSection, natsSection, type FileSpec } from './schema.js';
import { parseNatsUrls } from './units.js';

export const ALERTS_SPEC: FileSpec = {
  general: {
    doc: 'The evaluator: which hosts, how often, and where events go (stream REZOLUS_ALERTS, subjects rezolus.alerts.<host>.<rule>; state in KV rezolus_alert_state).',
    keys: {
      hosts: { type: 'hosts', default: '*', doc: '"*" for every host, or a comma-separated list of host names and globs. --hosts overrides.' },
      every: { type: 'duration', default: '1s', minMs: 100, doc: 'How often every rule is evaluated (aligned to the wall clock).' },
      stream: { type: 'string', default: DEFAULT_STREAM, doc: 'The frames stream incident captures read from. --stream overrides.' },
      events_max_age: { type: 'duration', default: '30d', minMs: 60_000, doc: 'How long the alert events stream keeps events.' },
      events_max_bytes: { type: 'size', default: '256MiB', doc: 'Size bound of the alert events stream (oldest dropped first).' },
      replicas: { type: 'integer', default: 1, min: 1, max: 5, doc: 'Replicas of the events stream and the state bucket (3 in a cluster).' },
    },
  },
  defaults: {
    doc: 'What a rule takes for a key it leaves out.',
    keys: {
      window: { type: 'duration', default: '10s', minMs: 100, doc: 'The window a rule reduces (the events of a histogram, the rate of a counter, min/max/avg of a gauge).' },
      for: { type: 'duration', default: '30s', minMs: 0, doc: 'How long the condition must hold before pending becomes firing.' },
      keep_firing_for: { type: 'duration', default: '1m', minMs: 0, doc: 'How long a firing alert stays firing once its condition no longer holds (against flapping).' },
      missing: { type: 'enum', default: 'stale', values: ['stale', 'resolve', 'fire'], doc: 'What a pending or firing alert becomes when its frames stop for missing_after: stale (cannot tell), resolve, or fire (fire also fires an inactive one).' },
      missing_after: { type: 'duration', default: '1m', minMs: 1000, doc: 'How long without frames counts as missing data.' },
      severity: { type: 'string', default: 'warning', doc: 'Severity label of the alert (page, warning, info ...).' },
    },
  },
  capture: {
    doc: 'Incident capture: when an alert fires, the host\'s frames from `before` its start to `after` the firing are written to <dir>/<host>/<rule>-<time>.parquet.',
    keys: {
      enabled: { type: 'boolean', default: true, doc: 'Capture incidents (a rule may say capture = false).' },
      dir: { type: 'string', default: 'incidents', doc: 'Directory of the captures (created; checked writable at start).' },
      before: { type: 'duration', default: '5m', minMs: 0, doc: 'How far before the alert became active the capture starts (at most the stream\'s max_age).' },
      after: { type: 'duration', default: '1m', minMs: 0, doc: 'How long after the firing the capture ends; it is written then.' },
      every: { type: 'duration', default: '15m', minMs: 0, doc: 'At most one capture per host and rule within this span.' },
      interval: { type: 'duration', default: '1s', minMs: 10, doc: 'Row interval of the capture files.' },
    },
  },
  alertmanager: {
    doc: 'Forward firing and resolved alerts to Alertmanager (POST /api/v2/alerts). Empty urls: no forwarding.',
    keys: {
      urls: { type: 'string', default: '', doc: 'Alertmanager base URLs, comma-separated (e.g. "http://127.0.0.1:9093").' },
      resend: { type: 'duration', default: '1m', minMs: 1000, doc: 'How often firing alerts are sent again (Alertmanager forgets an alert after its resolve_timeout).' },
      timeout: { type: 'duration', default: '10s', minMs: 100, doc: 'Timeout of one POST.' },
    },
  },
  nats: natsSection,
  log: logSection,
};

export interface AlertsConfig {
  readonly file: string;
  readonly hosts: string;
  readonly everyMs: number;
  readonly stream: string;
  readonly eventsMaxAgeMs: number;
  readonly eventsMaxBytes: number;
  readonly replicas: number;
  readonly rules: readonly AlertRule[];
  readonly capture: { readonly enabled: boolean; readonly dir: string; readonly everyMs: number; readonly intervalMs: number };
  readonly alertmanager: { readonly urls: readonly string[]; readonly resendMs: number; readonly timeoutMs: number };
  readonly natsUrl: string;
  readonly nats?: NatsSecurity | undefined;
  readonly logLevel: string;
}

export interface AlertsOverrides {
  readonly hosts?: string | undefined;
  readonly stream?: string | undefined;
  readonly natsUrl?: string | undefined;
  readonly logLevel?: string | undefined;
  readonly captureDir?: string | undefined;
}

function alertmanagerUrls(text: string, file: string): string[] {
  if (text.trim() === '') return [];
  return text.split(',').map((u) => {
    const url = u.trim();
    let ok = false;
    try {
      ok = ['http:', 'https:'].includes(new URL(url).protocol);
    } catch {
      ok = false;
    }
    if (!ok) throw new ConfigError(`${file}: [alertmanager] urls must be http(s) URLs separated by commas, got ${JSON.stringify(url)}`);
    return url.replace(/\/+$/, '');
  });
}

/** Reads the file (or, with path undefined, the defaults and no rules) and checks every rule against the catalog. */
export function loadAlertsConfig(path: string | undefined, catalog: Catalog, o: AlertsOverrides = {}): AlertsConfig {
  const f = loadConfig(path, ALERTS_SPEC, {}, ['rule']);
  const s = (section: string, key: string): unknown => f.sections[section]?.[key];
  const captureOn = s('capture', 'enabled') as boolean;
  const rules = readRules(f.extra.rule, f.path, catalog, {
    windowMs: s('defaults', 'window') as number,
    forMs: s('defaults', 'for') as number,
    keepFiringForMs: s('defaults', 'keep_firing_for') as number,
    missing: s('defaults', 'missing') as Missing,
    missingAfterMs: s('defaults', 'missing_after') as number,
    severity: s('defaults', 'severity') as string,
    capture: captureOn ? { beforeMs: s('capture', 'before') as number, afterMs: s('capture', 'after') as number } : undefined,
  });
  const natsUrl = o.natsUrl ?? (s('nats', 'url') as string);
  if (parseNatsUrls(natsUrl) === undefined) throw new ConfigError(`bad NATS URL "${natsUrl}"`);
  return {
    file: f.path,
    hosts: o.hosts ?? (s('general', 'hosts') as string),
    everyMs: s('general', 'every') as number,
    stream: o.stream ?? (s('general', 'stream') as string),
    eventsMaxAgeMs: s('general', 'events_max_age') as number,
    eventsMaxBytes: s('general', 'events_max_bytes') as number,
    replicas: s('general', 'replicas') as number,
    rules,
    capture: { enabled: captureOn, dir: o.captureDir ?? (s('capture', 'dir') as string), everyMs: s('capture', 'every') as number, intervalMs: s('capture', 'interval') as number },
    alertmanager: { urls: alertmanagerUrls(s('alertmanager', 'urls') as string, f.path), resendMs: s('alertmanager', 'resend') as number, timeoutMs: s('alertmanager', 'timeout') as number },
    natsUrl,
    nats: readNatsSecurity(f.sections.nats, f.path),
    logLevel: o.logLevel ?? (s('log', 'level') as string),
  };
}
