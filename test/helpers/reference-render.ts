/**
 * The exporter's renderer as it was before issue 19 (main at cb7fd86), kept
 * as the reference the byte-writing renderer is compared with
 * (test/exporter/render-reference.test.ts): the same entries must give the
 * same text and the same counts. Not used by the exporter.
 */
import type { FrameValue } from '../../src/frame/types.js';
import type { SparseHistogram } from '../../src/metrics/histogram.js';
import { DEFAULT_PERCENTILES, isValidSparse, percentiles as quantilesOf, subtract } from '../../src/metrics/histogram.js';
import { distributionLines } from '../../src/exporter/distribution.js';
import { escapeLabelValue, familyName, formatOf } from '../../src/exporter/names.js';
import type { DescriptorPlan, FamilyDecl, SeriesPlan } from '../../src/exporter/plan.js';
import { baseValue, familyDecl, mayRepeat, planOf } from '../../src/exporter/plan.js';
import { nearestRank } from '../../src/exporter/rates.js';
import type { ViewEntry } from '../../src/exporter/state.js';

/** The line prefixes of one host as strings, as plan.ts kept them before issue 19. */
interface HostPrefixes {
  readonly main: readonly string[];
  readonly rate: (string | undefined)[];
  readonly distribution: (string | undefined)[];
  readonly hostLabel: string;
}

const prefixCache = new WeakMap<DescriptorPlan, Map<string, HostPrefixes>>();

function prefixesOf(plan: DescriptorPlan, host: string): HostPrefixes {
  let hosts = prefixCache.get(plan);
  if (hosts === undefined) {
    hosts = new Map();
    prefixCache.set(plan, hosts);
  }
  let p = hosts.get(host);
  if (p === undefined) {
    const hostLabel = `host="${escapeLabelValue(String(host))}"`;
    const main = plan.series.map((sp) => {
      if (sp === undefined) return '';
      const head = `${sp.family.name}{${hostLabel}${sp.labels}`;
      return sp.kind === 'histogram' ? head : `${head}} `;
    });
    p = { main, rate: [], distribution: [], hostLabel };
    hosts.set(host, p);
  }
  return p;
}

function ratePrefix(p: HostPrefixes, sp: SeriesPlan, i: number): string {
  let s = p.rate[i];
  if (s === undefined) {
    s = `${(sp.rate as FamilyDecl).name}{${p.hostLabel}${sp.labels}`;
    p.rate[i] = s;
  }
  return s;
}

function distributionPrefix(p: HostPrefixes, sp: SeriesPlan, i: number): string {
  let s = p.distribution[i];
  if (s === undefined) {
    s = `{${p.hostLabel}${sp.labels}`;
    p.distribution[i] = s;
  }
  return s;
}

