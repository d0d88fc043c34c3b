/**
 * Label matching of a query: `match` maps a label key to a glob where `*`
 * is any run of characters and `?` any one character; everything else is
 * literal and the whole value must match. A series matches when every glob
 * matches its label (a label it does not have counts as the empty string).
 *
 * Globs come from the query string, so they are matched without a RegExp:
 * a backtracking engine takes exponential time on a glob such as
 * `*?*?*?*?*?*?*?*?*?*?X` against a cgroup path (hours, with the event loop
 * held); globMatches is O(glob × value).
 */
import type { Labels } from '../../metrics/point.js';

/** The anchored RegExp of a glob (for callers that want one; labelMatcher does not use it). */
export function globToRegExp(glob: string): RegExp {
  let source = '';
  for (const ch of glob) {
    if (ch === '*') source += '[\\s\\S]*';
    else if (ch === '?') source += '[\\s\\S]';
    else source += ch.replace(/[\\^$.|+()[\]{}*?/-]/g, '\\$&');
  }
  return new RegExp(`^${source}$`, 'u');
}

/** Whether `value` matches the glob given as code points: one pass with a single backtrack point (the last `*`). */
function matchCodePoints(glob: readonly string[], value: readonly string[]): boolean {
  let g = 0;
  let v = 0;
  let star = -1; // index in glob of the last `*` seen
  let resume = 0; // where in value that `*` would resume after one more character
  while (v < value.length) {
    const c = glob[g];
    if (c === '*') {
      star = g++;
      resume = v;
    } else if (c !== undefined && (c === '?' || c === value[v])) {
      g++;
      v++;
    } else if (star >= 0) {
      g = star + 1;
      v = ++resume;
    } else return false;
  }
  while (glob[g] === '*') g++;
  return g === glob.length;
}

/** A predicate for one glob, compiled once: `*` any run, `?` one character (code point), the rest literal. */
export function globMatcher(glob: string): (value: string) => boolean {
  const pattern = Array.from(glob);
  if (pattern.length > 0 && pattern.every((c) => c === '*')) return () => true;
  if (!pattern.includes('*') && !pattern.includes('?')) return (value) => value === glob;
  return (value) => matchCodePoints(pattern, Array.from(value));
}

/** Whether `value` matches `glob`. */
export function globMatches(glob: string, value: string): boolean {
  return globMatcher(glob)(value);
}

/** A predicate over label sets, compiled once per query; only a label's own value counts (never `constructor` of Object.prototype). */
export function labelMatcher(match: Readonly<Record<string, string>>): (labels: Labels) => boolean {
  const tests = Object.entries(match).map(([key, glob]) => ({ key, matches: globMatcher(glob) }));
  return (labels) => tests.every(({ key, matches }) => matches(Object.hasOwn(labels, key) ? (labels[key] ?? '') : ''));
}
