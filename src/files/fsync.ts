/** fsync helpers: a file's data, and a directory's entries (a rename or unlink in it). */
import { closeSync, fsyncSync, openSync } from 'node:fs';
import { dirname } from 'node:path';

export function syncFile(path: string): void {
  const fd = openSync(path, 'r');
  try {
    fsyncSync(fd);
  } finally {
    closeSync(fd);
  }
}

/** fsyncs the directory holding `path`, so that a rename or unlink of it is durable. */
export function syncDir(path: string): void {
  syncFile(dirname(path));
}
