/**
 * File-system failures of a recording as one-line typed errors that name
 * the path and the errno code (`ENOSPC: no space left on device`).
 */
import { RezolusError } from '../errors.js';

const REASONS: Readonly<Record<string, string>> = {
  ENOSPC: 'no space left on device',
  EDQUOT: 'disk quota exceeded',
  EROFS: 'read-only file system',
  EACCES: 'permission denied',
  EIO: 'I/O error',
  ENOENT: 'no such file or directory',
};

/** `ENOSPC (no space left on device)`, or the error's own message when it has no errno code. */
export function ioReason(error: unknown): string {
  const code = (error as NodeJS.ErrnoException | undefined)?.code;
  if (typeof code === 'string' && REASONS[code] !== undefined) return `${code} (${REASONS[code]})`;
  const message = error instanceof Error ? error.message : String(error);
  return message.split('\n')[0] ?? message;
}

export function writeError(path: string, error: unknown): RezolusError {
  if (error instanceof RezolusError) return error;
  return new RezolusError('WRITE_FAILED', `cannot write ${path}: ${ioReason(error)}`, { cause: error });
}
