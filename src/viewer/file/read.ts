/**
 * Column chunks of a recording, decoded by hyparquet one row group at a
 * time: a row group's decoded cells (a histogram's are 496 bigints a row)
 * are handed over and can be dropped before the next group is read, so
 * reading a column never holds all of it in its dense form.
 */
import { parquetRead, type ColumnData, type FileMetaData } from 'hyparquet';
import { COMPRESSORS } from './codecs.js';
import { ViewerFileError } from './errors.js';
import type { FileSource } from './source.js';

/** A column chunk: cells of rows rowStart … rowStart + cells.length − 1 of the file. */
export interface Chunk {
  readonly column: string;
  readonly rowStart: number;
  readonly cells: ArrayLike<unknown>;
}

/**
 * Reads `columns` (top-level names) group by group; `onGroup` gets each
 * group's chunks, every column's in order, once the group is decoded (it may
 * throw: it is not called from inside hyparquet).
 */
export async function readChunks(source: FileSource, metadata: FileMetaData, columns: readonly string[], onGroup: (chunks: readonly Chunk[]) => void): Promise<void> {
  let start = 0;
  for (const group of metadata.row_groups) {
    const rows = Number(group.num_rows);
    const got: ColumnData[] = [];
    try {
      await parquetRead({
        file: source.buffer,
        metadata,
        columns: [...columns],
        rowStart: start,
        rowEnd: start + rows,
        compressors: COMPRESSORS,
        onChunk: (c) => got.push(c),
      });
    } catch (error) {
      if (error instanceof ViewerFileError) throw error;
      const reason = error instanceof Error ? error.message : String(error);
      throw new ViewerFileError(source.path, 'corrupt', `${source.path} is damaged: the columns ${columns.slice(0, 3).join(', ')}${columns.length > 3 ? ', …' : ''} of rows ${start}–${start + rows - 1} cannot be decoded (${reason})`, { cause: error });
    }
    const chunks: Chunk[] = got.map((c) => ({ column: c.columnName, rowStart: c.rowStart, cells: c.columnData }));
    const covered = new Map<string, number>();
    for (const c of chunks) covered.set(c.column, (covered.get(c.column) ?? 0) + c.cells.length);
    for (const name of columns) {
      if ((covered.get(name) ?? 0) < rows) throw new ViewerFileError(source.path, 'corrupt', `${source.path} is damaged: column ${name} has fewer values than rows ${start}–${start + rows - 1}`);
    }
    onGroup(chunks);
    start += rows;
  }
}
