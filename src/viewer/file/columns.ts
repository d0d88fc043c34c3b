/**
 * Series columns of a recording, decoded: counters and gauges as numbers
 * (NaN for null), histograms as sparse histograms (undefined for null), a
 * row group at a time. Chunks the recorder wrote go through chunk.ts, read
 * with one file read per run of adjacent chunks (a metric's series are
 * adjacent columns); a column any of whose chunks chunk.ts does not read
 * is read whole through hyparquet.
 */
import type { ColumnMetaData, FileMetaData } from 'hyparquet';
import type { SparseHistogram } from '../../metrics/histogram.js';
import { histogramCell, scalarCell } from './cells.js';
import { decodeHistograms, decodeScalars } from './chunk.js';
import { ViewerFileError } from './errors.js';
import type { SeriesLayout } from './layout.js';
import { readChunks } from './read.js';
import type { FileSource } from './source.js';

export type Cells = ArrayLike<number> | ArrayLike<SparseHistogram | undefined>;

/** `cells` are the values of rows rowStart, rowStart + 1, … of the file. */
export type OnCells = (id: string, rowStart: number, cells: Cells) => void;

/** Chunks closer than this are read together (the bytes between are read and dropped). */
const GAP = 64 * 1024;
/** Columns read through hyparquet together. */
const SLOW_BATCH = 8;

interface Span {
  readonly id: string;
  readonly start: number;
  readonly end: number;
  readonly meta: ColumnMetaData;
}

function spanOf(id: string, meta: ColumnMetaData): Span {
  const data = Number(meta.data_page_offset);
  const dict = meta.dictionary_page_offset === undefined ? undefined : Number(meta.dictionary_page_offset);
  const start = dict !== undefined && dict > 0 && dict < data ? dict : data;
  return { id, start, end: start + Number(meta.total_compressed_size), meta };
}

/** Reads the spans with as few reads as their layout allows; calls `each` with every span's bytes. */
async function readSpans(source: FileSource, spans: Span[], each: (span: Span, bytes: Uint8Array) => void): Promise<void> {
  const sorted = [...spans].sort((a, b) => a.start - b.start);
  let i = 0;
  while (i < sorted.length) {
    const first = sorted[i] as Span;
    let end = first.end;
    let j = i + 1;
    while (j < sorted.length && (sorted[j] as Span).start <= end + GAP) end = Math.max(end, (sorted[j++] as Span).end);
    const bytes = await source.read(first.start, end);
    for (let k = i; k < j; k++) {
      const s = sorted[k] as Span;
      each(s, bytes.subarray(s.start - first.start, s.end - first.start));
    }
    i = j;
  }
}

function damaged(source: FileSource, id: string, rowStart: number, error: unknown): ViewerFileError {
  if (error instanceof ViewerFileError) return error;
  const reason = error instanceof Error ? error.message : String(error);
  return new ViewerFileError(source.path, 'corrupt', `${source.path} is damaged: column ${id} (rows from ${rowStart}) cannot be decoded: ${reason}`, { cause: error });
}

/** Decodes one chunk by chunk.ts; undefined when it is not of the recorder's making. */
function decodeChunk(layout: SeriesLayout, meta: ColumnMetaData, bytes: Uint8Array, rows: number): Cells | undefined {
  if (layout.info.kind === 'histogram') return decodeHistograms(bytes, meta.codec, rows, layout.groupingPower, layout.maxValuePower);
  return decodeScalars(bytes, meta.codec, meta.type, rows);
}

/** Reads `layouts`' columns (of one file) and hands each row group's cells of each to `onCells`. */
export async function readColumns(source: FileSource, metadata: FileMetaData, layouts: readonly SeriesLayout[], onCells: OnCells): Promise<void> {
  const wanted = new Map(layouts.map((l) => [l.info.id, l]));
  const slow = new Set<string>();
  let rowStart = 0;
  for (const group of metadata.row_groups) {
    const rows = Number(group.num_rows);
    const spans: Span[] = [];
    for (const chunk of group.columns) {
      const id = chunk.meta_data?.path_in_schema[0];
      if (id === undefined || !wanted.has(id) || slow.has(id) || chunk.meta_data === undefined) continue;
      spans.push(spanOf(id, chunk.meta_data));
    }
    await readSpans(source, spans, (span, bytes) => {
      const layout = wanted.get(span.id) as SeriesLayout;
      let cells: Cells | undefined;
      try {
        cells = decodeChunk(layout, span.meta, bytes, rows);
      } catch (error) {
        throw damaged(source, span.id, rowStart, error);
      }
      if (cells === undefined) slow.add(span.id);
      else onCells(span.id, rowStart, cells);
    });
    rowStart += rows;
  }
  // a group's dense histograms are 496 cells a row in hyparquet's form: a few columns at a time
  const rest = [...slow].map((id) => wanted.get(id) as SeriesLayout);
  for (let i = 0; i < rest.length; i += SLOW_BATCH) await readSlowly(source, metadata, rest.slice(i, i + SLOW_BATCH), onCells);
}

/** Columns through hyparquet: each cell converted as chunk.ts would have. */
async function readSlowly(source: FileSource, metadata: FileMetaData, layouts: readonly SeriesLayout[], onCells: OnCells): Promise<void> {
  const byId = new Map(layouts.map((l) => [l.info.id, l]));
  await readChunks(
    source,
    metadata,
    layouts.map((l) => l.info.id),
    (chunks) => {
      for (const { column, rowStart, cells } of chunks) {
        const l = byId.get(column);
        if (l === undefined) continue;
        try {
          const out =
            l.info.kind === 'histogram'
              ? Array.from(cells, (c) => histogramCell(c, l.groupingPower, l.maxValuePower))
              : Float64Array.from(Array.from(cells, scalarCell));
          onCells(column, rowStart, out);
        } catch (error) {
          throw damaged(source, column, rowStart, error);
        }
      }
    },
  );
}
