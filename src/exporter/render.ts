/**
 * Prometheus text exposition (format 0.0.4) of the exporter's view: counters
 * and gauges as they are, scaled to base units; histograms as percentile
 * gauges over the window base → latest and/or as full Prometheus histograms;
 * and the oversampling view, percentiles of counters' per-sample rates. Pure;
 * per-descriptor work is cached (plan.ts), and lines are written as bytes
 * into a buffer per family (bytes.ts), kept from one render to the next, so a
 * steady-state render copies bytes and formats numbers, and allocates little
 * besides the body it returns.
 */
import type { FrameValue } from '../frame/types.js';
import type { SparseHistogram } from '../metrics/histogram.js';
import { DEFAULT_PERCENTILES, isValidSparse, percentiles as quantilesOf, subtract } from '../metrics/histogram.js';
import { type ByteOut, byteOut, writeByte, writeBytes, writeSafeInteger, writeSafeScaled, writeString } from './bytes.js';
import { distributionLines } from './distribution.js';
import { escapeLabelValue, familyName, formatOf } from './names.js';
import type { DescriptorPlan, FamilyDecl, SeriesPlan } from './plan.js';
import { baseValue, distributionPrefix, familyDecl, mayRepeat, planOf, prefixesOf, ratePrefix, renderStarted } from './plan.js';
import { nearestRank } from './rates.js';
import type { ViewEntry } from './state.js';

/** One of the exporter's own series, rendered like the agents' ones (no host label unless given). */
export interface ExtraSeries {
  /** metric name before suffixes; `_total` is added to counters that lack it */
  readonly name: string;
  readonly kind: 'counter' | 'gauge';
  readonly help: string;
  /** default `count` (no suffix, no scaling) */
  readonly unit?: string;
  /** label name -> value, rendered in insertion order */
  readonly labels?: Readonly<Record<string, string>>;
  readonly value: number | bigint;
}

export interface RenderOptions {
  /** histograms as percentile gauges over the window; default true */
  readonly summaries?: boolean;
  /** quantiles in [0, 1] for histogram series, printed as given; default DEFAULT_PERCENTILES */
  readonly percentiles?: readonly number[];
  /** histograms also as full Prometheus histograms `<name>_distribution_<unit>`; default false */
  readonly histograms?: boolean;
  /** grouping power of the full histograms (buckets merged below the data's); default: the data's */
  readonly histogramGroupingPower?: number;
  /** quantiles of the per-sample rates of oversampled counters; default [0.5, 0.9, 0.99, 1] */
  readonly ratePercentiles?: readonly number[];
  /** the exporter's own metrics, appended to the families like any other */
  readonly extra?: readonly ExtraSeries[];
  /** families the caller rendered whole (their series have no fixed label set) */
  readonly families?: readonly RawFamily[];
  /** exposition text appended as it is after every family (the process metrics) */
  readonly trailer?: string;
  /**
   * a buffer of exactly `size` bytes, nothing else reading it, to write the
   * body into (body-buffers.ts); default a new one. The result's body (and
   * its lazy `text`) is only good while the caller keeps that memory from
   * the next render.
   */
  readonly bodyBuffer?: (size: number) => Buffer;
}

/**
 * A family rendered whole by its caller: the alerts gauge, whose series each
 * carry labels of their own. It claims its name before any other series, so
 * an agent's family of the same name is left out (a conflict) even while it
 * has no sample lines; like every family, it is written only with some.
 */
export interface RawFamily {
  readonly decl: FamilyDecl;
  /** its sample lines, each ending with a line feed */
  readonly text: string;
  /** how many sample lines text holds */
  readonly lines: number;
}

export interface RenderResult {
  /** the exposition, UTF-8: what /metrics sends */
  readonly body: Buffer;
  /** body as a string (decoded when first read) */
  readonly text: string;
  /** sample lines written */
  readonly series: number;
  /** series left out because the same family and labels were already written */
  readonly duplicates: number;
  /** series left out because their family was first written with another kind, unit or label set */
  readonly conflicts: number;
  /** series left out because the descriptor or the value is unusable */
  readonly invalid: number;
}

