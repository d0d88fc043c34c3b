/**
 * A growable byte buffer the renderer writes exposition lines into, so that a
 * scrape builds no string per line and no rope: the text format's pieces
 * (line prefixes, numbers) are copied byte by byte. Strings are written as
 * UTF-8; the ASCII ones (nearly all) without a call into the runtime.
 */

export interface ByteOut {
  buf: Buffer;
  /** bytes written: buf[0, len) */
  len: number;
}

/** A new, empty ByteOut, writing into `reuse` if given (made only here, so that every one has the same object shape). */
export function byteOut(capacity = 256, reuse?: Buffer): ByteOut {
  return { buf: reuse !== undefined && reuse.length > 0 ? reuse : Buffer.allocUnsafeSlow(Math.max(16, capacity)), len: 0 };
}

/** Makes room for n more bytes. */
export function reserve(o: ByteOut, n: number): void {
  const need = o.len + n;
  if (need <= o.buf.length) return;
  let size = o.buf.length * 2;
  while (size < need) size *= 2;
  const next = Buffer.allocUnsafeSlow(size);
  o.buf.copy(next, 0, 0, o.len);
  o.buf = next;
}

/** Appends s as UTF-8. */
export function writeString(o: ByteOut, s: string): void {
  const n = s.length;
  reserve(o, n);
  const buf = o.buf;
  let at = o.len;
  for (let k = 0; k < n; k++) {
    const c = s.charCodeAt(k);
    if (c >= 0x80) {
      // not ASCII: let the runtime encode it (what was copied so far is overwritten)
      const bytes = Buffer.byteLength(s, 'utf8');
      reserve(o, bytes);
      o.len += o.buf.write(s, o.len, bytes, 'utf8');
      return;
    }
    buf[at++] = c;
  }
  o.len = at;
}

export function writeByte(o: ByteOut, c: number): void {
  reserve(o, 1);
  o.buf[o.len++] = c;
}

/** Appends a safe integer the way String(v) writes it (so -0 as `0`). */
export function writeSafeInteger(o: ByteOut, v: number): void {
  reserve(o, 17);
  const buf = o.buf;
  let at = o.len;
  let n = v;
  if (n < 0) {
    buf[at++] = 45; // '-'
    n = -n;
  }
  let digits = 1;
  for (let p = 10; p <= n; p *= 10) digits++;
  let end = at + digits;
  o.len = end;
  do {
    const q = Math.floor(n / 10);
    buf[--end] = 48 + (n - q * 10);
    n = q;
  } while (n > 0);
}

/** Appends src[from, to). */
export function writeBytes(o: ByteOut, src: Uint8Array, from: number, to: number): void {
  reserve(o, to - from);
  const buf = o.buf;
  let at = o.len;
  for (let k = from; k < to; k++) buf[at++] = src[k] as number;
  o.len = at;
}

/**
 * Appends v / divisor for a safe integer v and divisor = 10^digits, written
 * as formatSafeScaled in names.ts writes it: an exact decimal without
 * trailing zeros (`-1.5`, `0.000001`, `12`).
 */
export function writeSafeScaled(o: ByteOut, v: number, divisor: number, digits: number): void {
  const neg = v < 0;
  const a = neg ? -v : v;
  let q = Math.floor(a / divisor);
  let r = a - q * divisor;
  if (r < 0) {
    q--;
    r += divisor;
  }
  if (neg && a !== 0) writeByte(o, 45); // '-'
  writeSafeInteger(o, q);
  if (r === 0) return;
  let width = digits;
  while (r % 10 === 0) {
    r /= 10;
    width--;
  }
  let rDigits = 1;
  for (let p = 10; p <= r; p *= 10) rDigits++;
  reserve(o, 1 + width - rDigits);
  o.buf[o.len++] = 46; // '.'
  for (let k = rDigits; k < width; k++) o.buf[o.len++] = 48;
  writeSafeInteger(o, r);
}
