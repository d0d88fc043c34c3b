/**
 * Semantic checks of a Prometheus text exposition (0.0.4) that promtool does
 * not make: parseable sample lines, unique series, one HELP and one TYPE per
 * family before its contiguous samples, `_total` on counters, finite values,
 * valid label names. Returns the problems found (empty = OK).
 */

const METRIC_NAME = /^[a-zA-Z_:][a-zA-Z0-9_:]*$/;
const LABEL_NAME = /^[a-zA-Z_][a-zA-Z0-9_]*$/;
const SAMPLE_SUFFIXES = ['_bucket', '_count', '_sum'];

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
    if (!/^[+-]?(\d+\.?\d*|\.\d+)([eE][+-]?\d+)?$/.test(valueText) || !Number.isFinite(value)) {
      problems.push(`${at}: value ${valueText} is not a finite number`);
    }
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
  });
  for (const [name, f] of families) {
    if (f.samples === 0) problems.push(`family ${name} has no samples`);
  }
  return problems;
}
