/**
 * Prometheus text exposition (format 0.0.4) of the exporter's view: counters
 * and gauges as they are, scaled to base units; histograms as percentile
 * gauges over the window base → latest. Pure; per-descriptor work (family
 * names, escaped label strings) is cached so a steady-state render mostly
 * concatenates strings.
 */
import type { Descriptor, Frame, FrameValue } from '../frame/types.js';
import type { SparseHistogram } from '../metrics/histogram.js';
import { DEFAULT_PERCENTILES, isValidSparse, percentiles as quantilesOf, subtract } from '../metrics/histogram.js';
import type { MetricKind } from '../metrics/metric.js';
import type { Format } from './names.js';
import { escapeHelp, escapeLabelValue, familyName, formatOf, isValidLabelName } from './names.js';
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
  /** quantiles in [0, 1] for histogram series, printed as given; default DEFAULT_PERCENTILES */
  readonly percentiles?: readonly number[];
  /** the exporter's own metrics, appended to the families like any other */
  readonly extra?: readonly ExtraSeries[];
}

export interface RenderResult {
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

/** What every series written to one family must agree on. */
interface FamilyDecl {
  readonly name: string;
  readonly kind: MetricKind;
  readonly unit: string;
  readonly labelKeys: string;
  /** `# HELP …\n# TYPE …\n` */
  readonly header: string;
}

interface SeriesPlan {
  readonly family: FamilyDecl;
  readonly kind: MetricKind;
  /** `,k="v"…` escaped, in declared label order (after the host label) */
  readonly labels: string;
  readonly format: Format;
}

interface DescriptorPlan {
  /** per series index; undefined when the series cannot be rendered */
  readonly series: readonly (SeriesPlan | undefined)[];
  /**
   * per host, per series index: the sample line up to the value
   * (`family{host="h",k="v"} `), or for a histogram up to the percentile
   * label (`family{host="h",k="v"`). The same string objects every render,
   * so they also serve as cheap de-duplication keys (hash cached).
   */
  readonly prefixes: Map<string, readonly string[]>;
}

interface FamilyOut {
  readonly decl: FamilyDecl;
  readonly parts: string[];
}

const plans = new WeakMap<Descriptor, DescriptorPlan>();
/** series identity -> index, for matching a base frame with another descriptor */
const seriesIndexes = new WeakMap<Descriptor, Map<string, number>>();
const hostLabels = new Map<string, string>();
/** hosts per descriptor plan whose line prefixes are cached */
const MAX_CACHED_HOSTS = 1024;

export function renderExposition(entries: Iterable<ViewEntry>, options: RenderOptions = {}): RenderResult {
  const qs = percentileLabels(options.percentiles ?? DEFAULT_PERCENTILES);
  const families = new Map<string, FamilyOut>();
  let series = 0;
  let duplicates = 0;
  let conflicts = 0;
  let invalid = 0;

  /** line prefixes written so far: family and labels */
  const seen = new Set<string>();

  /** The family to write to, or undefined (counted) when `decl` conflicts with it. */
  const familyFor = (decl: FamilyDecl): FamilyOut | undefined => {
    const out = families.get(decl.name);
    if (out === undefined) {
      const created: FamilyOut = { decl, parts: [] };
      families.set(decl.name, created);
      return created;
    }
    const d = out.decl;
    if (d === decl || (d.kind === decl.kind && d.unit === decl.unit && d.labelKeys === decl.labelKeys)) return out;
    conflicts++;
    return undefined;
  };

  for (const { latest, base } of sortedEntries(entries)) {
    const plan = planOf(latest.descriptor);
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
      const prefix = prefixes[i] as string;
      if (sp.kind === 'histogram') {
        if (!isHistogram(value)) {
          invalid++;
          continue;
        }
        if (useBase === undefined) continue;
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
        const out = familyFor(sp.family);
        if (out === undefined) continue;
        if (seen.has(prefix)) {
          duplicates++;
          continue;
        }
        seen.add(prefix);
        for (let k = 0; k < bounds.length; k++) {
          const text = sp.format(bounds[k] as bigint);
          if (text === undefined) continue;
          out.parts.push(`${prefix}${qs.labels[k] as string}} ${text}\n`);
          series++;
        }
        continue;
      }
      const text = typeof value === 'object' ? undefined : sp.format(value);
      if (text === undefined) {
        invalid++;
        continue;
      }
      const out = familyFor(sp.family);
      if (out === undefined) continue;
      if (seen.has(prefix)) {
        duplicates++;
        continue;
      }
      seen.add(prefix);
      out.parts.push(`${prefix}${text}\n`);
      series++;
    }
  }

  for (const x of options.extra ?? []) {
    const r = extraLine(x);
    if (r === undefined) {
      invalid++;
      continue;
    }
    const out = familyFor(r.decl);
    if (out === undefined) continue;
    if (seen.has(r.prefix)) {
      duplicates++;
      continue;
    }
    seen.add(r.prefix);
    out.parts.push(`${r.prefix}${r.value}\n`);
    series++;
  }

