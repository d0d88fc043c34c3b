/**
 * Column chunks of the series columns, written directly rather than through
 * hyparquet-writer's generic path, which walks every value (Dremel levels,
 * dictionary, statistics, a BigInt per UINT64): about 250 ns a value, which
 * a fleet recording cannot afford (100 hosts × 15 min is 25 M scalar cells
 * and, with 11 latency histograms per host, 491 M dense buckets).
 *
 * - Counters and gauges (OPTIONAL INT64 UINT_64 / DOUBLE, max definition
 *   level 1): one data page v2, definition levels as RLE runs, the values
 *   PLAIN, written from numbers without a BigInt each, then gzip.
 * - Histograms (`<name>` OPTIONAL LIST → `list` REPEATED → `element`
 *   REQUIRED INT64 UINT_64: definition level 2 for a bucket, 0 for a null
 *   row; repetition level 0 opens a row): the dense bucket counts,
 *   dictionary-encoded in work proportional to the non-empty buckets. The
 *   dictionary holds 0 at index 0 and each distinct count once; the data
 *   page holds the levels and the dictionary indices as RLE runs (one run
 *   of zeros between non-empty buckets); dictionary and indices are gzip.
 *
 * No statistics. Page headers are serialised by hyparquet-writer's
 * writePageHeader; the chunk metadata goes into its footer.
 */
import { writePageHeader } from 'hyparquet-writer/src/datapage.js';
import type { ParquetWriter } from 'hyparquet-writer';
import { bucketCount, type SparseHistogram } from '../metrics/histogram.js';

type ColumnChunk = ParquetWriter['row_groups'][number]['columns'][number];
type Writer = ParquetWriter['writer'];
type Compress = (bytes: Uint8Array) => Uint8Array;

/** A growable byte buffer with the few encoders the chunk needs. */
class Bytes {
  buf = new Uint8Array(4096);
  n = 0;

  #room(k: number): void {
    if (this.n + k <= this.buf.length) return;
    const next = new Uint8Array(Math.max(this.buf.length * 2, this.n + k));
    next.set(this.buf.subarray(0, this.n));
    this.buf = next;
  }

  u8(v: number): void {
    this.#room(1);
    this.buf[this.n++] = v;
  }

  /** An RLE run: ULEB128 header `count << 1` (count < 2^31), then `value` in `width` ≤ 4 bytes, little-endian. */
  run(count: number, value: number, width: number): void {
    this.#room(5 + width);
    const buf = this.buf;
    let n = this.n;
    let v = count * 2;
    while (v >= 0x80) {
      buf[n++] = (v & 0x7f) | 0x80;
      v >>>= 7;
    }
    buf[n++] = v;
    for (let i = 0; i < width; i++) buf[n++] = (value >>> (8 * i)) & 0xff;
    this.n = n;
  }

  bytes(): Uint8Array {
    return this.buf.subarray(0, this.n);
  }
}

/** RLE runs of the RLE/bit-packed hybrid encoding, equal neighbours merged. */
class Runs {
  readonly #out: Bytes;
  readonly #width: number;
  #value = 0;
  #count = 0;

  constructor(out: Bytes, bitWidth: number) {
    this.#out = out;
    this.#width = Math.ceil(bitWidth / 8);
  }

  push(value: number, count: number): void {
    if (count === 0) return;
    if (value === this.#value && this.#count > 0) {
      this.#count += count;
      return;
    }
    this.flush();
    this.#value = value;
    this.#count = count;
  }