/** A family of the render being built. */
interface FamilyOut {
  readonly decl: FamilyDecl;
  /** written by agents' series (false: the exporter's own); the two never share a family */
  readonly agent: boolean;
  /** a RawFamily: no other series joins it */
  readonly raw: boolean;
  /** its sample lines so far (every ByteOut comes from byteOut(), so the writers see one object shape) */
  readonly lines: ByteOut;
}

/**
 * The line buffers of the last render's families, by family name: the next
 * render writes into them again instead of growing new ones (renders are
 * synchronous, so one set serves every caller). Families the last render did
 * not write are let go, and so is a buffer far larger than what it held
 * (worthKeeping): a burst of series that went away would hold it at its peak.
 */
let spare = new Map<string, Buffer>();

/** Below this, a family's buffer is kept whatever it held: small buffers are not worth growing again. */
const KEEP_ANY_BYTES = 64 * 1024;

/** Bytes of the line buffers kept for the next render. */
export function keptLineBytes(): number {
  let n = 0;
  for (const b of spare.values()) n += b.length;
  return n;
}

/** Whether a family's line buffer of `capacity` bytes is kept for the next render, `used` bytes of it written in this one. */
export function worthKeeping(capacity: number, used: number): boolean {
  return capacity <= 4 * Math.max(used, KEEP_ANY_BYTES);
}

/** `# HELP …\n# TYPE …\n` as bytes, per declaration. */
const headerBytes = new WeakMap<FamilyDecl, Buffer>();

function headerOf(decl: FamilyDecl): Buffer {
  let b = headerBytes.get(decl);
  if (b === undefined) {
    b = Buffer.from(decl.header, 'utf8');
    headerBytes.set(decl, b);
  }
  return b;
}

function familyOut(decl: FamilyDecl, agent: boolean, raw: boolean): FamilyOut {
  return { decl, agent, raw, lines: byteOut(256, spare.get(decl.name)) };
}

const MAX_SAFE = BigInt(Number.MAX_SAFE_INTEGER);
const MIN_SAFE = -MAX_SAFE;

const DEFAULT_RATE_PERCENTILES = [0.5, 0.9, 0.99, 1] as const;

