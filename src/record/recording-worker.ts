/**
 * Worker thread entry of the recorder's writer (write.ts): runs a
 * RecordingSink on the frames the main thread sends, acks each batch with
 * the progress, and posts the summary when the file is finished. After an
 * error it removes the temporary file and exits.
 */
import { parentPort, workerData } from 'node:worker_threads';
import { RecordingSink, type SinkOptions } from './sink.js';
import type { FromWorker, ToWorker } from './write.js';

const port = parentPort;
if (port === null) throw new Error('recording-worker.ts runs only as a worker thread');
let sink: RecordingSink | undefined;

function post(m: FromWorker): void {
  port?.postMessage(m);
}

function fail(error: unknown): void {
  sink?.abort();
  sink = undefined;
  post({ t: 'error', message: error instanceof Error ? error.message : String(error) });
  port?.close();
}

try {
  sink = new RecordingSink(workerData as SinkOptions);
} catch (error) {
  fail(error);
}

port.on('message', (m: ToWorker) => {
  const s = sink;
  if (s === undefined) return;
  try {
    if (m.t === 'frames') {
      for (const [hash, d] of m.descriptors) s.describe(hash, d);
      for (const f of m.frames) s.add(f);
      post({ t: 'ack', progress: s.progress() });
    } else if (m.t === 'finish') {
      sink = undefined;
      s.finish().then(
        (summary) => {
          post({ t: 'done', summary });
          port.close();
        },
        fail,
      );
    } else {
      s.abort();
      sink = undefined;
      port.close();
    }
  } catch (error) {
    fail(error);
  }
});
