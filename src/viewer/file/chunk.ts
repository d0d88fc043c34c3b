/**
 * A fast path for the column chunks the recorder writes
 * (src/parquet/chunks.ts): data pages v2 (levels uncompressed, values
 * compressed), values PLAIN or dictionary-encoded, levels and dictionary
 * indices in the RLE / bit-packed hybrid. A histogram chunk is read run by
 * run into sparse histograms directly: through hyparquet, each row became a
 * list of 496 bigints first, which cost ~300 ms a column of 3600 rows (this
 * path: a few ms). Any other page type or encoding gives undefined, and the
 * caller reads that column through hyparquet instead. Malformed data
 * throws. Pure.
 */
import type { PageHeader } from 'hyparquet';
import { parquetHeader } from 'hyparquet/src/column.js';
import { bucketCount, type SparseHistogram } from '../../metrics/histogram.js';
import { decompress } from './codecs.js';
import { Runs } from './hybrid.js';

const U32 = 2 ** 32;
/** a u64 at or beyond 2^53 (not a safe count) */
const UNSAFE = Number.NaN;

type DataPageHeaderV2 = NonNullable<PageHeader['data_page_header_v2']>;

interface Page {
  readonly header: PageHeader;
  readonly body: Uint8Array;
}

function pagesOf(bytes: Uint8Array): Page[] {
  const reader = { view: new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength), offset: 0 };
  const pages: Page[] = [];
  while (reader.offset < bytes.length) {
    const header = parquetHeader(reader);
    const size = header.compressed_page_size;
    if (!(size >= 0) || reader.offset + size > bytes.length) throw new Error('a page runs past the end of its column chunk');
    pages.push({ header, body: bytes.subarray(reader.offset, reader.offset + size) });
    reader.offset += size;
  }
  return pages;
}

/** u64 little-endian at `at` as a number: exact below 2^53; `unsafe` gives NaN from there (histogram counts must be exact). */
function u64(view: DataView, at: number, unsafe: boolean): number {
  const hi = view.getUint32(at + 4, true);
  if (unsafe && hi >= 2 ** 21) return UNSAFE;
  return hi * U32 + view.getUint32(at, true);
}

/** PLAIN INT64 (unsigned) or DOUBLE values. */
function plainValues(bytes: Uint8Array, type: string, count: number, exact: boolean): Float64Array {
  if (bytes.length < 8 * count) throw new Error(`a page holds ${bytes.length} bytes of values, fewer than its ${count} values need`);
  const view = new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength);
  const out = new Float64Array(count);
  for (let i = 0; i < count; i++) out[i] = type === 'DOUBLE' ? view.getFloat64(8 * i, true) : u64(view, 8 * i, exact);
  return out;
}

interface DataPage {
  readonly v2: DataPageHeaderV2;
  readonly levels: Uint8Array;
  readonly values: Uint8Array;
}

/** The parts of a data page v2; undefined for another page type. */
function dataPage(page: Page, codec: string): DataPage | undefined {
  const v2 = page.header.data_page_header_v2;
  if (page.header.type !== 'DATA_PAGE_V2' || v2 === undefined) return undefined;
  const levels = v2.repetition_levels_byte_length + v2.definition_levels_byte_length;
  if (levels > page.body.length) throw new Error('a page’s levels run past its end');
  const raw = page.body.subarray(levels);
  const values = v2.is_compressed === false ? raw : decompress(codec, raw, page.header.uncompressed_page_size - levels);
  return { v2, levels: page.body, values };
}

/** The dictionary of a chunk, when its first page is one. */
function dictionaryOf(pages: Page[], codec: string, type: string, exact: boolean): Float64Array | undefined {
  const first = pages[0];
  if (first?.header.type !== 'DICTIONARY_PAGE') return undefined;
  const h = first.header.dictionary_page_header;
  if (h === undefined) throw new Error('a dictionary page without its header');
  return plainValues(decompress(codec, first.body, first.header.uncompressed_page_size), type, h.num_values, exact);
}

/** Reads `count` values of a page into `out` from `at`, in order: PLAIN, or dictionary indices. */
class Values {
  readonly #plain: Float64Array | undefined;
  readonly #indices: Runs | undefined;
  readonly #dictionary: Float64Array | undefined;
  #at = 0;

