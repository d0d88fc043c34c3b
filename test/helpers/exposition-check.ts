/**
 * Semantic checks of a Prometheus text exposition (0.0.4) that promtool does
 * not make: parseable sample lines, unique series, one HELP and one TYPE per
 * family before its contiguous samples, `_total` on counters, finite values,
 * valid label names, counters not negative.
 * Histograms: only `_bucket`, `_sum` and `_count` samples; per series (labels
 * without `le`) contiguous, `le` a float or `+Inf` and strictly increasing,
 * counts non-negative integers and non-decreasing, a `+Inf` bucket equal to
 * `_count`, a `_sum`. Gauges with a `percentile` label and summaries: the
 * label in [0, 1], once per series, values non-decreasing as it increases.
 * `le` only on histogram buckets, `quantile` only on summary samples.
 * Returns the problems found (empty = OK).
 */

const METRIC_NAME = /^[a-zA-Z_:][a-zA-Z0-9_:]*$/;
const LABEL_NAME = /^[a-zA-Z_][a-zA-Z0-9_]*$/;
const SAMPLE_SUFFIXES = ['_bucket', '_count', '_sum'];
/** A float as Prometheus writes one, without Inf and NaN. */
const FLOAT = /^[+-]?(\d+\.?\d*|\.\d+)([eE][+-]?\d+)?$/;

interface Family {
  help: number;
  type: string | undefined;
  samples: number;
  /** index of the family block the samples belong to; a second block means non-contiguous */
  closed: boolean;
}

/** Parses `{a="x",b="y"}` starting at `i` (at the `{`); returns the labels and the index after `}`. */
function parseLabels(line: string, i: number): { labels: [string, string][]; end: number } | string {
  const labels: [string, string][] = [];
  i++; // {
  for (;;) {
    if (line[i] === '}') return { labels, end: i + 1 };
    const m = /^([^=,}\s]*)="/.exec(line.slice(i));
    if (m === null) return `expected label name at column ${i + 1}`;
    const name = m[1] ?? '';
    i += m[0].length;
    let value = '';
    for (;;) {
      const c = line[i];
      if (c === undefined) return 'unterminated label value';
      if (c === '"') break;
      if (c === '\\') {
        const n = line[i + 1];
        if (n === 'n') value += '\n';
        else if (n === '\\' || n === '"') value += n;
        else return `invalid escape \\${n ?? ''} in label value`;
        i += 2;
        continue;
      }
      value += c;
      i++;
    }
    i++; // closing quote
    labels.push([name, value]);
    if (line[i] === ',') i++;
    else if (line[i] !== '}') return `expected , or } at column ${i + 1}`;
  }
}

/** HELP text may only escape backslash and line feed. */
function validHelpEscapes(text: string): boolean {
  for (let i = 0; i < text.length; i++) {
    if (text[i] !== '\\') continue;
    const n = text[i + 1];
    if (n !== 'n' && n !== '\\') return false;
    i++;
  }
  return true;
}

function familyOf(name: string, families: Map<string, Family>): string {
  if (families.has(name)) return name;
  for (const s of SAMPLE_SUFFIXES) {
    if (name.endsWith(s)) {
      const base = name.slice(0, -s.length);
      const f = families.get(base);
      if (f !== undefined && (f.type === 'histogram' || f.type === 'summary')) return base;
    }
  }
  return name;
}

