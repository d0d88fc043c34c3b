/**
 * Prometheus naming, escaping and value formatting for the exporter (text
 * format 0.0.4).
 * Everything here is pure; descriptor strings come from agents and are
 * validated or escaped, never trusted.
 */
import type { MetricKind, PrometheusUnit, Unit } from '../metrics/metric.js';
import { PROMETHEUS_UNITS } from '../metrics/metric.js';

const METRIC_NAME = /^[a-zA-Z_:][a-zA-Z0-9_:]*$/;
const LABEL_NAME = /^[a-zA-Z_][a-zA-Z0-9_]*$/;

/** Label names the exporter adds itself; a metric may not declare them. */
export const RESERVED_LABELS: ReadonlySet<string> = new Set(['host', 'percentile', 'le', 'quantile']);

export function isValidMetricName(name: string): boolean {
  return METRIC_NAME.test(name);
}

/** A label name a metric may declare: valid, not `__`-prefixed, not one the exporter adds. */
export function isValidLabelName(name: string): boolean {
  return LABEL_NAME.test(name) && !name.startsWith('__') && !RESERVED_LABELS.has(name);
}

/** The Prometheus unit of a Rezolus unit, or undefined for a unit this build does not know. */
export function prometheusUnit(unit: string): PrometheusUnit | undefined {
  return Object.hasOwn(PROMETHEUS_UNITS, unit) ? PROMETHEUS_UNITS[unit as Unit] : undefined;
}

/**
 * The family name: the metric name, `_<unit suffix>` unless the unit has none
 * or the name already ends with it, and `_total` for counters (a counter
 * already ending in `_total` keeps one). Histograms are exported as
 * percentile gauges and get no extra suffix. Undefined when the name or unit
 * is not acceptable.
 */
export function familyName(name: string, kind: MetricKind, unit: string): string | undefined {
  const pu = prometheusUnit(unit);
  if (pu === undefined || !isValidMetricName(name)) return undefined;
  let base = name;
  if (kind === 'counter' && base.endsWith('_total')) base = base.slice(0, -'_total'.length);
  if (pu.suffix !== '' && base !== pu.suffix && !base.endsWith(`_${pu.suffix}`)) base = `${base}_${pu.suffix}`;
  if (base === '') return undefined;
  return kind === 'counter' ? `${base}_total` : base;
}

const LABEL_VALUE_SPECIAL = /[\\"\n]/g;
const LABEL_VALUE_TEST = /[\\"\n]/;
const HELP_SPECIAL = /[\\\n]/g;
const HELP_TEST = /[\\\n]/;

/** Escapes a label value: backslash, double quote and line feed. */
export function escapeLabelValue(value: string): string {
  if (!LABEL_VALUE_TEST.test(value)) return value;
  return value.replace(LABEL_VALUE_SPECIAL, (c) => (c === '\n' ? '\\n' : `\\${c}`));
}

/** Escapes HELP text: backslash and line feed. */
export function escapeHelp(text: string): string {
  if (!HELP_TEST.test(text)) return text;
  return text.replace(HELP_SPECIAL, (c) => (c === '\n' ? '\\n' : '\\\\'));
}

/**
 * Writes a raw value in the base unit: integers stay exact (a bigint or an
 * integer number scaled by 10^-k is written as an exact decimal), other
 * numbers as the shortest round-trip form; undefined for a non-finite number.
 */
export type Format = (v: number | bigint) => string | undefined;

const formats = new Map<string, Format>();

/** The value formatter of a unit, or undefined for an unknown unit. */
export function formatOf(unit: string): Format | undefined {
  const cached = formats.get(unit);
  if (cached !== undefined) return cached;
  const pu = typeof unit === 'string' ? prometheusUnit(unit) : undefined;
  if (pu === undefined) return undefined; // not cached: agents could send any number of bogus units
  const scale = pu.scale;
  const inverse = Math.round(1 / scale);
  const digits = String(inverse).length - 1;
  let f: Format;
  if (scale === 1) f = formatPlain;
  else if (scale < 1 && String(inverse) === `1${'0'.repeat(digits)}` && Math.abs(1 / inverse - scale) < scale * 1e-12) {
    f = (v) => formatDecimalScaled(v, inverse, digits);
    decimalFormats.set(f, digits);
  } else f = (v) => formatFloat(Number(v) * scale);
  formats.set(unit, f);
  return f;
}

/** The formats that write v / 10^digits as an exact decimal, and their digits. */
const decimalFormats = new WeakMap<Format, number>();

/**
 * The number of decimal digits a format shifts a raw value by (it writes
 * v / 10^digits exactly, see formatSafeScaled); undefined for other formats.
 */
export function decimalDigitsOf(f: Format): number | undefined {
  return decimalFormats.get(f);
}

/** Whether f writes values as they are (String(v)): a safe integer number is then its plain digits. */
export function isPlainFormat(f: Format): boolean {
  return f === formatPlain;
}

function formatPlain(v: number | bigint): string | undefined {
  if (typeof v === 'bigint') return v.toString();
  return Number.isFinite(v) ? String(v) : undefined;
}

function formatFloat(n: number): string | undefined {
  return Number.isFinite(n) ? String(n) : undefined;
}

/**
 * v / 10^digits. Integers are written as an exact decimal (no rounding, even
 * beyond 2^53), other numbers as the nearest double.
 */
/** formatDecimalScaled for a safe integer, with float arithmetic that is exact below 2^53. */
function formatSafeScaled(v: number, divisor: number, digits: number): string {
  const neg = v < 0;
  const a = neg ? -v : v;
  let q = Math.floor(a / divisor);
  let r = a - q * divisor;
  if (r < 0) {
    q--;
    r += divisor;
  }
  const sign = neg && a !== 0 ? '-' : '';
  if (r === 0) return `${sign}${q}`;
  let width = digits;
  while (r % 10 === 0) {
    r /= 10;
    width--;
  }
  const frac = String(r);
  return `${sign}${q}.${frac.length < width ? '0'.repeat(width - frac.length) + frac : frac}`;
}

function formatDecimalScaled(v: number | bigint, divisor: number, digits: number): string | undefined {
  let s: string;
  if (typeof v === 'bigint') s = v.toString();
  else if (!Number.isFinite(v)) return undefined;
  else if (!Number.isInteger(v)) return String(v / divisor);
  else if (Number.isSafeInteger(v)) return formatSafeScaled(v, divisor, digits);
  else s = BigInt(v).toString();
  let sign = '';
  if (s.startsWith('-')) {
    sign = '-';
    s = s.slice(1);
  }
  if (s === '0') return '0';
  if (s.length <= digits) s = '0'.repeat(digits - s.length + 1) + s;
  let int = s.slice(0, s.length - digits);
  let frac = s.slice(s.length - digits);
  let end = frac.length;
  while (end > 0 && frac.charCodeAt(end - 1) === 48) end--;
  frac = frac.slice(0, end);
  if (int === '') int = '0';
  return frac === '' ? `${sign}${int}` : `${sign}${int}.${frac}`;
}
