/**
 * Thresholds in the units people write (`1ms`, `90%`, `10MiB/s`, `512MiB`)
 * turned into the raw unit of the value a rule computes, and values turned
 * back into text for events. Pure.
 *
 * A rule's value has a dimension decided by its metric's unit and its
 * reduction: a p99 of a nanoseconds histogram is a time; the rate of a
 * nanoseconds counter is seconds per second (busy fraction, or cores); the
 * rate of a bytes counter is bytes per second; and so on.
 */

export type Dimension = 'time' | 'time_rate' | 'bytes' | 'bytes_rate' | 'count' | 'count_rate' | 'ratio';

/** Nanoseconds per raw unit of the time units. */
const TIME_UNITS: Readonly<Record<string, number>> = { nanoseconds: 1, microseconds: 1e3, milliseconds: 1e6, seconds: 1e9 };

/** The dimension of the metric unit alone (a gauge, a histogram percentile, an increase). */
export function unitDimension(unit: string): 'time' | 'bytes' | 'count' | 'ratio' {
  if (Object.hasOwn(TIME_UNITS, unit)) return 'time';
  if (unit === 'bytes') return 'bytes';
  if (unit === 'ratio') return 'ratio';
  return 'count';
}

/** The dimension of a per-second rate of a counter in `unit`. */
export function rateDimension(unit: string): Dimension {
  const d = unitDimension(unit);
  return d === 'time' ? 'time_rate' : d === 'bytes' ? 'bytes_rate' : 'count_rate';
}

const TIME_TEXT: Readonly<Record<string, number>> = { ns: 1, us: 1e3, 'µs': 1e3, ms: 1e6, s: 1e9, m: 60e9, h: 3600e9 };
const BYTE_TEXT: Readonly<Record<string, number>> = {
  B: 1, KiB: 1024, MiB: 1024 ** 2, GiB: 1024 ** 3, TiB: 1024 ** 4, KB: 1e3, MB: 1e6, GB: 1e9, TB: 1e12,
};

const NUMBER = String.raw`(-?\d+(?:\.\d+)?(?:e[+-]?\d+)?)`;

/** How a threshold of each dimension is written, for error messages. */
export const EXAMPLES: Readonly<Record<Dimension, string>> = {
  time: '"1ms", "800us", "2s"',
  time_rate: '"90%" (of one CPU second per second), "500ms/s", or a number of cores such as 1.5',
  bytes: '"512MiB", "10GB", "4096B"',
  bytes_rate: '"10MiB/s", "1GB/s"',
  count: 'a number such as 100',
  count_rate: 'a number per second such as 100 or "100/s"',
  ratio: '"90%" or a number such as 0.9',
};

/**
 * The raw value of a threshold for a value of `dim` whose metric is in
 * `unit`: undefined when the text does not fit the dimension (a bad unit).
 */
export function parseThreshold(raw: unknown, dim: Dimension, unit: string): number | undefined {
  const nsPerRaw = TIME_UNITS[unit] ?? 1;
  if (typeof raw === 'number' || typeof raw === 'bigint') {
    const n = Number(raw);
    if (!Number.isFinite(n)) return undefined;
    if (dim === 'count' || dim === 'count_rate' || dim === 'ratio') return n;
    if (dim === 'time_rate') return (n * 1e9) / nsPerRaw; // cores = seconds per second
    return undefined; // a time or a size needs its unit
  }
  if (typeof raw !== 'string') return undefined;
  const text = raw.trim();
  // "1.5" quoted: the number
  if (/^-?\d+(?:\.\d+)?(?:e[+-]?\d+)?$/.test(text)) return parseThreshold(Number(text), dim, unit);
  const pct = new RegExp(`^${NUMBER}\\s*%$`).exec(text);
  if (pct !== null) {
    const f = Number(pct[1]) / 100;
    if (dim === 'ratio') return f;
    if (dim === 'time_rate') return (f * 1e9) / nsPerRaw;
    return undefined;
  }
  const m = new RegExp(`^${NUMBER}\\s*([a-zA-Zµ]*)(/s)?$`).exec(text);
  if (m === null) return undefined;
  const n = Number(m[1]);
  const suffix = m[2] ?? '';
  const perSecond = m[3] !== undefined;
  if (!Number.isFinite(n)) return undefined;
  switch (dim) {
    case 'time':
      return !perSecond && Object.hasOwn(TIME_TEXT, suffix) ? (n * (TIME_TEXT[suffix] as number)) / nsPerRaw : undefined;
    case 'time_rate':
      // "500ms/s": half a CPU second per second
      return perSecond && Object.hasOwn(TIME_TEXT, suffix) ? (n * (TIME_TEXT[suffix] as number)) / nsPerRaw : undefined;
    case 'bytes':
      return !perSecond && Object.hasOwn(BYTE_TEXT, suffix) ? n * (BYTE_TEXT[suffix] as number) : undefined;
    case 'bytes_rate':
      return perSecond && Object.hasOwn(BYTE_TEXT, suffix) ? n * (BYTE_TEXT[suffix] as number) : undefined;
    case 'count':
      return suffix === '' && !perSecond ? n : undefined;
    case 'count_rate':
      return suffix === '' ? n : undefined;
    case 'ratio':
      return suffix === '' && !perSecond ? n : undefined;
  }
}

/** Three or four significant digits, trailing zeros dropped: 20.97 stays 20.97 (not 21, which would read as the threshold). */
function trim(n: number): string {
  const a = Math.abs(n);
  const digits = a >= 100 ? 0 : a >= 10 ? 2 : 3;
  const text = n.toFixed(digits);
  return digits === 0 ? text : text.replace(/\.?0+$/, '');
}

function scaled(v: number, steps: readonly (readonly [string, number])[]): string {
  for (const [name, f] of steps) if (Math.abs(v) >= f) return `${trim(v / f)} ${name}`;
  const last = steps[steps.length - 1] as readonly [string, number];
  return `${trim(v / last[1])} ${last[0]}`;
}

const TIME_STEPS = [['h', 3600e9], ['min', 60e9], ['s', 1e9], ['ms', 1e6], ['µs', 1e3], ['ns', 1]] as const;
const BYTE_STEPS = [['TiB', 1024 ** 4], ['GiB', 1024 ** 3], ['MiB', 1024 ** 2], ['KiB', 1024], ['B', 1]] as const;

/** A value as people read it: `1.2 ms`, `93%`, `35.2 MiB/s`; `no data` for null. */
export function formatValue(v: number | null, dim: Dimension, unit: string): string {
  if (v === null || !Number.isFinite(v)) return 'no data';
  const nsPerRaw = TIME_UNITS[unit] ?? 1;
  switch (dim) {
    case 'time':
      return v === 0 ? '0 s' : scaled(v * nsPerRaw, TIME_STEPS);
    case 'time_rate':
      return `${trim(((v * nsPerRaw) / 1e9) * 100)}%`;
    case 'bytes':
      return v === 0 ? '0 B' : scaled(v, BYTE_STEPS);
    case 'bytes_rate':
      return `${v === 0 ? '0 B' : scaled(v, BYTE_STEPS)}/s`;
    case 'count':
      return trim(v);
    case 'count_rate':
      return `${trim(v)}/s`;
    case 'ratio':
      return `${trim(v * 100)}%`;
  }
}
