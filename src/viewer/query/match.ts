/**
 * Label matching of a query: `match` maps a label key to a glob where `*`
 * is any run of characters and `?` any one character; everything else is
 * literal and the whole value must match. A series matches when every glob
 * matches its label (a label it does not have counts as the empty string).
 */
import type { Labels } from '../../metrics/point.js';

/** The anchored RegExp of a glob. */
export function globToRegExp(glob: string): RegExp {
  let source = '';
  for (const ch of glob) {
    if (ch === '*') source += '[\\s\\S]*';
    else if (ch === '?') source += '[\\s\\S]';
    else source += ch.replace(/[\\^$.|+()[\]{}*?/-]/g, '\\$&');
  }
  return new RegExp(`^${source}$`, 'u');
}

/** A predicate over label sets, compiled once per query. */
export function labelMatcher(match: Readonly<Record<string, string>>): (labels: Labels) => boolean {
  const tests = Object.entries(match).map(([key, glob]) => ({ key, re: globToRegExp(glob) }));
  return (labels) => tests.every(({ key, re }) => re.test(labels[key] ?? ''));
}
