/**
 * What the renderer works out once per descriptor and host instead of once
 * per scrape: family declarations, escaped label strings and sample line
 * prefixes. Descriptors come from agents and are validated here, never
 * trusted: a series whose declaration is unusable has no plan.
 */
import type { Descriptor, Frame, FrameValue } from '../frame/types.js';
import type { MetricKind } from '../metrics/metric.js';
import { byteOut, type ByteOut, writeByte, writeString } from './bytes.js';
import type { Format } from './names.js';
import { decimalDigitsOf, escapeHelp, escapeLabelValue, familyName, formatOf, isPlainFormat, isValidLabelName, prometheusUnit } from './names.js';

export type FamilyType = 'counter' | 'gauge' | 'histogram';

/** What every series written to one family must agree on. */
export interface FamilyDecl {
  readonly name: string;
  readonly type: FamilyType;
  readonly unit: string;
  readonly labelKeys: string;
  /** `# HELP …\n# TYPE …\n` */
  readonly header: string;
}

export interface SeriesPlan {
  readonly kind: MetricKind;
  /** counters and gauges as they are; histograms as percentile gauges */
  readonly family: FamilyDecl;
  /** counters: the percentile gauges of their per-sample rates (the oversampling view) */
  readonly rate: FamilyDecl | undefined;
  /** histograms: the full Prometheus histogram */
  readonly distribution: FamilyDecl | undefined;
  /** `,k="v"…` escaped, in declared label order (after the host label) */
  readonly labels: string;
  readonly unit: string;
  readonly format: Format;
  /** format is String(v): a safe integer value can be written as its digits */
  readonly plain: boolean;
  /** format writes v / 10^decimal exactly (divisor is 10^decimal); -1 for other formats */
  readonly decimal: number;
  /** raw unit → base unit: divide by this (1 when the unit is the base unit) */
  readonly divisor: number;
}

/**
 * Sample line prefixes of one host, per series index, as UTF-8 bytes the
 * renderer copies into its output.
 */
export interface HostPrefixes {
  /**
   * Series i's prefix is main[at[i], at[i + 1]) (empty when it has no plan):
   * `family{host="h",k="v"} ` for counters and gauges, `family{host="h",k="v"`
   * for histograms (the percentile label follows).
   */
  readonly main: Buffer;
  readonly at: Int32Array;
  /** `rate_family{host="h",k="v"` of series i at rates.buf[rateAt[2i], rateAt[2i + 1]), written when first needed (-1: not yet) */
  readonly rates: ByteOut;
  readonly rateAt: Int32Array;
  /** `{host="h",k="v"` (the family name and sample name suffix are added by the writer) */
  readonly distribution: (string | undefined)[];
  readonly hostLabel: string;
  /** the render that last used these prefixes (see renderStarted) */
  used: number;
}

export interface DescriptorPlan {
  /** per series index; undefined when the series cannot be rendered */
  readonly series: readonly (SeriesPlan | undefined)[];
  readonly prefixes: Map<string, HostPrefixes>;
  /** prefixes.size at which hosts not used by the last two renders are let go */
  sweepAt: number;
  /** every family the descriptor's series can write to */
  readonly families: ReadonlySet<string>;
  /** some series appears twice (same family and labels): the renderer must de-duplicate */
  readonly repeated: boolean;
}

const plans = new WeakMap<Descriptor, DescriptorPlan>();
/** series identity -> index, for matching a base frame with another descriptor */
const seriesIndexes = new WeakMap<Descriptor, Map<string, number>>();
const hostLabels = new Map<string, string>();
/**
 * Hosts per descriptor plan whose line prefixes are cached before the ones no
 * recent render used are let go (hosts that went away). Hosts still rendered
 * are kept however many there are: they cost about what their lines in the
 * body do, and dropping them made every render rebuild every prefix once a
 * fleet passed this many hosts (twice the render time).
 */
const MAX_CACHED_HOSTS = 1024;
/** the current render, stamped on the prefixes it uses */
let generation = 0;

/** Called by the renderer at the start of each render. */
export function renderStarted(): void {
  generation++;
}

