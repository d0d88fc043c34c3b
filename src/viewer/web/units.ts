/**
 * Human units for the page: a metric's unit as the API gives it (`nanoseconds`,
 * `bytes`, `events`, or a rate `<unit>/s`) to "350 µs", "1.5 GiB", "12.3k
 * events/s". Pure: no DOM, tested in Node.
 */

/** How a unit scales: time (to ns), bytes (powers of 1024) or a plain count (SI prefixes). */
export interface UnitScale {
  readonly kind: 'time' | 'bytes' | 'count';
  /** the unit's size in the kind's base (ns for time, bytes, 1 for counts) */
  readonly factor: number;
  /** the count's name (`events`, `packets`), '' for time and bytes */
  readonly name: string;
  readonly perSecond: boolean;
}

const TIME_FACTORS: Readonly<Record<string, number>> = {
  nanoseconds: 1,
  ns: 1,
  microseconds: 1e3,
  us: 1e3,
  milliseconds: 1e6,
  ms: 1e6,
  seconds: 1e9,
  s: 1e9,
};

const BYTE_UNITS = new Set(['bytes', 'byte', 'B']);

/** Reads a unit string: `nanoseconds`, `bytes/s`, `events/s`, `count`. */
export function unitScale(unit: string): UnitScale {
  const perSecond = unit.endsWith('/s');
  const base = perSecond ? unit.slice(0, -2) : unit;
  const time = TIME_FACTORS[base];
  if (time !== undefined) return { kind: 'time', factor: time, name: '', perSecond };
  if (BYTE_UNITS.has(base)) return { kind: 'bytes', factor: 1, name: '', perSecond };
  // `count` says nothing a number does not already say
  return { kind: 'count', factor: 1, name: base === 'count' ? '' : base, perSecond };
}

const TIME_STEPS: readonly [number, string][] = [
  [1e9, 's'],
  [1e6, 'ms'],
  [1e3, 'µs'],
  [1, 'ns'],
];
const BYTE_STEPS: readonly [number, string][] = [
  [1024 ** 5, 'PiB'],
  [1024 ** 4, 'TiB'],
  [1024 ** 3, 'GiB'],
  [1024 ** 2, 'MiB'],
  [1024, 'KiB'],
  [1, 'B'],
];
const SI_STEPS: readonly [number, string][] = [
  [1e15, 'P'],
  [1e12, 'T'],
  [1e9, 'G'],
  [1e6, 'M'],
  [1e3, 'k'],
  [1, ''],
];

/** `digits` significant digits, trailing zeros dropped: 1.50 -> "1.5", 120 -> "120". */
export function significant(v: number, digits = 3): string {
  if (v === 0) return '0';
  const abs = Math.abs(v);
  // whole numbers at or above the precision print as they are (12345, not 1.23e+4)
  if (abs >= 10 ** digits) return Math.round(v).toString();
  let s = v.toPrecision(digits);
  if (s.includes('e')) s = Number(s).toString();
  if (s.includes('.')) s = s.replace(/0+$/, '').replace(/\.$/, '');
  return s;
}

function pick(abs: number, steps: readonly [number, string][]): [number, string] {
  for (const step of steps) if (abs >= step[0]) return step;
  return steps[steps.length - 1] ?? [1, ''];
}

/**
 * A value in its unit for people: "350 µs", "1.5 GiB/s", "12.3k events/s",
 * "42". Non-finite values are "—".
 */
export function formatValue(v: number | null | undefined, unit: string, digits = 3): string {
  if (v === null || v === undefined || !Number.isFinite(v)) return '—';
  const scale = unitScale(unit);
  const rate = scale.perSecond ? '/s' : '';
  const base = v * scale.factor;
  // time per second is CPUs busy: 1.02e9 ns/s is "1.02 cores"
  if (scale.kind === 'time' && scale.perSecond) return `${significant(base / 1e9, digits)} ${coresWord(base / 1e9)}`;
  if (scale.kind === 'time') {
    // fractions of a nanosecond happen for rates (ns/s) and means: keep them in ns
    const [size, name] = pick(Math.abs(base), TIME_STEPS);
    return `${significant(base / size, digits)} ${name}${rate}`;
  }
  if (scale.kind === 'bytes') {
    const [size, name] = pick(Math.abs(base), BYTE_STEPS);
    return `${significant(base / size, digits)} ${name}${rate}`;
  }
  const [size, prefix] = pick(Math.abs(base), SI_STEPS);
  const text = `${significant(base / size, digits)}${prefix}`;
  const name = scale.name === '' ? rate : ` ${scale.name}${rate}`;
  return `${text}${name}`;
}