  flush(): void {
    if (this.#count === 0) return;
    this.#out.run(this.#count, this.#value, this.#width);
    this.#count = 0;
  }
}

/** Sets `v`, a safe unsigned integer, as a little-endian u64 at `at` without making a BigInt. */
function setU64(view: DataView, at: number, v: number): void {
  view.setUint32(at, v >>> 0, true);
  view.setUint32(at + 4, Math.floor(v / 0x1_0000_0000), true);
}

/** Throws unless `h` is a well-formed sparse histogram of `n` buckets with safe unsigned counts. */
function check(h: SparseHistogram, n: number): void {
  let prev = -1;
  for (let i = 0; i < h.index.length; i++) {
    const idx = h.index[i] as number;
    const count = h.count[i] as number;
    if (!(Number.isInteger(idx) && idx > prev && idx < n)) throw new RangeError(`histogram bucket index ${idx} out of order or range`);
    if (!(Number.isSafeInteger(count) && count >= 0)) throw new RangeError(`histogram bucket count ${count} is not a safe unsigned integer`);
    prev = idx;
  }
}

/**
 * Appends the chunk of counter or gauge column `name` for `cells` (null,
 * numbers, or bigints for counters beyond 2^53) to `writer`; returns its
 * metadata.
 */
export function writeScalarChunk(writer: Writer, name: string, kind: 'counter' | 'gauge', cells: readonly (number | bigint | null)[], gzip: Compress): ColumnChunk {
  let nonNull = 0;
  for (const c of cells) if (c !== null) nonNull++;
  const levels = new Bytes();
  const def = new Runs(levels, 1);
  for (const c of cells) def.push(c === null ? 0 : 1, 1);
  def.flush();
  const raw = new Uint8Array(8 * nonNull);
  const view = new DataView(raw.buffer);
  let at = 0;
  for (const c of cells) {
    if (c === null) continue;
    if (typeof c === 'object') throw new TypeError(`column ${name}: a histogram in a ${kind} column`);
    if (kind === 'gauge') view.setFloat64(at, Number(c), true);
    else if (typeof c === 'bigint') view.setBigUint64(at, c, true);
    else {
      if (!(Number.isSafeInteger(c) && c >= 0)) throw new RangeError(`counter ${name}: ${c} is not a safe unsigned integer`);
      setU64(view, at, c);
    }
    at += 8;
  }
  const values = gzip(raw);
  const start = writer.offset;
  writePageHeader(writer, {
    type: 'DATA_PAGE_V2',
    uncompressed_page_size: levels.n + raw.length,
    compressed_page_size: levels.n + values.length,
    data_page_header_v2: {
      num_values: cells.length,
      num_nulls: cells.length - nonNull,
      num_rows: cells.length,
      encoding: 'PLAIN',
      definition_levels_byte_length: levels.n,
      repetition_levels_byte_length: 0,
      is_compressed: true,
    },
  });
  const headerLength = writer.offset - start;
  writer.appendBytes(levels.bytes());
  writer.appendBytes(values);
  return {
    meta_data: {
      type: kind === 'gauge' ? 'DOUBLE' : 'INT64',
      encodings: ['PLAIN', 'RLE'],
      path_in_schema: [name],
      codec: 'GZIP',
      num_values: BigInt(cells.length),
      total_compressed_size: BigInt(writer.offset - start),
      total_uncompressed_size: BigInt(headerLength + levels.n + raw.length),
      data_page_offset: BigInt(start),
    },
    file_offset: BigInt(start),
  };
}

/**
 * Appends the chunk of histogram column `name` for `cells` (null or
 * g=3/m=64 sparse histograms) to `writer`; returns its metadata.
 */
export function writeHistogramChunk(writer: Writer, name: string, cells: readonly (SparseHistogram | null)[], gzip: Compress): ColumnChunk {
  const width = bucketCount(3, 64);
  const dictionary = new Map<number, number>([[0, 0]]);
  let nulls = 0;
  for (const h of cells) {
    if (h === null) {
      nulls++;
      continue;
    }
    if (typeof h !== 'object') throw new TypeError(`column ${name}: a scalar in a histogram column`);
    if (bucketCount(h.groupingPower, h.maxValuePower) !== width) throw new RangeError(`histogram of ${name} is not g=3, m=64`);
    check(h, width);
    for (const count of h.count) if (!dictionary.has(count)) dictionary.set(count, dictionary.size);
  }
  const numValues = (cells.length - nulls) * width + nulls;

  // levels, then the values: [bit width][RLE runs of dictionary indices]
  const levels = new Bytes();
  const rep = new Runs(levels, 1);
  for (const h of cells) {
    rep.push(0, 1);
    if (h !== null) rep.push(1, width - 1);
  }
  rep.flush();
  const repLength = levels.n;
  const def = new Runs(levels, 2);
  for (const h of cells) def.push(h === null ? 0 : 2, h === null ? 1 : width);
  def.flush();
  const defLength = levels.n - repLength;

  const bitWidth = Math.max(1, Math.ceil(Math.log2(dictionary.size)));
  const values = new Bytes();
  values.u8(bitWidth);
  const indices = new Runs(values, bitWidth);
  for (const h of cells) {
    if (h === null) continue;
    let next = 0;
    for (let k = 0; k < h.index.length; k++) {
      const idx = h.index[k] as number;
      indices.push(0, idx - next);
      indices.push(dictionary.get(h.count[k] as number) as number, 1);
      next = idx + 1;
    }
    indices.push(0, width - next);
  }
  indices.flush();

  const dict = new Uint8Array(8 * dictionary.size);
  const dictView = new DataView(dict.buffer);
  let at = 0;
  for (const v of dictionary.keys()) {
    setU64(dictView, at, v);
    at += 8;
  }

  const start = writer.offset;
  const dictGz = gzip(dict);
  writePageHeader(writer, {
    type: 'DICTIONARY_PAGE',
    uncompressed_page_size: dict.length,
    compressed_page_size: dictGz.length,
    dictionary_page_header: { num_values: dictionary.size, encoding: 'PLAIN' },
  });
  writer.appendBytes(dictGz);
  const dataStart = writer.offset;
  // data page v2: the levels stay uncompressed, the values are compressed
  const valuesGz = gzip(values.bytes());
  writePageHeader(writer, {
    type: 'DATA_PAGE_V2',
    uncompressed_page_size: levels.n + values.n,
    compressed_page_size: levels.n + valuesGz.length,
    data_page_header_v2: {
      num_values: numValues,
      num_nulls: nulls,
      num_rows: cells.length,
      encoding: 'RLE_DICTIONARY',
      definition_levels_byte_length: defLength,
      repetition_levels_byte_length: repLength,
      is_compressed: true,
    },
  });
  writer.appendBytes(levels.bytes());
  writer.appendBytes(valuesGz);
  const size = BigInt(writer.offset - start);
  const raw = BigInt(writer.offset - start - dictGz.length - valuesGz.length + dict.length + values.n);
  return {
    meta_data: {
      type: 'INT64',
      encodings: ['PLAIN', 'RLE', 'RLE_DICTIONARY'],
      path_in_schema: [name, 'list', 'element'],
      codec: 'GZIP',
      num_values: BigInt(numValues),
      total_compressed_size: size,
      total_uncompressed_size: raw,
      data_page_offset: BigInt(dataStart),
      dictionary_page_offset: BigInt(start),
    },
    file_offset: BigInt(start),
  };
}
