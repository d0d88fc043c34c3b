/**
 * Alert rules: `[[rule]]` tables of config/alerts.toml checked into
 * AlertRule values. Pure: the caller passes the parsed TOML and the metric
 * catalog (every metric the samplers declare), and every problem is a
 * ConfigError naming the file, the rule and the key.
 */
import { createHash } from 'node:crypto';
import { parseDuration } from '../config/units.js';
import { ConfigError } from '../errors.js';
import type { MetricKind } from '../metrics/metric.js';
import { globMatcher } from '../viewer/query/match.js';
import { RULE_NAME } from './contract.js';
import { EXAMPLES, parseThreshold, rateDimension, unitDimension, type Dimension } from './units.js';

/** What the catalog says of a metric. */
export interface CatalogMetric {
  readonly kind: MetricKind;
  readonly unit: string;
  readonly labels: readonly string[];
}

export type Catalog = ReadonlyMap<string, CatalogMetric>;

export type Op = '>' | '>=' | '<' | '<=';
export type Missing = 'stale' | 'resolve' | 'fire';

/** How a window of samples becomes one value. */
export type Reduce =
  | { readonly kind: 'quantile'; readonly q: number }
  | { readonly kind: 'count' }
  | { readonly kind: 'rate' }
  | { readonly kind: 'rate_max' }
  | { readonly kind: 'increase' }
  | { readonly kind: 'last' | 'min' | 'max' | 'avg' }
  | { readonly kind: 'age' };

export interface AlertRule {
  readonly name: string;
  readonly metric: string;
  readonly kind: MetricKind;
  readonly unit: string;
  /** label globs a series must match (a label it lacks is the empty string) */
  readonly match: readonly (readonly [string, (value: string) => boolean])[];
  readonly matchText: Readonly<Record<string, string>>;
  /** sum: one alert per host over the sum of the matched series; each: one alert per series */
  readonly group: 'sum' | 'each';
  readonly reduceText: string;
  readonly reduce: Reduce;
  readonly windowMs: number;
  readonly op: Op;
  /** in the raw unit of the value (see units.ts) */
  readonly threshold: number;
  /** a firing alert resolves only once the value is past this (hysteresis); undefined = threshold */
  readonly clear: number | undefined;
  readonly thresholdText: string;
  readonly clearText: string | undefined;
  readonly dimension: Dimension;
  readonly forMs: number;
  readonly keepFiringForMs: number;
  readonly missing: Missing;
  readonly missingAfterMs: number;
  readonly severity: string;
  readonly labels: Readonly<Record<string, string>>;
  readonly summary: string;
  readonly runbook: string | undefined;
  /** write the incident window when the alert fires; undefined = no capture */
  readonly capture: { readonly beforeMs: number; readonly afterMs: number } | undefined;
  /** 12 hex digits over what decides the rule's states (metric to missing data): two evaluators with different ones disagree */
  readonly fingerprint: string;
}

/** Defaults a rule takes for the keys it leaves out ([defaults] and [capture] of the file). */
export interface RuleDefaults {
  readonly windowMs: number;
  readonly forMs: number;
  readonly keepFiringForMs: number;
  readonly missing: Missing;
  readonly missingAfterMs: number;
  readonly severity: string;
  readonly capture: { readonly beforeMs: number; readonly afterMs: number } | undefined;
}

const KEYS = [
  'name', 'metric', 'match', 'group', 'reduce', 'window', 'op', 'threshold', 'clear', 'for', 'keep_firing_for',
  'missing', 'missing_after', 'severity', 'labels', 'summary', 'runbook', 'capture',
] as const;