export function renderExposition(entries: Iterable<ViewEntry>, options: RenderOptions = {}): RenderResult {
  renderStarted();
  const summaries = options.summaries ?? true;
  const histograms = options.histograms ?? false;
  const groupingPower = options.histogramGroupingPower ?? Number.POSITIVE_INFINITY;
  const qs = percentileLabels(options.percentiles ?? DEFAULT_PERCENTILES);
  const rqs = percentileLabels(options.ratePercentiles ?? DEFAULT_RATE_PERCENTILES);
  const families = new Map<string, FamilyOut>();
  let series = 0;
  let duplicates = 0;
  let conflicts = 0;
  let invalid = 0;
  // the trailer's families (the process metrics) are written as they are: a family of the same name is left out
  const taken = trailerNames(options.trailer);

  for (const f of options.families ?? []) {
    if (families.has(f.decl.name) || taken.has(f.decl.name)) {
      conflicts++;
      continue;
    }
    const out = familyOut(f.decl, false, true);
    writeString(out.lines, f.text);
    families.set(f.decl.name, out);
    series += f.lines;
  }

  /**
   * Series keys (line prefix: family and labels, as the latin1 reading of its
   * UTF-8 bytes) written so far. Keys are only remembered where a duplicate
   * is possible: agent series of a host whose descriptors may repeat one,
   * and the exporter's own series.
   */
  const seen = new Set<string>();
  const scratch: number[] = [];

  /** the last familyFor call and its answer: consecutive series mostly share a declaration, and the answer for one never changes */
  let lastDecl: FamilyDecl | undefined;
  let lastAgent = true;
  let lastOut: FamilyOut | undefined;
  /** The family to write to, or undefined (counted) when `decl` conflicts with it. */
  const familyFor = (decl: FamilyDecl, agent: boolean): FamilyOut | undefined => {
    if (decl === lastDecl && agent === lastAgent) {
      if (lastOut === undefined) conflicts++;
      return lastOut;
    }
    let out = families.get(decl.name);
    if (out === undefined && taken.has(decl.name)) conflicts++;
    else if (out === undefined) {
      out = familyOut(decl, agent, false);
      families.set(decl.name, out);
    } else {
      const d = out.decl;
      const fits = out.raw !== true && out.agent === agent && (d === decl || (d.type === decl.type && d.unit === decl.unit && d.labelKeys === decl.labelKeys));
      if (!fits) {
        conflicts++;
        out = undefined;
      }
    }
    lastDecl = decl;
    lastAgent = agent;
    lastOut = out;
    return out;
  };

  /** Whether the current host's series must be checked for duplicates (see mayRepeat). */
  let dedupe = false;
  /** Whether the series `key` was written already (counted as a duplicate); remembers it. */
  const repeated = (key: string): boolean => {
    if (seen.has(key)) {
      duplicates++;
      return true;
    }
    seen.add(key);
    return false;
  };
  /** The family for a new series `prefix[from, to)`, or undefined (counted) for a conflict or a duplicate. */
  const claim = (decl: FamilyDecl, prefix: Buffer, from: number, to: number): FamilyOut | undefined => {
    const out = familyFor(decl, true);
    if (out === undefined || (dedupe && repeated(prefix.toString('latin1', from, to)))) return undefined;
    return out;
  };

  /** Percentile gauge lines `prefix,percentile="q"} v` for values in the raw unit. */
  const writePercentiles = (
    out: FamilyOut,
    prefix: Buffer,
    from: number,
    to: number,
    labels: PercentileLabels,
    values: readonly (number | bigint)[],
    sp: SeriesPlan,
    exact: boolean,
  ): void => {
    for (let k = 0; k < values.length; k++) {
      const v = values[k] as number | bigint;
      const text = exact ? sp.format(v) : formatRate(v as number, sp.divisor);
      if (text === undefined) continue;
      const label = labels.closed[k] as Buffer;
      writeBytes(out.lines, prefix, from, to);
      writeBytes(out.lines, label, 0, label.length);
      writeString(out.lines, text);
      writeByte(out.lines, 10);
      series++;
    }
  };

  const list = sortedEntries(entries);
  const hostPlans: DescriptorPlan[] = [];
  let hostEnd = 0;
  for (let e = 0; e < list.length; e++) {
    const { latest, base, rates, sinceNs } = list[e] as ViewEntry;
    if (e === hostEnd) {
      // the first entry of a host: its plans decide whether its series need de-duplication
      hostPlans.length = 0;
      while (hostEnd < list.length && (list[hostEnd] as ViewEntry).latest.host === latest.host) {
        hostPlans.push(planOf((list[hostEnd] as ViewEntry).latest.descriptor));
        hostEnd++;
      }
      dedupe = mayRepeat(latest.host, hostPlans);
    }
    const plan = hostPlans[hostPlans.length - (hostEnd - e)] as DescriptorPlan;
    const prefixes = prefixesOf(plan, latest.host);
    const main = prefixes.main;
    const values = latest.values;
    const useBase = base !== undefined && base !== latest && base.instance === latest.instance ? base : undefined;
    for (let i = 0; i < plan.series.length; i++) {
      const sp = plan.series[i];
      const value = values[i];
      if (sp === undefined || value === undefined) {
        invalid++;
        continue;
      }
      const from = prefixes.at[i] as number;
      const to = prefixes.at[i + 1] as number;
      if (sp.kind !== 'histogram') {
        // A safe integer (a bigint within ±(2^53 − 1) too) in a unit written as it is, or scaled
        // by 10^-k, goes straight to digits, without a string: both are written exactly.
        const int = typeof value === 'bigint' && value <= MAX_SAFE && value >= MIN_SAFE ? Number(value) : value;
        const digits = (sp.plain || sp.decimal >= 0) && typeof int === 'number' && Number.isSafeInteger(int);
        const text = digits || typeof value === 'object' ? undefined : sp.format(value);
        if (!digits && text === undefined) {
          invalid++;
          continue;
        }
        const out = claim(sp.family, main, from, to);
        if (out === undefined) continue;
        writeBytes(out.lines, main, from, to);
        if (digits) {
          if (sp.plain) writeSafeInteger(out.lines, int as number);
          else writeSafeScaled(out.lines, int as number, sp.divisor, sp.decimal);
        }
        else writeString(out.lines, text as string);
        writeByte(out.lines, 10);
        series++;
        continue;
      }
      if (!isHistogram(value)) {
        invalid++;
        continue;
      }
      if (histograms && sp.distribution !== undefined) {
        const labels = distributionPrefix(prefixes, sp, i);
        const out = familyFor(sp.distribution, true);
        if (out !== undefined && !(dedupe && repeated(latin1Key(`${sp.distribution.name}${labels}`)))) {
          const g = Math.min(groupingPower, value.groupingPower);
          const d = distributionLines(sp.distribution.name, labels, value, sp.unit, sp.format, g);
          writeString(out.lines, d.text);
          series += d.lines;
        }
      }
      if (!summaries || useBase === undefined) continue;
      const prev = baseValue(useBase, latest.descriptor, i);
      if (prev === undefined) continue;
      if (!isHistogram(prev)) {
        invalid++;
        continue;
      }
      const bounds = windowBounds(value, prev, qs.values);
      if (bounds === null) {
        invalid++;
        continue;
      }
      if (bounds === undefined) continue;
      const out = claim(sp.family, main, from, to);
      if (out !== undefined) writePercentiles(out, main, from, to, qs, bounds, sp, true);
    }

    // The oversampling view: percentiles of the per-sample rates within the window.
    if (rates === undefined || rates.descriptor !== latest.descriptor || !rates.serve(sinceNs)) continue;
    for (let k = 0; k < rates.indexes.length; k++) {
      const i = rates.indexes[k] as number;
      const sp = plan.series[i];
      if (sp?.rate === undefined) continue;
      const found = nearestRank(rates.samples(k, sinceNs, scratch), rqs.values);
      if (found === undefined) continue;
      const from = ratePrefix(prefixes, sp, i);
      const to = prefixes.rateAt[2 * i + 1] as number;
      const out = claim(sp.rate, prefixes.rates.buf, from, to);
      if (out !== undefined) writePercentiles(out, prefixes.rates.buf, from, to, rqs, found, sp, false);
    }
  }

  for (const x of options.extra ?? []) {
    const r = extraLine(x);
    if (r === undefined) {
      invalid++;
      continue;
    }
    const out = familyFor(r.decl, false);
    if (out === undefined || repeated(latin1Key(r.prefix))) continue;
    writeString(out.lines, r.prefix);
    writeString(out.lines, r.value);
    writeByte(out.lines, 10);
    series++;
  }

  // The body: the families in name order, each header and its lines, copied once into one buffer.
  const names = [...families.keys()].sort();
  const trailer = options.trailer === undefined || options.trailer === '' ? undefined : Buffer.from(options.trailer, 'utf8');
  let size = trailer?.length ?? 0;
  for (const name of names) {
    const out = families.get(name) as FamilyOut;
    if (out.lines.len > 0) size += headerOf(out.decl).length + out.lines.len;
  }
  const body = options.bodyBuffer?.(size) ?? Buffer.allocUnsafeSlow(size);
  if (body.length !== size) throw new Error(`exposition: a body buffer of ${body.length} bytes for ${size}`);
  let at = 0;
  const kept = new Map<string, Buffer>();
  for (const name of names) {
    const out = families.get(name) as FamilyOut;
    if (worthKeeping(out.lines.buf.length, out.lines.len)) kept.set(name, out.lines.buf);
    if (out.lines.len === 0) continue;
    at += headerOf(out.decl).copy(body, at);
    at += out.lines.buf.copy(body, at, 0, out.lines.len);
  }
  if (trailer !== undefined) at += trailer.copy(body, at);
  if (at !== size) throw new Error(`exposition: wrote ${at} of ${size} bytes`);
  spare = kept;
  return renderResult(body, series, duplicates, conflicts, invalid);
}

