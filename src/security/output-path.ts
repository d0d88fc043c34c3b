import { dirname, isAbsolute, relative, resolve, sep } from 'node:path';
import { BadRequestError } from '../errors.js';

/**
 * The file a request names for its output, in the directory of the
 * configured output. A request can only pick a plain file name there: a
 * directory part of any kind (`sub/x`, `../x`, an absolute path) is refused,
 * so no symlinked subdirectory can lead a dump outside. A symlink under the
 * name itself is replaced, not followed: the file is renamed into place.
 */
export function outputInside(configuredOutput: string, requested: unknown): string {
  if (typeof requested !== 'string' || requested === '') throw new BadRequestError(`output must be a file name such as "incident-42.parquet", got ${JSON.stringify(requested)}`);
  if (requested.includes('\0')) throw new BadRequestError('output must not contain a NUL byte');
  if (isAbsolute(requested) || /^[A-Za-z]:[\\/]/.test(requested)) throw new BadRequestError(`output "${requested}" is an absolute path: give a name inside the output directory`);
  if (!requested.endsWith('.parquet')) throw new BadRequestError(`output "${requested}" must end with .parquet`);
  const dir = dirname(resolve(configuredOutput));
  if (/[\\/]/.test(requested)) {
    throw new BadRequestError(`output "${requested}" has a directory part: give a plain file name, written in the output directory ${dir}`);
  }
  const target = resolve(dir, requested);
  const rel = relative(dir, target);
  if (rel === '' || rel === '..' || rel.startsWith(`..${sep}`) || isAbsolute(rel)) {
    throw new BadRequestError(`output "${requested}" resolves outside the output directory ${dir}`);
  }
  return target;
}