const QUANTILES: Readonly<Record<string, number>> = {
  p50: 0.5, p75: 0.75, p90: 0.9, p95: 0.95, p99: 0.99, p999: 0.999, p9999: 0.9999, 'p99.9': 0.999, 'p99.99': 0.9999,
};
const BY_KIND: Readonly<Record<MetricKind, readonly string[]>> = {
  histogram: [...Object.keys(QUANTILES), 'max', 'count', 'age'],
  counter: ['rate', 'rate_max', 'increase', 'age'],
  gauge: ['last', 'min', 'max', 'avg', 'age'],
};
const OPS: readonly Op[] = ['>', '>=', '<', '<='];
const MISSING: readonly Missing[] = ['stale', 'resolve', 'fire'];
const LABEL_NAME = /^[a-zA-Z_][a-zA-Z0-9_]*$/;

function reduceOf(text: string, kind: MetricKind): Reduce {
  if (Object.hasOwn(QUANTILES, text)) return { kind: 'quantile', q: QUANTILES[text] as number };
  if (text === 'max' && kind === 'histogram') return { kind: 'quantile', q: 1 };
  return { kind: text } as Reduce;
}

/** The dimension of a rule's value. */
function dimensionOf(reduce: Reduce, unit: string): Dimension {
  switch (reduce.kind) {
    case 'age':
      return 'time';
    case 'count':
      return 'count';
    case 'rate':
    case 'rate_max':
      return rateDimension(unit);
    default:
      return unitDimension(unit);
  }
}