export function checkExposition(text: string): string[] {
  const problems: string[] = [];
  if (text !== '' && !text.endsWith('\n')) problems.push('text does not end with a newline');
  const families = new Map<string, Family>();
  const seen = new Set<string>();
  const samples: Sample[] = [];
  let current: string | undefined;
  const lines = text.split('\n');
  if (lines[lines.length - 1] === '') lines.pop();
  const family = (name: string): Family => {
    let f = families.get(name);
    if (f === undefined) {
      f = { help: 0, type: undefined, samples: 0, closed: false };
      families.set(name, f);
    }
    return f;
  };
  const enter = (name: string, at: string) => {
    if (current === name) return;
    if (current !== undefined) {
      const prev = families.get(current);
      if (prev !== undefined) prev.closed = true;
    }
    const f = families.get(name);
    if (f?.closed) problems.push(`${at}: family ${name} is not contiguous`);
    current = name;
  };

  lines.forEach((line, n) => {
    const at = `line ${n + 1}`;
    if (line.startsWith('#')) {
      const m = /^# (HELP|TYPE) (\S+)(?: (.*))?$/.exec(line);
      if (m === null) return; // a plain comment
      const [, what, name = '', rest = ''] = m;
      if (!METRIC_NAME.test(name)) problems.push(`${at}: invalid metric name ${JSON.stringify(name)}`);
      enter(name, at);
      const f = family(name);
      if (f.samples > 0) problems.push(`${at}: ${what} for ${name} after its samples`);
      if (what === 'HELP') {
        f.help++;
        if (f.help > 1) problems.push(`${at}: second HELP for ${name}`);
        if (!validHelpEscapes(rest)) problems.push(`${at}: invalid escape in HELP of ${name}`);
      } else {
        if (f.type !== undefined) problems.push(`${at}: second TYPE for ${name}`);
        if (!['counter', 'gauge', 'histogram', 'summary', 'untyped'].includes(rest)) {
          problems.push(`${at}: unknown TYPE ${JSON.stringify(rest)} for ${name}`);
        }
        f.type = rest;
        if (rest === 'counter' && !name.endsWith('_total')) problems.push(`${at}: counter ${name} does not end with _total`);
      }
      return;
    }
    if (line.trim() === '') {
      problems.push(`${at}: empty line`);
      return;
    }
    const nm = /^[a-zA-Z_:][a-zA-Z0-9_:]*/.exec(line);
    if (nm === null) {
      problems.push(`${at}: no metric name: ${JSON.stringify(line)}`);
      return;
    }
    const name = nm[0];
    let i = name.length;
    let labels: [string, string][] = [];
    if (line[i] === '{') {
      const r = parseLabels(line, i);
      if (typeof r === 'string') {
        problems.push(`${at}: ${r}: ${JSON.stringify(line)}`);
        return;
      }
      labels = r.labels;
      i = r.end;
    }
    const rest = line.slice(i);
    const vm = /^ (\S+)(?: (-?\d+))?$/.exec(rest);
    if (vm === null) {
      problems.push(`${at}: cannot parse value: ${JSON.stringify(line)}`);
      return;
    }
    const valueText = vm[1] ?? '';
    const value = Number(valueText);
    const finite = FLOAT.test(valueText) && Number.isFinite(value);
    if (!finite) problems.push(`${at}: value ${valueText} is not a finite number`);
    const names = new Set<string>();
    for (const [l] of labels) {
      if (!LABEL_NAME.test(l) || l.startsWith('__')) problems.push(`${at}: invalid label name ${JSON.stringify(l)}`);
      if (names.has(l)) problems.push(`${at}: label ${l} repeated`);
      names.add(l);
    }
    const fam = familyOf(name, families);
    enter(fam, at);
    const f = family(fam);
    if (f.help !== 1) problems.push(`${at}: sample of ${fam} without a HELP before it`);
    if (f.type === undefined) problems.push(`${at}: sample of ${fam} without a TYPE before it`);
    f.samples++;
    const key = `${name}{${labels
      .map(([k, v]) => `${k}=${JSON.stringify(v)}`)
      .sort()
      .join(',')}}`;
    if (seen.has(key)) problems.push(`${at}: duplicate series ${key}`);
    seen.add(key);
    samples.push({ at, name, family: fam, suffix: name.slice(fam.length), labels, value: finite ? value : undefined, valueText });
  });
  for (const [name, f] of families) {
    if (f.samples === 0) problems.push(`family ${name} has no samples`);
  }
  const typeOf = (fam: string) => families.get(fam)?.type;
  checkSampleKinds(samples, typeOf, problems);
  checkHistograms(samples, typeOf, problems);
  checkQuantiles(samples, typeOf, problems);
  checkNameCollisions(families, problems);
  return problems;
}

/** One parsed sample line. */
interface Sample {
  /** `line N` */
  readonly at: string;
  readonly name: string;
  readonly family: string;
  /** what the name adds to the family name: '', `_bucket`, `_sum` or `_count` */
  readonly suffix: string;
  readonly labels: readonly [string, string][];
  /** undefined when the value is not a finite number (reported already) */
  readonly value: number | undefined;
  readonly valueText: string;
}

type TypeOf = (family: string) => string | undefined;

/** The number a label value writes, undefined unless it is a finite float. */
function finiteNumber(text: string): number | undefined {
  const n = Number(text);
  return FLOAT.test(text) && Number.isFinite(n) ? n : undefined;
}

function labelValue(labels: readonly [string, string][], name: string): string | undefined {
  return labels.find(([k]) => k === name)?.[1];
}

