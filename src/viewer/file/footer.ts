/**
 * The Parquet footer of a recording, checked before it is decoded so that
 * each way a file can be wrong gets its own message: not Parquet at all (no
 * leading magic), incomplete (a Parquet start but no footer yet: the
 * recorder writes `<name>.tmp-<pid>-…` and renames it when it is whole, and
 * a copy can be cut short), or a footer that does not decode.
 */
import { parquetMetadata, type FileMetaData } from 'hyparquet';
import { ViewerFileError } from './errors.js';
import { isTemporaryName, type FileSource } from './source.js';

const MAGIC = [0x50, 0x41, 0x52, 0x31]; // "PAR1"

function isMagic(bytes: Uint8Array, at: number): boolean {
  return MAGIC.every((b, i) => bytes[at + i] === b);
}

function incomplete(path: string, what: string): ViewerFileError {
  const why = isTemporaryName(path)
    ? 'this is the recorder’s temporary file, still being written (or left by a recorder that was killed); the recording appears under its own name when it is finished'
    : 'it looks incomplete: still being written, or cut short (the recorder writes <name>.tmp-… and renames it when the recording is finished)';
  return new ViewerFileError(path, 'incomplete', `${path} ${what}: ${why}`);
}

export async function readFooter(source: FileSource): Promise<FileMetaData> {
  const { path, size } = source;
  if (size === 0) throw incomplete(path, 'is empty (0 bytes)');
  const head = await source.read(0, Math.min(4, size));
  if (!MAGIC.slice(0, head.length).every((b, i) => head[i] === b)) {
    throw new ViewerFileError(path, 'not-parquet', `${path} is not a Parquet file (it does not start with the Parquet magic "PAR1"), so it is not a rezolus recording`);
  }
  if (size < 12) throw incomplete(path, `has only ${size} bytes and no Parquet footer`);
  const tail = await source.read(size - 8, size);
  if (!isMagic(tail, 4)) throw incomplete(path, 'has no Parquet footer (it does not end with "PAR1")');
  const length = new DataView(tail.buffer, tail.byteOffset, 8).getUint32(0, true);
  if (length > size - 12) throw new ViewerFileError(path, 'corrupt', `${path} is damaged: its Parquet footer claims ${length} bytes, more than the file holds (${size} bytes)`);
  const footer = await source.read(size - 8 - length, size);
  try {
    return parquetMetadata(footer);
  } catch (error) {
    const reason = error instanceof Error ? error.message : String(error);
    throw new ViewerFileError(path, 'corrupt', `${path} is damaged: its Parquet footer cannot be decoded (${reason})`, { cause: error });
  }
}