/** Checks one `[[rule]]`; `at(key)` names where a problem is. */
function readRule(raw: Record<string, unknown>, index: number, file: string, catalog: Catalog, d: RuleDefaults): AlertRule {
  const name = raw.name;
  const label = typeof name === 'string' ? `rule "${name}"` : `rule #${index + 1}`;
  const fail = (key: string, problem: string): never => {
    throw new ConfigError(`${file}: ${label}: ${key} ${problem}`);
  };
  for (const key of Object.keys(raw)) {
    if (!(KEYS as readonly string[]).includes(key)) {
      const near = closest(key, KEYS);
      fail(key, `is not a rule key (${near === undefined ? '' : `did you mean ${near}? `}known: ${KEYS.join(', ')})`);
    }
  }
  if (typeof name !== 'string' || !RULE_NAME.test(name)) fail('name', `must be lower case letters, digits and _ starting with a letter (a subject token), got ${JSON.stringify(name)}`);
  const str = (key: string, fallback?: string): string => {
    const v = raw[key] ?? fallback;
    if (typeof v !== 'string') return fail(key, `must be a string, got ${JSON.stringify(v)}`);
    return v;
  };
  const duration = (key: string, fallback: number): number => {
    const v = raw[key];
    if (v === undefined) return fallback;
    const ms = typeof v === 'string' ? parseDuration(v) : undefined;
    if (ms === undefined) return fail(key, `must be a duration such as "30s" or "5m", got ${JSON.stringify(v)}`);
    return ms;
  };
  const table = (key: string): Record<string, string> => {
    const v = raw[key] ?? {};
    if (typeof v !== 'object' || v === null || Array.isArray(v)) return fail(key, `must be a table such as { cgroup = "/system.slice/*" }, got ${JSON.stringify(v)}`);
    const out: Record<string, string> = {};
    for (const [k, s] of Object.entries(v)) {
      if (!LABEL_NAME.test(k)) fail(key, `has a bad label name ${JSON.stringify(k)}`);
      if (typeof s !== 'string') fail(key, `value of ${k} must be a string, got ${JSON.stringify(s)}`);
      out[k] = s as string;
    }
    return out;
  };

  const metricName = str('metric');
  const metric = catalog.get(metricName);
  if (metric === undefined) {
    const near = closest(metricName, catalog.keys());
    fail('metric', `"${metricName}" is not a metric any sampler declares (${near === undefined ? 'see METRICS.md' : `did you mean "${near}"?`})`);
  }
  const m = metric as CatalogMetric;

  const matchText = table('match');
  for (const k of Object.keys(matchText)) {
    if (!m.labels.includes(k)) fail('match', `label "${k}" is not a label of ${metricName} (its labels: ${m.labels.join(', ') || 'none'})`);
  }
  const group = str('group', 'sum');
  if (group !== 'sum' && group !== 'each') fail('group', `must be "sum" or "each", got "${group}"`);

  const reduceText = str('reduce');
  if (!BY_KIND[m.kind].includes(reduceText)) {
    fail('reduce', `"${reduceText}" does not apply to ${metricName}, a ${m.kind} (use one of ${BY_KIND[m.kind].join(', ')})`);
  }
  const reduce = reduceOf(reduceText, m.kind);
  const dimension = dimensionOf(reduce, m.unit);
  const unit = reduce.kind === 'age' ? 'milliseconds' : m.unit;

  const op = str('op', '>') as Op;
  if (!OPS.includes(op)) fail('op', `must be one of ${OPS.join(' ')}, got "${op}"`);
  const thresholdOf = (key: string): number => {
    const v = parseThreshold(raw[key], dimension, unit);
    if (v === undefined) {
      fail(key, `${JSON.stringify(raw[key])} is not a value for ${reduceText} of ${metricName} (${m.unit}): write ${EXAMPLES[dimension]}`);
    }
    return v as number;
  };
  if (raw.threshold === undefined) fail('threshold', 'is missing');
  const threshold = thresholdOf('threshold');
  const clear = raw.clear === undefined ? undefined : thresholdOf('clear');
  if (clear !== undefined && ((op[0] === '>' && clear > threshold) || (op[0] === '<' && clear < threshold))) {
    fail('clear', `must be on the quiet side of threshold (for ${op} at most the threshold, for < at least), got ${JSON.stringify(raw.clear)} against ${JSON.stringify(raw.threshold)}`);
  }
  const windowMs = duration('window', d.windowMs);
  if (windowMs < 100) fail('window', 'must be at least 100ms');
  const missing = str('missing', d.missing) as Missing;
  if (!MISSING.includes(missing)) fail('missing', `must be one of ${MISSING.join(', ')}, got "${missing}"`);
  if (reduce.kind === 'age' && raw.missing !== undefined) fail('missing', 'does not apply to reduce = "age" (missing data is what it measures)');
  const missingAfterMs = duration('missing_after', d.missingAfterMs);
  if (missingAfterMs < 1000) fail('missing_after', 'must be at least 1s');

  let capture = d.capture;
  const c = raw.capture;
  if (c === false) capture = undefined;
  else if (c !== undefined) {
    if (typeof c !== 'object' || c === null || Array.isArray(c)) fail('capture', `must be false or a table { before = "5m", after = "1m" }, got ${JSON.stringify(c)}`);
    const t = c as Record<string, unknown>;
    for (const k of Object.keys(t)) if (k !== 'before' && k !== 'after') fail('capture', `has an unknown key "${k}" (before, after)`);
    const dur = (k: 'before' | 'after', fallback: number): number => {
      if (t[k] === undefined) return fallback;
      const ms = typeof t[k] === 'string' ? parseDuration(t[k]) : undefined;
      if (ms === undefined) return fail(`capture.${k}`, `must be a duration such as "5m", got ${JSON.stringify(t[k])}`);
      return ms;
    };
    capture = { beforeMs: dur('before', d.capture?.beforeMs ?? 300_000), afterMs: dur('after', d.capture?.afterMs ?? 60_000) };
  }
  const runbook = raw.runbook === undefined ? undefined : str('runbook');
  if (raw.summary !== undefined) {
    const fillable = new Set(['host', 'rule', 'value', 'threshold', 'state', 'metric', ...(group === 'each' ? m.labels : [])]);
    for (const [, name] of str('summary').matchAll(/\{([a-zA-Z_][a-zA-Z0-9_.]*)\}/g)) {
      if (!fillable.has(name as string)) {
        fail('summary', `has {${name as string}}, which nothing fills (known: ${[...fillable].map((f) => `{${f}}`).join(' ')}${group === 'each' ? '' : '; series labels only with group = "each"'})`);
      }
    }
  }
  const forMs = duration('for', d.forMs);
  const keepFiringForMs = duration('keep_firing_for', d.keepFiringForMs);
  const decides = [metricName, matchText, group, reduceText, windowMs, op, threshold, clear ?? null, forMs, keepFiringForMs, missing, missingAfterMs];
  return {
    fingerprint: createHash('sha256').update(JSON.stringify(decides)).digest('hex').slice(0, 12),
    name: name as string,
    metric: metricName,
    kind: m.kind,
    unit,
    match: Object.entries(matchText).map(([k, g]) => [k, globMatcher(g)] as const),
    matchText,
    group: group as 'sum' | 'each',
    reduceText,
    reduce,
    windowMs,
    op,
    threshold,
    clear,
    thresholdText: String(raw.threshold),
    clearText: raw.clear === undefined ? undefined : String(raw.clear),
    dimension,
    forMs,
    keepFiringForMs,
    missing,
    missingAfterMs,
    severity: str('severity', d.severity),
    labels: table('labels'),
    summary: str('summary', `${name as string} on {host}: ${reduceText} of ${metricName} is {value} (${op} {threshold})`),
    runbook,
    capture,
  };
}

