/**
 * Parquet's RLE / bit-packed hybrid encoding (definition and repetition
 * levels, dictionary indices) read as runs, without expanding them: a
 * histogram row is 496 entries, mostly long runs (one repetition run, one
 * definition run, runs of the empty bucket's index), so walking runs costs
 * per non-empty bucket rather than per bucket. Bit-packed groups are served
 * value by value. No length prefix: the caller gives the byte range. Pure.
 */
export class Runs {
  readonly #bytes: Uint8Array;
  readonly #width: number;
  readonly #end: number;
  readonly #bytesPerValue: number;
  #pos: number;
  #packed: number[] = [];
  #packedAt = 0;
  /** the current run's value, valid after fill() returned true */
  value = 0;
  /** entries left in the current run; consume by lowering it */
  left = 0;

  constructor(bytes: Uint8Array, start: number, end: number, bitWidth: number) {
    if (!(bitWidth >= 0 && bitWidth <= 32)) throw new RangeError(`bit width ${bitWidth} out of range`);
    this.#bytes = bytes;
    this.#pos = start;
    this.#end = end;
    this.#width = bitWidth;
    this.#bytesPerValue = Math.ceil(bitWidth / 8);
  }

  /** Makes the current run non-empty; false at the end of the data. */
  fill(): boolean {
    while (this.left === 0) {
      if (this.#packedAt < this.#packed.length) {
        this.value = this.#packed[this.#packedAt++] as number;
        this.left = 1;
        return true;
      }
      if (this.#pos >= this.#end) return false;
      const header = this.#uleb();
      if (header % 2 === 1) this.#unpack(Math.floor(header / 2) * 8);
      else {
        this.left = Math.floor(header / 2);
        this.value = this.#fixed(this.#bytesPerValue);
      }
    }
    return true;
  }

  /** The current run's value, or -1 at the end of the data. */
  peek(): number {
    return this.fill() ? this.value : -1;
  }

  #uleb(): number {
    const bytes = this.#bytes;
    if (this.#pos < this.#end && (bytes[this.#pos] as number) < 0x80) return bytes[this.#pos++] as number;
    let v = 0;
    let scale = 1;
    for (;;) {
      if (this.#pos >= this.#end) throw new RangeError('a run header runs past the end of its data');
      const b = bytes[this.#pos++] as number;
      v += (b & 0x7f) * scale;
      if (b < 0x80) return v;
      scale *= 128;
      if (scale > 2 ** 35) throw new RangeError('a run header is too long');
    }
  }

  /** A little-endian value of `n` ≤ 4 bytes. */
  #fixed(n: number): number {
    const p = this.#pos;
    if (p + n > this.#end) throw new RangeError('a run value runs past the end of its data');
    const b = this.#bytes;
    this.#pos = p + n;
    switch (n) {
      case 0:
        return 0;
      case 1:
        return b[p] as number;
      case 2:
        return (b[p] as number) | ((b[p + 1] as number) << 8);
      case 3:
        return (b[p] as number) | ((b[p + 1] as number) << 8) | ((b[p + 2] as number) << 16);
      default:
        return ((b[p] as number) | ((b[p + 1] as number) << 8) | ((b[p + 2] as number) << 16) | ((b[p + 3] as number) << 24)) >>> 0;
    }
  }

  /** `count` values of the bit width, least significant bit first. */
  #unpack(count: number): void {
    const width = this.#width;
    const bytes = Math.ceil((count * width) / 8);
    if (this.#pos + bytes > this.#end) throw new RangeError('a bit-packed run runs past the end of its data');
    const out = new Array<number>(count);
    const mod = 2 ** width;
    let acc = 0;
    let bits = 0;
    let p = this.#pos;
    for (let i = 0; i < count; i++) {
      while (bits < width) {
        acc += (this.#bytes[p++] as number) * 2 ** bits;
        bits += 8;
      }
      out[i] = acc % mod;
      acc = Math.floor(acc / mod);
      bits -= width;
    }
    this.#pos += bytes;
    this.#packed = out;
    this.#packedAt = 0;
  }
}