export function planOf(d: Descriptor): DescriptorPlan {
  let plan = plans.get(d);
  if (plan === undefined) {
    plan = buildPlan(d);
    plans.set(d, plan);
  }
  return plan;
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

export function prefixesOf(plan: DescriptorPlan, host: string): HostPrefixes {
  let p = plan.prefixes.get(host);
  if (p !== undefined) p.used = generation;
  else {
    const hostLabel = hostLabelOf(host);
    const n = plan.series.length;
    const out = byteOut(n * 64);
    const at = new Int32Array(n + 1);
    for (let i = 0; i < n; i++) {
      const sp = plan.series[i];
      at[i] = out.len;
      if (sp === undefined) continue;
      writeString(out, sp.family.name);
      writeByte(out, 123); // {
      writeString(out, hostLabel);
      writeString(out, sp.labels);
      if (sp.kind !== 'histogram') writeString(out, '} ');
    }
    at[n] = out.len;
    const main = Buffer.allocUnsafeSlow(out.len);
    out.buf.copy(main, 0, 0, out.len);
    p = { main, at, rates: byteOut(), rateAt: new Int32Array(2 * n).fill(-1), distribution: [], hostLabel, used: generation };
    if (plan.prefixes.size >= plan.sweepAt) {
      for (const [h, q] of plan.prefixes) if (q.used < generation - 1) plan.prefixes.delete(h);
      plan.sweepAt = Math.max(MAX_CACHED_HOSTS, 2 * plan.prefixes.size);
    }
    plan.prefixes.set(host, p);
  }
  return p;
}

/** Writes series i's rate prefix into p.rates the first time; returns where it starts (p.rateAt[2i + 1] is its end). */
export function ratePrefix(p: HostPrefixes, sp: SeriesPlan, i: number): number {
  let from = p.rateAt[2 * i] as number;
  if (from < 0) {
    from = p.rates.len;
    writeString(p.rates, (sp.rate as FamilyDecl).name);
    writeByte(p.rates, 123); // {
    writeString(p.rates, p.hostLabel);
    writeString(p.rates, sp.labels);
    p.rateAt[2 * i] = from;
    p.rateAt[2 * i + 1] = p.rates.len;
  }
  return from;
}

export function distributionPrefix(p: HostPrefixes, sp: SeriesPlan, i: number): string {
  let s = p.distribution[i];
  if (s === undefined) {
    s = `{${p.hostLabel}${sp.labels}`;
    p.distribution[i] = s;
  }
  return s;
}

/** The base frame's value of latest's series i, matched by identity when the descriptors differ. */
export function baseValue(base: Frame, latestDescriptor: Descriptor, i: number): FrameValue | undefined {
  if (base.descriptor === latestDescriptor) return base.values[i];
  const s = latestDescriptor.series[i];
  if (s === undefined) return undefined;
  const j = indexOfSeries(base.descriptor).get(JSON.stringify(s));
  return j === undefined ? undefined : base.values[j];
}

function indexOfSeries(d: Descriptor): Map<string, number> {
  let m = seriesIndexes.get(d);
  if (m === undefined) {
    m = new Map();
    const series = Array.isArray(d.series) ? d.series : [];
    for (let i = 0; i < series.length; i++) {
      const s = series[i];
      if (!Array.isArray(s)) continue;
      const key = JSON.stringify(s);
      if (!m.has(key)) m.set(key, i);
    }
    seriesIndexes.set(d, m);
  }
  return m;
}

export function familyDecl(name: string, type: FamilyType, unit: string, labelKeys: string, help: string): FamilyDecl {
  return { name, type, unit, labelKeys, header: `# HELP ${name} ${escapeHelp(help)}\n# TYPE ${name} ${type}\n` };
}

/** The family of the per-sample rate percentiles of a counter: its family without `_total`, plus `_rate`. */
export function rateFamilyName(name: string, unit: string): string | undefined {
  const counter = familyName(name, 'counter', unit);
  return counter === undefined ? undefined : `${counter.slice(0, -'_total'.length)}_rate`;
}

/** The full histogram family: `<name>_distribution` with the unit suffix last. */
export function distributionFamilyName(name: string, unit: string): string | undefined {
  return familyName(`${name}_distribution`, 'histogram', unit);
}

interface MetricPlan {
  readonly kind: MetricKind;
  readonly keys: readonly string[];
  readonly family: FamilyDecl;
  readonly rate: FamilyDecl | undefined;
  readonly distribution: FamilyDecl | undefined;
  readonly unit: string;
  readonly format: Format;
  readonly divisor: number;
}

function metricPlan(name: string, m: unknown): MetricPlan | undefined {
  if (typeof m !== 'object' || m === null) return undefined;
  const { kind, unit, labels: keys, description } = m as Record<string, unknown>;
  if (typeof unit !== 'string' || (kind !== 'counter' && kind !== 'gauge' && kind !== 'histogram')) return undefined;
  const fam = familyName(name, kind, unit);
  const format = formatOf(unit);
  const pu = prometheusUnit(unit);
  const keysOk = Array.isArray(keys) && keys.every((k) => typeof k === 'string' && isValidLabelName(k)) && new Set(keys).size === keys.length;
  if (fam === undefined || format === undefined || pu === undefined || !keysOk) return undefined;
  const help = typeof description === 'string' && description.trim() !== '' ? description : name;
  const labelKeys = ['host', ...(keys as string[])].join(',');
  const family = familyDecl(fam, kind === 'counter' ? 'counter' : 'gauge', unit, labelKeys, help);
  let rate: FamilyDecl | undefined;
  let distribution: FamilyDecl | undefined;
  if (kind === 'counter') {
    const rf = rateFamilyName(name, unit);
    const per = pu.suffix === '' ? '' : ` (${pu.suffix} per second)`;
    if (rf !== undefined) {
      rate = familyDecl(rf, 'gauge', unit, `${labelKeys},percentile`, `Percentiles of the per-second rate${per} between consecutive samples within the last interval: ${help}`);
    }
  } else if (kind === 'histogram') {
    const df = distributionFamilyName(name, unit);
    if (df !== undefined) {
      distribution = familyDecl(df, 'histogram', unit, labelKeys, `${help} (cumulative since the agent started; le is the bucket's upper bound)`);
    }
  }
  const divisor = pu.scale < 1 ? Math.round(1 / pu.scale) : 1;
  return { kind, keys: keys as string[], family, rate, distribution, unit, format, divisor };
}

function buildPlan(d: Descriptor): DescriptorPlan {
  const metrics: Record<string, unknown> = typeof d.metrics === 'object' && d.metrics !== null ? d.metrics : {};
  const decls = new Map<string, MetricPlan | undefined>();
  const declOf = (name: string): MetricPlan | undefined => {
    if (!decls.has(name)) decls.set(name, Object.hasOwn(metrics, name) ? metricPlan(name, metrics[name]) : undefined);
    return decls.get(name);
  };
  const series: (SeriesPlan | undefined)[] = [];
  const families = new Set<string>();
  const identities = new Set<string>();
  let repeated = false;
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
    const { kind, family, rate, distribution, unit, format, divisor } = decl;
    series.push({ kind, family, rate, distribution, labels, unit, format, plain: isPlainFormat(format), decimal: decimalDigitsOf(format) ?? -1, divisor });
    for (const f of [family, rate, distribution]) if (f !== undefined) families.add(f.name);
    const identity = `${family.name}{${labels}`;
    if (identities.has(identity)) repeated = true;
    identities.add(identity);
  }
  return { series, prefixes: new Map(), sweepAt: MAX_CACHED_HOSTS, families, repeated };
}

/** Per host, the plans of its last render and whether they can write the same series twice. */
const hostOverlap = new Map<string, { plans: readonly DescriptorPlan[]; overlap: boolean }>();

/**
 * Whether the descriptors of one host can write the same series twice: one
 * repeats a series, or two of them share a family. Almost never, so the
 * renderer de-duplicates only such hosts. Cached while the host's set of
 * descriptors stays the same.
 */
export function mayRepeat(host: string, plans: readonly DescriptorPlan[]): boolean {
  const cached = hostOverlap.get(host);
  if (cached !== undefined && cached.plans.length === plans.length && cached.plans.every((p, i) => p === plans[i])) return cached.overlap;
  let overlap = plans.some((p) => p.repeated);
  if (!overlap && plans.length > 1) {
    const seen = new Set<string>();
    let total = 0;
    for (const p of plans) {
      total += p.families.size;
      for (const f of p.families) seen.add(f);
    }
    overlap = seen.size < total;
  }
  if (hostOverlap.size >= 65_536) hostOverlap.clear();
  hostOverlap.set(host, { plans: [...plans], overlap });
  return overlap;
}
