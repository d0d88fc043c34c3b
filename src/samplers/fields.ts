/** Splits a procfs line on runs of spaces, tabs and CRs from index `from`, without a regex. */
export function splitFields(line: string, from = 0): string[] {
  const out: string[] = [];
  const n = line.length;
  let i = from;
  while (i < n) {
    let c = line.charCodeAt(i);
    if (c === 32 || c === 9 || c === 13) {
      i++;
      continue;
    }
    const start = i;
    while (i < n && (c = line.charCodeAt(i)) !== 32 && c !== 9 && c !== 13) i++;
    out.push(line.slice(start, i));
  }
  return out;
}
