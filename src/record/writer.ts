/** The Parquet writer of a recording, stopping the recording when the file cannot be written. */
import type { Logger } from 'pino';
import { RecordingWriter } from '../parquet/write.js';
import { VERSION } from '../version.js';
import type { RecordConfig } from './types.js';

export function newWriter(config: RecordConfig, log: Logger, stop: () => void): RecordingWriter {
  const writer = new RecordingWriter({ output: config.output, intervalMs: config.intervalMs, version: VERSION });
  writer.onError((error) => {
    // the error itself ends the recording and is reported by its caller (one line on the command line)
    log.debug({ err: error }, 'the recording cannot be written; stopping');
    stop();
  });
  return writer;
}