/**
 * Axis tick labels: like formatValue with the count's name left to the axis
 * label, and zero a bare 0. uPlot's log axes pass null for the minor ticks it
 * leaves unlabelled: those give ''.
 */
export function formatTick(v: number | null | undefined, unit: string): string {
  if (v === null || v === undefined) return '';
  if (v === 0) return '0';
  const scale = unitScale(unit);
  if (scale.kind === 'time' && scale.perSecond) return Number.isFinite(v) ? significant((v * scale.factor) / 1e9, 3) : '';
  if (scale.kind === 'count') {
    if (!Number.isFinite(v)) return '';
    const [size, prefix] = pick(Math.abs(v), SI_STEPS);
    return `${significant(v / size, 3)}${prefix}`;
  }
  return formatValue(v, unit, 3);
}

/** "core" for exactly one, else "cores" (0.5 cores, 2 cores). */
const coresWord = (n: number) => (Math.abs(n) === 1 ? 'core' : 'cores');

/** The axis label of a unit: `events/s`, `cores` (time per second), `bytes/s`, `time`, '' for a bare count. */
export function axisLabel(unit: string): string {
  const scale = unitScale(unit);
  if (scale.kind === 'count') return scale.name === '' ? (scale.perSecond ? '/s' : '') : `${scale.name}${scale.perSecond ? '/s' : ''}`;
  if (scale.kind === 'time') return scale.perSecond ? 'cores' : 'time';
  return scale.perSecond ? 'bytes/s' : 'bytes';
}

/** Whether a unit is time per second: a CPU-time counter's rate, shown in cores. */
export function isCores(unit: string): boolean {
  const scale = unitScale(unit);
  return scale.kind === 'time' && scale.perSecond;
}

/** A share 0..1 as a percentage: 0.4567 -> "45.7%". */
export function formatPercent(share: number | null | undefined): string {
  if (share === null || share === undefined || !Number.isFinite(share)) return '—';
  return `${significant(share * 100, 3)}%`;
}

/** A duration in ms for people: "850 ms", "12 s", "3 min 4 s", "2 h 5 min", "3 d 4 h". */
export function formatDuration(ms: number | null | undefined): string {
  if (ms === null || ms === undefined || !Number.isFinite(ms)) return '—';
  const sign = ms < 0 ? '-' : '';
  const abs = Math.abs(ms);
  if (abs < 1000) return `${sign}${Math.round(abs)} ms`;
  if (abs < 60_000) return `${sign}${significant(abs / 1000, abs < 10_000 ? 2 : 3)} s`;
  const s = Math.round(abs / 1000);
  if (s < 3600) return join(sign, Math.floor(s / 60), 'min', s % 60, 's');
  if (s < 86_400) return join(sign, Math.floor(s / 3600), 'h', Math.floor((s % 3600) / 60), 'min');
  return join(sign, Math.floor(s / 86_400), 'd', Math.floor((s % 86_400) / 3600), 'h');
}

function join(sign: string, big: number, bigName: string, small: number, smallName: string): string {
  return small === 0 ? `${sign}${big} ${bigName}` : `${sign}${big} ${bigName} ${small} ${smallName}`;
}

/** Seconds from a source's start, for the compare axis: "+0:05", "+12:30", "+1:02:05". */
export function formatOffset(seconds: number | null | undefined): string {
  if (seconds === null || seconds === undefined || !Number.isFinite(seconds)) return '';
  const sign = seconds < 0 ? '-' : '+';
  const total = Math.round(Math.abs(seconds));
  const h = Math.floor(total / 3600);
  const m = Math.floor((total % 3600) / 60);
  const s = total % 60;
  const ss = s.toString().padStart(2, '0');
  return h > 0 ? `${sign}${h}:${m.toString().padStart(2, '0')}:${ss}` : `${sign}${m}:${ss}`;
}

/**
 * Tick spacings for an axis in `unit`: bytes step in powers of two (4 MiB,
 * 8 MiB, not 4.77 MiB); undefined leaves uPlot's decimal 1-2-5 steps.
 */
export function axisIncrs(unit: string): number[] | undefined {
  const scale = unitScale(unit);
  if (scale.kind !== 'bytes') return undefined;
  const out: number[] = [];
  for (let p = 0; p <= 60; p++) out.push(2 ** p);
  return out;
}

/** Tick spacings in seconds for an axis of seconds from the start: 1 s … 1 min … 1 h … 1 d. */
export const OFFSET_INCRS: readonly number[] = [
  1, 2, 5, 10, 15, 30, 60, 120, 300, 600, 900, 1800, 3600, 7200, 3 * 3600, 6 * 3600, 12 * 3600, 86_400, 2 * 86_400, 7 * 86_400,
];