/** `{a="x",b="y"}` without the label `drop`, in the order written. */
function seriesOf(labels: readonly [string, string][], drop: string): string {
  return `{${labels
    .filter(([k]) => k !== drop)
    .map(([k, v]) => `${k}=${JSON.stringify(v)}`)
    .join(',')}}`;
}

/** Same labels in any order give the same key. */
function keyOf(family: string, labels: readonly [string, string][], drop: string): string {
  return `${family}{${labels
    .filter(([k]) => k !== drop)
    .map(([k, v]) => `${k}=${JSON.stringify(v)}`)
    .sort()
    .join(',')}}`;
}

/** The label a quantile-like sample of this type carries: `quantile` on summaries, `percentile` on gauges. */
function quantileLabel(type: string | undefined, suffix: string): string | undefined {
  if (type === 'summary' && suffix === '') return 'quantile';
  if (type === 'gauge') return 'percentile';
  return undefined;
}

/** Which sample names and reserved labels each type allows; counts and counters not negative. */
function checkSampleKinds(samples: readonly Sample[], typeOf: TypeOf, problems: string[]): void {
  for (const s of samples) {
    const type = typeOf(s.family);
    const le = labelValue(s.labels, 'le');
    const quantile = labelValue(s.labels, 'quantile');
    if (type === 'histogram') {
      if (s.suffix === '') problems.push(`${s.at}: sample ${s.name} of histogram ${s.family} is not a _bucket, _sum or _count`);
      if (s.suffix === '_bucket' && le === undefined) problems.push(`${s.at}: ${s.name} without an le label`);
      if (s.suffix !== '_bucket' && le !== undefined) problems.push(`${s.at}: le on ${s.name}; only ${s.family}_bucket may have it`);
    } else if (le !== undefined) {
      problems.push(`${s.at}: le on ${s.name}, which is not a histogram`);
    }
    if (type === 'summary') {
      if (s.suffix === '_bucket') problems.push(`${s.at}: ${s.name} in summary ${s.family}, which has no buckets`);
      if (s.suffix === '' && quantile === undefined) problems.push(`${s.at}: sample ${s.name} of summary ${s.family} without a quantile label`);
      if (s.suffix !== '' && quantile !== undefined) problems.push(`${s.at}: quantile on ${s.name}; only ${s.family} itself may have it`);
    } else if (quantile !== undefined) {
      problems.push(`${s.at}: quantile on ${s.name}, which is not a summary`);
    }
    if (s.value === undefined) continue;
    const isCount = s.suffix === '_count' || (type === 'histogram' && s.suffix === '_bucket');
    if (isCount && !(Number.isInteger(s.value) && s.value >= 0)) {
      problems.push(`${s.at}: ${s.name} ${s.valueText} is not a count (a non-negative integer)`);
    }
    if (type === 'counter' && s.value < 0) problems.push(`${s.at}: counter ${s.name} is negative: ${s.valueText}`);
  }
}

interface HistogramSeries {
  /** `histogram h series {host="a"}`, for messages */
  readonly what: string;
  /** line of its first sample */
  readonly at: string;
  readonly family: string;
  lastBucket: { le: number; text: string; count: number | undefined } | undefined;
  hasInf: boolean;
  infCount: number | undefined;
  hasCount: boolean;
  count: number | undefined;
  hasSum: boolean;
}

/**
 * Per histogram series (its labels without `le`): contiguous; valid `le`,
 * strictly increasing as written; bucket counts non-decreasing; a `+Inf`
 * bucket; a `_count` equal to it; a `_sum`.
 */
