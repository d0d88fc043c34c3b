/**
 * Pure parsers for cgroupfs files shared by cgroup v1 and v2, and the helpers
 * the version-specific parsers (parse-v1.ts, parse-v2.ts) build on. No I/O:
 * every function takes the file's text.
 *
 * Values are u64 counters: a number while a safe integer, a bigint beyond 2^53.
 */
import type { Counter } from '../../metrics/u64.js';
import { parseU64 } from '../../metrics/u64.js';
import { splitFields } from '../fields.js';

/**
 * cgroup v1 prints an unset limit as a huge page-aligned number
 * (9223372036854771712 = 2^63 - 4096 with 4 KiB pages); any value from 2^62
 * up is taken as "unlimited".
 */
export const V1_UNLIMITED_FROM = 2n ** 62n;

/** True for a v1 "unlimited" limit value (≥ 2^62), e.g. memory.stat's hierarchical_memory_limit. */
export function isUnlimited(value: Counter): boolean {
  return typeof value === 'bigint' && value >= V1_UNLIMITED_FROM;
}

/** Calls `fn` with the whitespace-separated fields of every non-blank line. */
export function forEachLine(text: string, fn: (fields: string[]) => void): void {
  let pos = 0;
  while (pos < text.length) {
    let end = text.indexOf('\n', pos);
    if (end === -1) end = text.length;
    const fields = splitFields(text.slice(pos, end));
    pos = end + 1;
    if (fields.length > 0) fn(fields);
  }
}

/** The fields of a file that should hold exactly one line; undefined when it holds none or more. */
export function singleLine(text: string): string[] | undefined {
  let only: string[] | undefined;
  let lines = 0;
  forEachLine(text, (fields) => {
    lines++;
    only = fields;
  });
  return lines === 1 ? only : undefined;
}

/** A file holding one value: memory.current, memory.max, pids.current, pids.max, memory.usage_in_bytes, ... */
export interface SingleValue {
  /** the value; undefined when unlimited or when the file is empty or malformed */
  readonly value: Counter | undefined;
  /** "max" (v2), or a v1 value ≥ 2^62 */
  readonly unlimited: boolean;
  /** 1 when the file is empty or holds anything but one u64 or "max", else 0 */
  readonly skipped: number;
}

/**
 * Parses a single-value file. "max" (v2) and any value ≥ 2^62 (v1's
 * 9223372036854771712) read as unlimited, so this fits limits and usages alike.
 */
export function parseSingleValue(text: string): SingleValue {
  const fields = singleLine(text);
  if (fields === undefined || fields.length !== 1) return { value: undefined, unlimited: false, skipped: 1 };
  const f = fields[0]!;
  if (f === 'max') return { value: undefined, unlimited: true, skipped: 0 };
  const v = parseU64(f);
  if (v === undefined) return { value: undefined, unlimited: false, skipped: 1 };
  if (isUnlimited(v)) return { value: undefined, unlimited: true, skipped: 0 };
  return { value: v, unlimited: false, skipped: 0 };
}

/** The values of some known keys of a flat-keyed file. */
export interface KnownKeys {
  /** one per key, in the order asked for; undefined when absent or malformed */
  readonly values: (Counter | undefined)[];
  /** known-key lines that are not `key u64` or repeat, plus lines with no value at all */
  readonly skipped: number;
}

/**
 * Reads the given keys of a flat-keyed file (`key value` lines: memory.stat,
 * memory.events, memory.oom_control, cpu.stat); other keys are ignored, and
 * their lines are not split: v1 memory.stat has ~70 lines of which two are
 * used. Values are kept as printed (v1 limits >= 2^62 stay bigint: see
 * isUnlimited).
 *
 * The lines are found with regular expressions, not a loop over the text's
 * characters: a regular expression runs as native code in every tier of V8,
 * and the agent at 1 Hz runs its JavaScript in the interpreter
 * (agent/v8-flags.ts), where the loop cost ~15 µs a memory.stat. Fields are
 * split on spaces, tabs and CRs as splitFields does; lines on '\n' only.
 * A line with one field is skipped whatever its key (a known key without a
 * value, or a key with no value); a known key's line is split and must be
 * `key u64`, the first such line of a key wins, and later ones are skipped.
 */
