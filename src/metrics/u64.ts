/** A cumulative u64 counter: a number while it is a safe integer, a bigint beyond. */
export type Counter = number | bigint;

/**
 * Parses a decimal unsigned integer as procfs prints it. Returns a number while
 * the value is a safe integer, a bigint beyond 2^53, and undefined for
 * anything that is not a plain run of digits.
 */
export function parseU64(text: string): number | bigint | undefined {
  if (text.length === 0 || text.length > 20) return undefined;
  for (let i = 0; i < text.length; i++) {
    const c = text.charCodeAt(i);
    if (c < 48 || c > 57) return undefined;
  }
  if (text.length < 16) return Number(text);
  const big = BigInt(text);
  if (big > 0xffff_ffff_ffff_ffffn) return undefined;
  return big <= BigInt(Number.MAX_SAFE_INTEGER) ? Number(big) : big;
}

/** Parses a decimal signed integer or decimal fraction; undefined when not a finite number. */
export function parseNumber(text: string): number | undefined {
  if (text.length === 0 || !/^-?\d+(\.\d+)?$/.test(text)) return undefined;
  const n = Number(text);
  return Number.isFinite(n) ? n : undefined;
}

/** Multiplies a counter value (number or bigint) by an integer factor, keeping precision. */
export function scaleU64(value: number | bigint, factor: number): number | bigint {
  if (typeof value === 'number') {
    const r = value * factor;
    return Number.isSafeInteger(r) ? r : BigInt(value) * BigInt(factor);
  }
  return value * BigInt(factor);
}

const MAX_SAFE = BigInt(Number.MAX_SAFE_INTEGER);

/** A u64 held as bigint, as a Counter: a number while it is a safe integer. */
export function toCounter(v: bigint): Counter {
  return v <= MAX_SAFE ? Number(v) : v;
}

/** The sum of two counters, exact: a number while it stays a safe integer, else a bigint. */
export function addU64(a: Counter, b: Counter): Counter {
  if (typeof a === 'number' && typeof b === 'number') {
    const s = a + b;
    if (Number.isSafeInteger(s)) return s;
  }
  return BigInt(a) + BigInt(b);
}
