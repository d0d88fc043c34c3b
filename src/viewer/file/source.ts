/**
 * A recording file opened for reading: one file descriptor, held until
 * close(), read at positions (hyparquet's AsyncBuffer). Holding the
 * descriptor keeps the viewer on the file it opened: a recorder that renames
 * a new recording over the same path does not mix two files' bytes.
 */
import { readdirSync } from 'node:fs';
import { open, type FileHandle } from 'node:fs/promises';
import { basename, dirname, join } from 'node:path';
import type { AsyncBuffer } from 'hyparquet';
import { ioReason } from '../../files/io-error.js';
import { ViewerFileError } from './errors.js';

export interface FileSource {
  readonly path: string;
  readonly size: number;
  readonly buffer: AsyncBuffer;
  /** Bytes [start, end) of the file; throws ViewerFileError when fewer are there. */
  read(start: number, end: number): Promise<Uint8Array>;
  close(): Promise<void>;
}

/** The recorder's temporary files of `path` (`<name>.tmp-<pid>-…`), if any. */
export function temporariesOf(path: string): string[] {
  const prefix = `${basename(path)}.tmp-`;
  try {
    return readdirSync(dirname(path))
      .filter((n) => n.startsWith(prefix))
      .map((n) => join(dirname(path), n));
  } catch {
    return [];
  }
}

/** True for a name the recorder gives its file while it writes it. */
export function isTemporaryName(path: string): boolean {
  return /\.tmp-\d+-/.test(basename(path));
}

function openError(path: string, error: unknown): ViewerFileError {
  const code = (error as NodeJS.ErrnoException | undefined)?.code;
  if (code === 'ENOENT') {
    const tmp = temporariesOf(path)[0];
    const hint = tmp === undefined ? '' : `; a recording is still being written to ${tmp}: open ${path} when the recorder has finished`;
    return new ViewerFileError(path, 'missing', `cannot open ${path}: no such file${hint}`, { cause: error });
  }
  return new ViewerFileError(path, 'unreadable', `cannot read ${path}: ${ioReason(error)}`, { cause: error });
}

export async function openSource(path: string): Promise<FileSource> {
  let handle: FileHandle;
  let size: number;
  try {
    handle = await open(path, 'r');
  } catch (error) {
    throw openError(path, error);
  }
  try {
    const st = await handle.stat();
    if (!st.isFile()) throw new ViewerFileError(path, 'unreadable', `cannot read ${path}: ${st.isDirectory() ? 'it is a directory' : 'it is not a regular file'}, not a recording`);
    size = st.size;
  } catch (error) {
    await handle.close().catch(() => undefined);
    throw error instanceof ViewerFileError ? error : openError(path, error);
  }
  const read = async (start: number, end: number): Promise<Uint8Array> => {
    const bytes = new Uint8Array(Math.max(0, end - start));
    let got = 0;
    try {
      while (got < bytes.length) {
        const { bytesRead } = await handle.read(bytes, got, bytes.length - got, start + got);
        if (bytesRead === 0) break;
        got += bytesRead;
      }
    } catch (error) {
      throw new ViewerFileError(path, 'unreadable', `cannot read ${path}: ${ioReason(error)}`, { cause: error });
    }
    if (got < bytes.length) throw new ViewerFileError(path, 'incomplete', `${path} ends at byte ${start + got}, before byte ${end} that its Parquet footer refers to: the file was cut short (or is damaged)`);
    return bytes;
  };
  return {
    path,
    size,
    read,
    buffer: {
      byteLength: size,
      slice: async (start, end) => (await read(start, end ?? size)).buffer as ArrayBuffer,
    },
    close: () => handle.close(),
  };
}
