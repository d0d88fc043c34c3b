/**
 * Worker thread entry of the recorder's writer (write.ts): decodes the
 * frames the main thread sends (already checked there), runs a
 * RecordingSink on them, acks each batch with the progress, and posts the
 * summary when the file is finished. After an
 * error it removes the temporary file and exits.
 */
import { parentPort, workerData } from 'node:worker_threads';
import { decodeFrame, resolveFrame } from '../frame/codec.js';
import { RecordingSink, type SinkOptions } from './sink.js';
import type { FromWorker, ToWorker } from './write.js';

const port = parentPort;
if (port === null) throw new Error('recording-worker.ts runs only as a worker thread');
let sink: RecordingSink | undefined;

/** Each frame of a packed batch, decoded and resolved. */
function addPacked(s: RecordingSink, packed: ArrayBuffer): void {
  const bytes = new Uint8Array(packed);
  const view = new DataView(packed);
  for (let at = 0; at < bytes.length; ) {
    const n = view.getUint32(at, true);
    const raw = decodeFrame(bytes.subarray(at + 4, at + 4 + n));
    at += 4 + n;
    const d = s.descriptor(raw.descriptor);
    if (d === undefined) throw new Error(`descriptor ${raw.descriptor} was not sent before its frames`);
    s.add(resolveFrame(raw, d));
  }
}

function post(m: FromWorker): void {
  port?.postMessage(m);
}

function fail(error: unknown): void {
  sink?.abort();
  sink = undefined;
  const code = (error as NodeJS.ErrnoException | undefined)?.code;
  post({ t: 'error', message: error instanceof Error ? error.message : String(error), code: typeof code === 'string' ? code : undefined });
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
      addPacked(s, m.packed);
      post({ t: 'ack', progress: s.progress() });
    } else if (m.t === 'finish') {
      sink = undefined;
      s.finish().then(
        (summary) => {
          post({ t: 'done', summary });
          port.close();
        },
        (error: unknown) => {
          // the temporary file goes, whichever step failed
          s.abort();
          fail(error);
        },
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
