/**
 * A structural check of untrusted msgpack bytes before they are decoded:
 * exactly one value spanning the whole message, every declared length within
 * the bytes that remain (an array or map of n needs at least n or 2n more
 * bytes, a string or binary of n exactly n), nesting at most `maxDepth`
 * containers deep, and no extension types (frames carry none). It walks the
 * bytes once without allocating per value, so a small hostile header can
 * never make the decoder allocate by its declared length or recurse deeply.
 */

/** Why the bytes are not acceptable msgpack, or undefined when they are. */
export function msgpackProblem(b: Uint8Array, maxDepth: number): string | undefined {
  const n = b.length;
  // objects still to read in each open container; `left` is the innermost one's
  const open: number[] = [];
  let left = 1;
  let p = 0;
  for (;;) {
    if (left === 0) {
      const outer = open.pop();
      if (outer === undefined) break;
      left = outer;
      continue;
    }
    if (p >= n) return 'truncated';
    left--;
    const t = b[p++] as number;
    let skip = 0;
    let children = 0;
    if (t <= 0x7f || t >= 0xe0 || t === 0xc0 || t === 0xc2 || t === 0xc3) {
      // fixint, nil, bool: the type byte is the value
    } else if (t <= 0x8f) children = 2 * (t & 0x0f);
    else if (t <= 0x9f) children = t & 0x0f;
    else if (t <= 0xbf) skip = t & 0x1f;
    else {
      switch (t) {
        case 0xcc: case 0xd0: skip = 1; break;
        case 0xcd: case 0xd1: skip = 2; break;
        case 0xca: case 0xce: case 0xd2: skip = 4; break;
        case 0xcb: case 0xcf: case 0xd3: skip = 8; break;
        case 0xc4: case 0xd9: skip = 1 + len(b, p, 1); break;
        case 0xc5: case 0xda: skip = 2 + len(b, p, 2); break;
        case 0xc6: case 0xdb: skip = 4 + len(b, p, 4); break;
        case 0xdc: children = len(b, p, 2); p += 2; break;
        case 0xdd: children = len(b, p, 4); p += 4; break;
        case 0xde: children = 2 * len(b, p, 2); p += 2; break;
        case 0xdf: children = 2 * len(b, p, 4); p += 4; break;
        case 0xc1: return 'byte 0xc1 (never used by msgpack)';
        default: return `extension type 0x${t.toString(16)}`;
      }
    }
    if (skip > n - p) return 'truncated';
    p += skip;
    if (children > 0) {
      if (p > n || children > n - p) return 'a declared length runs past the end';
      if (open.length >= maxDepth) return `nested deeper than ${maxDepth}`;
      open.push(left);
      left = children;
    }
  }
  return p === n ? undefined : 'bytes after the value';
}

/** A big-endian length of `size` bytes at `p`; past the end it reads as huge, so the caller's bound check fails. */
function len(b: Uint8Array, p: number, size: 1 | 2 | 4): number {
  if (p + size > b.length) return Number.MAX_SAFE_INTEGER;
  let v = 0;
  for (let i = 0; i < size; i++) v = v * 256 + (b[p + i] as number);
  return v;
}