  constructor(page: DataPage, type: string, dictionary: Float64Array | undefined, count: number, exact: boolean) {
    const encoding = page.v2.encoding;
    if (encoding === 'PLAIN') this.#plain = plainValues(page.values, type, count, exact);
    else {
      if (dictionary === undefined) throw new Error(`${encoding} values without a dictionary`);
      const width = page.values[0] ?? 0;
      this.#indices = new Runs(page.values, 1, page.values.length, width);
      this.#dictionary = dictionary;
    }
  }

  /** The next value. */
  next(): number {
    if (this.#plain !== undefined) return this.#plain[this.#at++] as number;
    const runs = this.#indices as Runs;
    if (!runs.fill()) throw new Error('a page has fewer values than its levels say');
    runs.left--;
    return this.#lookup(runs.value);
  }

  /** The next `n` values into out[at …]. */
  copy(out: Float64Array, at: number, n: number): void {
    if (this.#plain !== undefined) {
      if (this.#at + n > this.#plain.length) throw new Error('a page has fewer values than its levels say');
      out.set(this.#plain.subarray(this.#at, this.#at + n), at);
      this.#at += n;
      return;
    }
    const runs = this.#indices as Runs;
    for (let done = 0; done < n; ) {
      if (!runs.fill()) throw new Error('a page has fewer values than its levels say');
      const take = Math.min(runs.left, n - done);
      out.fill(this.#lookup(runs.value), at + done, at + done + take);
      runs.left -= take;
      done += take;
    }
  }

  /**
   * The next `n` values as one sparse row: the positions (0 … n−1) and
   * values of the non-zero ones into index/count; returns how many. Throws
   * for a value that is not exact (NaN: a u64 beyond 2^53).
   */
  sparse(n: number, index: Int32Array, count: Float64Array): number {
    let k = 0;
    if (this.#plain !== undefined) {
      const plain = this.#plain;
      if (this.#at + n > plain.length) throw new Error('a page has fewer values than its levels say');
      for (let b = 0; b < n; b++) {
        const v = plain[this.#at++] as number;
        if (v === 0) continue;
        if (Number.isNaN(v)) throw new RangeError('a bucket count beyond 2^53');
        index[k] = b;
        count[k++] = v;
      }
      return k;
    }
    const runs = this.#indices as Runs;
    const dictionary = this.#dictionary as Float64Array;
    for (let b = 0; b < n; ) {
      if (!runs.fill()) throw new Error('a page has fewer values than its levels say');
      const take = Math.min(runs.left, n - b);
      const v = dictionary[runs.value];
      if (v === undefined) throw new Error(`dictionary index ${runs.value} out of range`);
      runs.left -= take;
      if (v !== 0) {
        if (Number.isNaN(v)) throw new RangeError('a bucket count beyond 2^53');
        for (const end = b + take; b < end; b++) {
          index[k] = b;
          count[k++] = v;
        }
      } else b += take;
    }
    return k;
  }

  #lookup(index: number): number {
    const v = (this.#dictionary as Float64Array)[index];
    if (v === undefined) throw new Error(`dictionary index ${index} out of range`);
    return v;
  }
}

/** Known value encodings; another one sends the chunk to hyparquet. */
function readable(pages: readonly DataPage[]): boolean {
  return pages.every((p) => p.v2.encoding === 'PLAIN' || p.v2.encoding === 'RLE_DICTIONARY' || p.v2.encoding === 'PLAIN_DICTIONARY');
}

/** Data pages v2 after an optional dictionary page; undefined when the chunk has another page type. */
function dataPages(pages: Page[], codec: string): DataPage[] | undefined {
  const data: DataPage[] = [];
  for (const page of pages.slice(pages[0]?.header.type === 'DICTIONARY_PAGE' ? 1 : 0)) {
    const d = dataPage(page, codec);
    if (d === undefined) return undefined;
    data.push(d);
  }
  return readable(data) ? data : undefined;
}

/**
 * A counter (`INT64`) or gauge (`DOUBLE`) chunk of an OPTIONAL column: a
 * number per row, NaN where it is null. Counters beyond 2^53 lose their low
 * bits (as Number(bigint) does).
 */
export function decodeScalars(bytes: Uint8Array, codec: string, type: string, rows: number): Float64Array | undefined {
  const pages = pagesOf(bytes);
  const data = dataPages(pages, codec);
  if (data === undefined) return undefined;
  const dictionary = dictionaryOf(pages, codec, type, false);
  const out = new Float64Array(rows).fill(Number.NaN);
  let r = 0;
  for (const page of data) {
    const { v2 } = page;
    if (v2.repetition_levels_byte_length !== 0) throw new Error('repetition levels in a flat column');
    if (r + v2.num_values > rows) throw new Error(`the chunk holds more values than its ${rows} rows`);
    const present = v2.num_values - v2.num_nulls;
    const values = new Values(page, type, dictionary, present, false);
    if (v2.definition_levels_byte_length === 0) {
      for (let i = 0; i < v2.num_values; i++) out[r++] = values.next();
      continue;
    }
    const def = new Runs(page.levels, 0, v2.definition_levels_byte_length, 1);
    let left = v2.num_values;
    while (left > 0) {
      if (!def.fill()) throw new Error('a page has fewer definition levels than values');
      const take = Math.min(def.left, left);
      if (def.value === 1) values.copy(out, r, take);
      r += take;
      left -= take;
      def.left -= take;
    }
  }
  if (r !== rows) throw new Error(`the chunk holds ${r} values for ${rows} rows`);
  return out;
}

/**
 * A histogram chunk (`<name>` OPTIONAL LIST of REQUIRED INT64, each row the
 * dense bucket counts of the g/m layout): a sparse histogram per row,
 * undefined where the row is null. Throws for a row of another length or
 * a count beyond 2^53.
 */
export function decodeHistograms(bytes: Uint8Array, codec: string, rows: number, groupingPower: number, maxValuePower: number): (SparseHistogram | undefined)[] | undefined {
  const pages = pagesOf(bytes);
  const data = dataPages(pages, codec);
  if (data === undefined) return undefined;
  const dictionary = dictionaryOf(pages, codec, 'INT64', true);
  const buckets = bucketCount(groupingPower, maxValuePower);
  const out = new Array<SparseHistogram | undefined>(rows).fill(undefined);
  const index = new Int32Array(buckets);
  const count = new Float64Array(buckets);
  let r = 0;
  for (const page of data) {
    const { v2 } = page;
    const repLength = v2.repetition_levels_byte_length;
    const rep = new Runs(page.levels, 0, repLength, 1);
    const def = new Runs(page.levels, repLength, repLength + v2.definition_levels_byte_length, 2);
    const values = new Values(page, 'INT64', dictionary, v2.num_values - v2.num_nulls, true);
    let left = v2.num_values;
    while (left > 0) {
      if (!rep.fill() || !def.fill()) throw new Error('a page has fewer levels than values');
      if (rep.value !== 0) throw new Error('a list continues where a row should start');
      if (r >= rows) throw new Error(`the chunk holds more than its ${rows} rows`);
      if (def.value < 2) {
        // null (0) or an empty list (1): no histogram
        rep.left--;
        def.left--;
        left--;
        r++;
        continue;
      }
      rep.left--;
      let length = 1;
      while (length < left && rep.peek() === 1) {
        const take = Math.min(rep.left, left - length);
        length += take;
        rep.left -= take;
      }
      if (length !== buckets) throw new RangeError(`row ${r} has ${length} buckets, not the ${buckets} of grouping power ${groupingPower}, max value power ${maxValuePower}`);
      for (let need = length; need > 0; ) {
        if (!def.fill() || def.value !== 2) throw new Error('a histogram row with a missing bucket');
        const take = Math.min(def.left, need);
        def.left -= take;
        need -= take;
      }
      let k: number;
      try {
        k = values.sparse(length, index, count);
      } catch (error) {
        throw error instanceof RangeError ? new RangeError(`row ${r}: ${error.message}`) : error;
      }
      const rowIndex = new Array<number>(k);
      const rowCount = new Array<number>(k);
      for (let j = 0; j < k; j++) {
        rowIndex[j] = index[j] as number;
        rowCount[j] = count[j] as number;
      }
      out[r++] = { groupingPower, maxValuePower, index: rowIndex, count: rowCount };
      left -= length;
    }
  }
  if (r !== rows) throw new Error(`the chunk holds ${r} rows, not ${rows}`);
  return out;
}