  const names = [...families.keys()].sort();
  const chunks: string[] = [];
  for (const name of names) {
    const out = families.get(name) as FamilyOut;
    if (out.parts.length === 0) continue;
    chunks.push(out.decl.header);
    for (const p of out.parts) chunks.push(p);
  }
  return { text: chunks.join(''), series, duplicates, conflicts, invalid };
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

function hostLabelOf(host: string): string {
  let s = hostLabels.get(host);
  if (s === undefined) {
    if (hostLabels.size >= 4096) hostLabels.clear();
    s = `host="${escapeLabelValue(String(host))}"`;
    hostLabels.set(host, s);
  }
  return s;
}

function prefixesOf(plan: DescriptorPlan, host: string): readonly string[] {
  let p = plan.prefixes.get(host);
  if (p === undefined) {
    const hostLabel = hostLabelOf(host);
    p = plan.series.map((sp) => {
      if (sp === undefined) return '';
      const head = `${sp.family.name}{${hostLabel}${sp.labels}`;
      return sp.kind === 'histogram' ? head : `${head}} `;
    });
    if (plan.prefixes.size >= MAX_CACHED_HOSTS) plan.prefixes.clear();
    plan.prefixes.set(host, p);
  }
  return p;
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

/** The base frame's value of latest's series i, matched by identity when the descriptors differ. */
function baseValue(base: Frame, latestDescriptor: Descriptor, i: number): FrameValue | undefined {
  if (base.descriptor === latestDescriptor) return base.values[i];
  const s = latestDescriptor.series[i];
  if (s === undefined) return undefined;
  const j = indexOfSeries(base.descriptor).get(seriesKey(s));
  return j === undefined ? undefined : base.values[j];
}

function seriesKey(s: unknown): string {
  return JSON.stringify(s);
}

function indexOfSeries(d: Descriptor): Map<string, number> {
  let m = seriesIndexes.get(d);
  if (m === undefined) {
    m = new Map();
    const series = Array.isArray(d.series) ? d.series : [];
    for (let i = 0; i < series.length; i++) {
      const s = series[i];
      if (!Array.isArray(s)) continue;
      const key = seriesKey(s);
      if (!m.has(key)) m.set(key, i);
    }
    seriesIndexes.set(d, m);
  }
  return m;
}

function planOf(d: Descriptor): DescriptorPlan {
  let plan = plans.get(d);
  if (plan === undefined) {
    plan = buildPlan(d);
    plans.set(d, plan);
  }
  return plan;
}

function buildPlan(d: Descriptor): DescriptorPlan {
  const metrics = typeof d.metrics === 'object' && d.metrics !== null ? d.metrics : {};
  const decls = new Map<string, { family: FamilyDecl; kind: MetricKind; keys: readonly string[]; format: Format } | undefined>();
  const declOf = (name: string) => {
    if (decls.has(name)) return decls.get(name);
    const m = Object.hasOwn(metrics, name) ? metrics[name] : undefined;
    let r: { family: FamilyDecl; kind: MetricKind; keys: readonly string[]; format: Format } | undefined;
    if (m !== undefined && typeof m === 'object' && m !== null) {
      const kind = m.kind;
      const keys = m.labels;
      const unitOk = typeof m.unit === 'string';
      const fam = unitOk && (kind === 'counter' || kind === 'gauge' || kind === 'histogram') ? familyName(name, kind, m.unit) : undefined;
      const format = unitOk ? formatOf(m.unit) : undefined;
      const keysOk =
        Array.isArray(keys) && keys.every((k) => typeof k === 'string' && isValidLabelName(k)) && new Set(keys).size === keys.length;
      if (fam !== undefined && format !== undefined && keysOk) {
        const help = typeof m.description === 'string' && m.description.trim() !== '' ? m.description : name;
        const type = kind === 'counter' ? 'counter' : 'gauge';
        const family: FamilyDecl = {
          name: fam,
          kind,
          unit: m.unit,
          labelKeys: ['host', ...(keys as string[])].join(','),
          header: `# HELP ${fam} ${escapeHelp(help)}\n# TYPE ${fam} ${type}\n`,
        };
        r = { family, kind, keys, format };
      }
    }
    decls.set(name, r);
    return r;
  };

  const series: (SeriesPlan | undefined)[] = [];
  for (const s of Array.isArray(d.series) ? d.series : []) {
    const decl = Array.isArray(s) && typeof s[0] === 'string' ? declOf(s[0]) : undefined;
    const values = Array.isArray(s) ? s[1] : undefined;
    if (decl === undefined || !Array.isArray(values) || values.length !== decl.keys.length) {
      series.push(undefined);
      continue;
    }
    let labels = '';
    for (let k = 0; k < values.length; k++) {
      labels += `,${decl.keys[k] as string}="${escapeLabelValue(String(values[k]))}"`;
    }
    series.push({ family: decl.family, kind: decl.kind, labels, format: decl.format });
  }
  return { series, prefixes: new Map() };
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
  const decl: FamilyDecl = {
    name: fam,
    kind: x.kind,
    unit,
    labelKeys: keys.join(','),
    header: `# HELP ${fam} ${escapeHelp(help)}\n# TYPE ${fam} ${x.kind}\n`,
  };
  return { decl, prefix: labels === '' ? `${fam} ` : `${fam}{${labels}} `, value };
}