/** One of the exporter's own series, rendered like the agents' ones (no host label unless given). */
interface ExtraSeries {
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

interface RenderOptions {
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
}

/**
 * A family rendered whole by its caller: the alerts gauge, whose series each
 * carry labels of their own. It claims its name before any other series, so
 * an agent's family of the same name is left out (a conflict) even while it
 * has no sample lines; like every family, it is written only with some.
 */
interface RawFamily {
  readonly decl: FamilyDecl;
  /** its sample lines, each ending with a line feed */
  readonly text: string;
  /** how many sample lines text holds */
  readonly lines: number;
}

interface RenderResult {
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

interface FamilyOut {
  readonly decl: FamilyDecl;
  /** sample lines written so far */
  text: string;
  /** written by agents' series (false: the exporter's own); the two never share a family */
  readonly agent: boolean;
  /** a RawFamily: no other series joins it */
  readonly raw?: true;
}

const DEFAULT_RATE_PERCENTILES = [0.5, 0.9, 0.99, 1] as const;

export function renderExpositionReference(entries: Iterable<ViewEntry>, options: RenderOptions = {}): RenderResult {
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

  for (const f of options.families ?? []) {
    if (families.has(f.decl.name)) {
      conflicts++;
      continue;
    }
    families.set(f.decl.name, { decl: f.decl, text: f.text, agent: false, raw: true });
    series += f.lines;
  }

  /** line prefixes written so far: family and labels */
  const seen = new Set<string>();
  const scratch: number[] = [];

  /** The family to write to, or undefined (counted) when `decl` conflicts with it. */
  const familyFor = (decl: FamilyDecl, agent: boolean): FamilyOut | undefined => {
    const out = families.get(decl.name);
    if (out === undefined) {
      const created: FamilyOut = { decl, text: '', agent };
      families.set(decl.name, created);
      return created;
    }
    const d = out.decl;
    if (out.raw !== true && out.agent === agent && (d === decl || (d.type === decl.type && d.unit === decl.unit && d.labelKeys === decl.labelKeys))) return out;
    conflicts++;
    return undefined;
  };

  /** Whether the current host's series must be checked for duplicates (see mayRepeat). */
  let dedupe = false;
  /**
   * The family for a new series identified by `key`, or undefined (counted)
   * for a conflict or a duplicate. Keys are only remembered where a
   * duplicate is possible: agent series of a host whose descriptors may
   * repeat one, and the exporter's own series.
   */
  const claim = (decl: FamilyDecl, key: string, agent = true): FamilyOut | undefined => {
    const out = familyFor(decl, agent);
    if (out === undefined) return undefined;
    if (dedupe || !agent) {
      if (seen.has(key)) {
        duplicates++;
        return undefined;
      }
      seen.add(key);
    }
    return out;
  };

  /** Percentile gauge lines `prefix,percentile="q"} v` for values in the raw unit. */
  const writePercentiles = (out: FamilyOut, prefix: string, labels: PercentileLabels, values: readonly (number | bigint)[], sp: SeriesPlan, exact: boolean): void => {
    for (let k = 0; k < values.length; k++) {
      const v = values[k] as number | bigint;
      const text = exact ? sp.format(v) : formatRate(v as number, sp.divisor);
      if (text === undefined) continue;
      out.text += `${prefix}${labels.labels[k] as string}} ${text}\n`;
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
    const values = latest.values;
    const useBase = base !== undefined && base !== latest && base.instance === latest.instance ? base : undefined;
    for (let i = 0; i < plan.series.length; i++) {
      const sp = plan.series[i];
      const value = values[i];
      if (sp === undefined || value === undefined) {
        invalid++;
        continue;
      }
      const prefix = prefixes.main[i] as string;
      if (sp.kind !== 'histogram') {
        const text = typeof value === 'object' ? undefined : sp.format(value);
        if (text === undefined) {
          invalid++;
          continue;
        }
        const out = claim(sp.family, prefix);
        if (out === undefined) continue;
        out.text += `${prefix}${text}\n`;
        series++;
        continue;
      }
      if (!isHistogram(value)) {
        invalid++;
        continue;
      }
      if (histograms && sp.distribution !== undefined) {
        const labels = distributionPrefix(prefixes, sp, i);
        const out = claim(sp.distribution, `${sp.distribution.name}${labels}`);
        if (out !== undefined) {
          const g = Math.min(groupingPower, value.groupingPower);
          const d = distributionLines(sp.distribution.name, labels, value, sp.unit, sp.format, g);
          out.text += d.text;
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
      const out = claim(sp.family, prefix);
      if (out !== undefined) writePercentiles(out, prefix, qs, bounds, sp, true);
    }

    // The oversampling view: percentiles of the per-sample rates within the window.
    if (rates === undefined || rates.descriptor !== latest.descriptor || !rates.serve(sinceNs)) continue;
    for (let k = 0; k < rates.indexes.length; k++) {
      const i = rates.indexes[k] as number;
      const sp = plan.series[i];
      if (sp?.rate === undefined) continue;
      const found = nearestRank(rates.samples(k, sinceNs, scratch), rqs.values);
      if (found === undefined) continue;
      const prefix = ratePrefix(prefixes, sp, i);
      const out = claim(sp.rate, prefix);
      if (out !== undefined) writePercentiles(out, prefix, rqs, found, sp, false);
    }
  }

  for (const x of options.extra ?? []) {
    const r = extraLine(x);
    if (r === undefined) {
      invalid++;
      continue;
    }
    const out = claim(r.decl, r.prefix, false);
    if (out === undefined) continue;
    out.text += `${r.prefix}${r.value}\n`;
    series++;
  }

  // One string built by appending (V8 ropes): measured faster than joining an array of lines.
  let text = '';
  for (const name of [...families.keys()].sort()) {
    const out = families.get(name) as FamilyOut;
    if (out.text !== '') text += out.decl.header + out.text;
  }
  return { text, series, duplicates, conflicts, invalid };
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
  /** `,percentile="0.5"` per value */
  readonly labels: string[];
}

function percentileLabels(qs: readonly number[]): PercentileLabels {
  const values: number[] = [];
  const labels: string[] = [];
  for (const q of qs) {
    if (typeof q !== 'number' || !(q >= 0 && q <= 1)) throw new RangeError(`percentile must be in [0, 1], got ${String(q)}`);
    if (values.includes(q)) continue;
    values.push(q);
    labels.push(`,percentile="${String(q)}"`);
  }
  return { values, labels };
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