export function parseKnownKeys(text: string, keys: readonly string[]): KnownKeys {
  const values = new Array<Counter | undefined>(keys.length).fill(undefined);
  let skipped = text.match(SINGLE_FIELD_LINE)?.length ?? 0;
  for (let i = 0; i < keys.length; i++) {
    // a key asked for twice is read at its first place; an empty key names no field
    if (keys[i] === '' || keys.indexOf(keys[i] as string) !== i) continue;
    const re = keyLine(keys[i] as string);
    re.lastIndex = 0;
    for (let m = re.exec(text); m !== null; m = re.exec(text)) {
      const from = text.charCodeAt(m.index) === 10 ? m.index + 1 : m.index;
      let end = text.indexOf('\n', from);
      if (end === -1) end = text.length;
      const fields = splitFields(text.slice(from, end));
      if (fields.length === 1) continue; // counted with the single-field lines
      const v = fields.length === 2 ? parseU64(fields[1]!) : undefined;
      if (v === undefined || values[i] !== undefined) skipped++;
      else values[i] = v;
    }
  }
  return { values, skipped };
}

/** A line of exactly one field (separators around it allowed); not multiline mode, which would end lines at '\r' too. */
const SINGLE_FIELD_LINE = /(?:^|\n)[ \t\r]*[^ \t\r\n]+[ \t\r]*(?=\n|$)/g;
const keyLines = new Map<string, RegExp>();

/** The start of every line whose first field is `key`. */
function keyLine(key: string): RegExp {
  let re = keyLines.get(key);
  if (re === undefined) {
    re = new RegExp(`(?:^|\\n)[ \\t\\r]*${key.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')}(?=[ \\t\\r\\n]|$)`, 'g');
    keyLines.set(key, re);
  }
  return re;
}

/** A device number `major:minor`; undefined when malformed. */
export function parseDevice(text: string): { major: number; minor: number } | undefined {
  const colon = text.indexOf(':');
  if (colon === -1) return undefined;
  const major = parseU64(text.slice(0, colon));
  const minor = parseU64(text.slice(colon + 1));
  if (typeof major !== 'number' || typeof minor !== 'number' || major > 0xffffffff || minor > 0xffffffff) return undefined;
  return { major, minor };
}

const hexDigit = (c: number): number =>
  c >= 48 && c <= 57 ? c - 48 : c >= 97 && c <= 102 ? c - 87 : c >= 65 && c <= 70 ? c - 55 : -1;

const utf8 = new TextDecoder('utf-8', { fatal: true });

/**
 * Undoes systemd's unit-name escaping: every `\xNN` becomes the byte NN, and
 * the bytes are read as UTF-8 (systemd escapes each byte of a multi-byte
 * character), falling back to one character per escape (Latin-1) when the
 * bytes are not valid UTF-8. `dev-disk-by\x2duuid-abc.device` -> `dev-disk-by-uuid-abc.device`;
 * names without escapes (and a `\x` not followed by two hex digits) are kept as they are.
 */
export function decodeCgroupName(name: string): string {
  if (!name.includes('\\x')) return name;
  const bytes: number[] = [];
  const encoder = new TextEncoder();
  let i = 0;
  while (i < name.length) {
    if (name.charCodeAt(i) === 92 && name.charCodeAt(i + 1) === 120) {
      const hi = hexDigit(name.charCodeAt(i + 2));
      const lo = hexDigit(name.charCodeAt(i + 3));
      if (hi !== -1 && lo !== -1) {
        bytes.push(hi * 16 + lo);
        i += 4;
        continue;
      }
    }
    const cp = name.codePointAt(i)!;
    const ch = String.fromCodePoint(cp);
    for (const b of encoder.encode(ch)) bytes.push(b);
    i += ch.length;
  }
  try {
    return utf8.decode(Uint8Array.from(bytes));
  } catch {
    return name.replace(/\\x([0-9a-fA-F]{2})/g, (_, hex: string) => String.fromCharCode(parseInt(hex, 16)));
  }
}