/** Checks the `rule` array of a rules file; names must be unique. */
export function readRules(raw: unknown, file: string, catalog: Catalog, defaults: RuleDefaults): AlertRule[] {
  if (raw === undefined) return [];
  if (!Array.isArray(raw)) throw new ConfigError(`${file}: rule must be an array of tables ([[rule]]), got ${JSON.stringify(raw)}`);
  const rules: AlertRule[] = [];
  const seen = new Set<string>();
  // every rule is checked: a file with several mistakes is told them all at once (one line each)
  const problems: string[] = [];
  raw.forEach((r, i) => {
    try {
      if (typeof r !== 'object' || r === null || Array.isArray(r)) throw new ConfigError(`${file}: rule #${i + 1} must be a table`);
      const rule = readRule(r as Record<string, unknown>, i, file, catalog, defaults);
      if (seen.has(rule.name)) throw new ConfigError(`${file}: rule "${rule.name}": name is used by an earlier rule`);
      seen.add(rule.name);
      rules.push(rule);
    } catch (error) {
      if (!(error instanceof ConfigError)) throw error;
      problems.push(error.message);
    }
  });
  if (problems.length > 0) throw new ConfigError(problems.join('\n'));
  return rules;
}

/** The known name closest to `name` (at most a third of its letters off), for "did you mean". */
function closest(name: string, known: Iterable<string>): string | undefined {
  let best: string | undefined;
  let bestD = Math.max(2, Math.floor(name.length / 3)) + 1;
  for (const k of known) {
    const d = editDistance(name, k, bestD);
    if (d < bestD) {
      best = k;
      bestD = d;
    }
  }
  return best;
}

function editDistance(a: string, b: string, cap: number): number {
  if (Math.abs(a.length - b.length) >= cap) return cap;
  let prev = Array.from({ length: b.length + 1 }, (_, j) => j);
  for (let i = 1; i <= a.length; i++) {
    const row = [i];
    for (let j = 1; j <= b.length; j++) row[j] = Math.min((prev[j] as number) + 1, (row[j - 1] as number) + 1, (prev[j - 1] as number) + (a[i - 1] === b[j - 1] ? 0 : 1));
    prev = row;
  }
  return prev[b.length] as number;
}

/** Whether `value` meets the rule's condition; an alert already pending or firing (`held`) uses the clear threshold (hysteresis). */
export function conditionMet(rule: AlertRule, value: number, held: boolean): boolean {
  const t = held && rule.clear !== undefined ? rule.clear : rule.threshold;
  switch (rule.op) {
    case '>':
      return value > t;
    case '>=':
      return value >= t;
    case '<':
      return value < t;
    case '<=':
      return value <= t;
  }
}
