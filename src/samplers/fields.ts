/** Space, tab or CR: what separates the fields of a procfs line. */
export function isFieldSeparator(c: number): boolean {
  return c === 32 || c === 9 || c === 13;
}

/** Splits a procfs line on runs of spaces, tabs and CRs from index `from`, without a regex. */
export function splitFields(line: string, from = 0): string[] {
  const out: string[] = [];
  const n = line.length;
  let i = from;
  while (i < n) {
    if (isFieldSeparator(line.charCodeAt(i))) {
      i++;
      continue;
    }
    const start = i;
    while (i < n && !isFieldSeparator(line.charCodeAt(i))) i++;
    out.push(line.slice(start, i));
  }
  return out;
}

/** The field at `index` (0 for the first) of a procfs line, without splitting the rest; undefined when it has fewer. */
export function nthField(line: string, index: number): string | undefined {
  const n = line.length;
  let i = 0;
  for (let k = 0; ; k++) {
    while (i < n && isFieldSeparator(line.charCodeAt(i))) i++;
    if (i === n) return undefined;
    const start = i;
    while (i < n && !isFieldSeparator(line.charCodeAt(i))) i++;
    if (k === index) return line.slice(start, i);
  }
}