function checkHistograms(samples: readonly Sample[], typeOf: TypeOf, problems: string[]): void {
  const series = new Map<string, HistogramSeries>();
  const lastKey = new Map<string, string>();
  const split = new Set<string>();
  for (const s of samples) {
    if (typeOf(s.family) !== 'histogram' || s.suffix === '') continue;
    const key = keyOf(s.family, s.labels, 'le');
    let h = series.get(key);
    if (h === undefined) {
      h = {
        what: `histogram ${s.family} series ${seriesOf(s.labels, 'le')}`,
        at: s.at,
        family: s.family,
        lastBucket: undefined,
        hasInf: false,
        infCount: undefined,
        hasCount: false,
        count: undefined,
        hasSum: false,
      };
      series.set(key, h);
    } else if (lastKey.get(s.family) !== key && !split.has(key)) {
      split.add(key);
      problems.push(`${s.at}: ${h.what} is not contiguous (it started at ${h.at})`);
    }
    lastKey.set(s.family, key);

    if (s.suffix === '_sum') h.hasSum = true;
    if (s.suffix === '_count' && !h.hasCount) {
      h.hasCount = true;
      h.count = s.value;
    }
    if (s.suffix !== '_bucket') continue;
    const le = labelValue(s.labels, 'le');
    if (le === undefined) continue; // reported by checkSampleKinds
    const bound = le === '+Inf' ? Number.POSITIVE_INFINITY : finiteNumber(le);
    if (bound === undefined) {
      problems.push(`${s.at}: ${h.what}: le=${JSON.stringify(le)} is not a number or +Inf`);
      continue;
    }
    const prev = h.lastBucket;
    if (prev !== undefined && bound <= prev.le) {
      problems.push(`${s.at}: ${h.what}: le="${le}" comes after le="${prev.text}"; le must increase`);
    } else if (prev?.count !== undefined && s.value !== undefined && s.value < prev.count) {
      problems.push(`${s.at}: ${h.what}: bucket le="${le}" count ${s.valueText} is below le="${prev.text}" count ${prev.count}`);
    }
    h.lastBucket = { le: bound, text: le, count: s.value };
    if (bound === Number.POSITIVE_INFINITY && !h.hasInf) {
      h.hasInf = true;
      h.infCount = s.value;
    }
  }
  for (const h of series.values()) {
    if (!h.hasInf) problems.push(`${h.at}: ${h.what} has no le="+Inf" bucket`);
    if (!h.hasCount) problems.push(`${h.at}: ${h.what} has no ${h.family}_count`);
    else if (h.hasInf && h.count !== undefined && h.infCount !== undefined && h.count !== h.infCount) {
      problems.push(`${h.at}: ${h.what}: ${h.family}_count ${h.count} differs from the le="+Inf" bucket ${h.infCount}`);
    }
    if (!h.hasSum) problems.push(`${h.at}: ${h.what} has no ${h.family}_sum`);
  }
}

/**
 * `percentile` on gauges and `quantile` on summaries: a number in [0, 1],
 * each once per series (labels without it), and the values non-decreasing
 * as it increases, whatever order they are written in.
 */
function checkQuantiles(samples: readonly Sample[], typeOf: TypeOf, problems: string[]): void {
  interface Point {
    readonly q: number;
    readonly s: Sample;
    readonly text: string;
  }
  const groups = new Map<string, { what: string; label: string; points: Point[] }>();
  for (const s of samples) {
    const label = quantileLabel(typeOf(s.family), s.suffix);
    const text = label === undefined ? undefined : labelValue(s.labels, label);
    if (label === undefined || text === undefined) continue;
    const q = finiteNumber(text);
    if (q === undefined || q < 0 || q > 1) {
      problems.push(`${s.at}: ${s.name}: ${label}=${JSON.stringify(text)} is not a number in [0, 1]`);
      continue;
    }
    const key = keyOf(s.family, s.labels, label);
    let g = groups.get(key);
    if (g === undefined) {
      g = { what: `${typeOf(s.family) ?? ''} ${s.family} series ${seriesOf(s.labels, label)}`, label, points: [] };
      groups.set(key, g);
    }
    const same = g.points.find((p) => p.q === q);
    if (same !== undefined) problems.push(`${s.at}: ${g.what}: ${label}="${text}" repeats ${label}="${same.text}" (${same.s.at})`);
    else g.points.push({ q, s, text });
  }
  for (const { what, label, points } of groups.values()) {
    let highest: Point | undefined;
    for (const p of [...points].sort((a, b) => a.q - b.q)) {
      if (p.s.value === undefined) continue;
      if (highest?.s.value !== undefined && p.s.value < highest.s.value) {
        problems.push(
          `${p.s.at}: ${what}: ${label}="${p.text}" value ${p.s.valueText} is below ${label}="${highest.text}" value ${highest.s.valueText}`,
        );
      } else {
        highest = p;
      }
    }
  }
}

/** A family named like a histogram's or summary's `_bucket`, `_sum` or `_count` series. */
function checkNameCollisions(families: ReadonlyMap<string, Family>, problems: string[]): void {
  for (const [name, f] of families) {
    if (f.type !== 'histogram' && f.type !== 'summary') continue;
    for (const suffix of SAMPLE_SUFFIXES) {
      if (families.has(`${name}${suffix}`)) problems.push(`family ${name}${suffix} collides with the ${suffix} series of ${f.type} ${name}`);
    }
  }
}
