/** Why a recording cannot be opened by the viewer. */
import { RezolusError } from '../../errors.js';

/**
 * - `missing`: no file under that path;
 * - `unreadable`: it exists but cannot be read (permissions, a directory, I/O);
 * - `not-parquet`: it does not start with the Parquet magic;
 * - `incomplete`: a Parquet start without a whole footer (still being written, or cut short);
 * - `corrupt`: a footer that cannot be decoded, or column data that cannot;
 * - `not-recording`: a Parquet file of another layout.
 */
export type ViewerFileProblem = 'missing' | 'unreadable' | 'not-parquet' | 'incomplete' | 'corrupt' | 'not-recording';

/** A file given to the viewer that is not a recording it can show; the message names the file. */
export class ViewerFileError extends RezolusError {
  override readonly name = 'ViewerFileError';
  constructor(
    readonly path: string,
    readonly problem: ViewerFileProblem,
    message: string,
    options?: { cause?: unknown },
  ) {
    super('VIEWER_FILE', message, options);
  }
}