/**
 * The result, made outside renderExposition: a getter defined in there would
 * hold the render's whole closure context (its families and their line
 * buffers, tens of MB after a burst) for as long as the result is kept.
 */
function renderResult(body: Buffer, series: number, duplicates: number, conflicts: number, invalid: number): RenderResult {
  let text: string | undefined;
  return {
    body,
    get text() {
      text ??= body.toString('utf8');
      return text;
    },
    series,
    duplicates,
    conflicts,
    invalid,
  };
}

const NO_NAMES: ReadonlySet<string> = new Set();

/**
 * The metric names an exposition text declares (`# TYPE name type`), with
 * the sample names of its histograms and summaries.
 */
function trailerNames(text: string | undefined): ReadonlySet<string> {
  if (text === undefined || text === '') return NO_NAMES;
  const names = new Set<string>();
  for (const m of text.matchAll(/^# TYPE (\S+) (\S+)$/gm)) {
    const name = m[1] as string;
    names.add(name);
    if (m[2] === 'histogram' || m[2] === 'summary') for (const s of ['_bucket', '_sum', '_count']) names.add(name + s);
  }
  return names;
}

/** A series key from a string: the latin1 reading of its UTF-8 bytes, like the keys of line prefixes. */
function latin1Key(s: string): string {
  return Buffer.from(s, 'utf8').toString('latin1');
}

/** A rate in the raw unit per second, in the base unit per second. */
function formatRate(v: number, divisor: number): string | undefined {
  const x = divisor === 1 ? v : v / divisor;
  return Number.isFinite(x) ? String(x) : undefined;
}

/** Entries by host then sampler (stable), without copying when they already are. */
function sortedEntries(entries: Iterable<ViewEntry>): readonly ViewEntry[] {
  const list = Array.isArray(entries) ? (entries as readonly ViewEntry[]) : [...entries];
  for (let i = 1; i < list.length; i++) {
    if (compareEntries(list[i - 1] as ViewEntry, list[i] as ViewEntry) > 0) return [...list].sort(compareEntries);
  }
  return list;
}

function compareEntries(a: ViewEntry, b: ViewEntry): number {
  const x = a.latest;
  const y = b.latest;
  if (x.host !== y.host) return x.host < y.host ? -1 : 1;
  if (x.sampler !== y.sampler) return x.sampler < y.sampler ? -1 : 1;
  return 0;
}

interface PercentileLabels {
  readonly values: number[];
  /** `,percentile="0.5"} ` per value */
  readonly closed: Buffer[];
}

function percentileLabels(qs: readonly number[]): PercentileLabels {
  const values: number[] = [];
  const closed: Buffer[] = [];
  for (const q of qs) {
    if (typeof q !== 'number' || !(q >= 0 && q <= 1)) throw new RangeError(`percentile must be in [0, 1], got ${String(q)}`);
    if (values.includes(q)) continue;
    values.push(q);
    closed.push(Buffer.from(`,percentile="${String(q)}"} `, 'latin1'));
  }
  return { values, closed };
}

/** Percentile upper bounds of latest − base; undefined for a reset or an empty window, null if the math threw. */
function windowBounds(latest: SparseHistogram, base: SparseHistogram, qs: readonly number[]): bigint[] | undefined | null {
  try {
    const delta = subtract(latest, base);
    if (delta === undefined || delta.index.length === 0) return undefined;
    return quantilesOf(delta, qs);
  } catch {
    return null;
  }
}

function isHistogram(v: FrameValue | undefined): v is SparseHistogram {
  return typeof v === 'object' && v !== null && isValidSparse(v);
}

function extraLine(x: ExtraSeries): { decl: FamilyDecl; prefix: string; value: string } | undefined {
  const unit = x.unit ?? 'count';
  const fam = x.kind === 'counter' || x.kind === 'gauge' ? familyName(x.name, x.kind, unit) : undefined;
  const format = formatOf(unit);
  if (fam === undefined || format === undefined) return undefined;
  const value = typeof x.value === 'number' || typeof x.value === 'bigint' ? format(x.value) : undefined;
  if (value === undefined) return undefined;
  const keys: string[] = [];
  let labels = '';
  for (const [k, v] of Object.entries(x.labels ?? {})) {
    if (!/^[a-zA-Z_][a-zA-Z0-9_]*$/.test(k) || k.startsWith('__') || keys.includes(k)) return undefined;
    keys.push(k);
    labels += `${labels === '' ? '' : ','}${k}="${escapeLabelValue(String(v))}"`;
  }
  const help = x.help.trim() === '' ? x.name : x.help;
  const decl = familyDecl(fam, x.kind, unit, keys.join(','), help);
  return { decl, prefix: labels === '' ? `${fam} ` : `${fam}{${labels}} `, value };
}
