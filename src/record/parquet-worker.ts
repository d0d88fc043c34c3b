/**
 * Worker thread entry: writes one Parquet file off the main thread, so a
 * large write never stalls the process's subscriptions and HTTP. Receives
 * writeParquetFile's arguments as workerData; posts `{ ok }` or `{ error }`.
 */
import { parentPort, workerData } from 'node:worker_threads';
import { writeParquetFile } from './parquet.js';
import type { WorkerJob } from './write.js';

const job = workerData as WorkerJob;
writeParquetFile(job.path, job.columns, job.rows, job.meta, job.rowGroupSize).then(
  () => parentPort?.postMessage({ ok: true }),
  (error: unknown) => parentPort?.postMessage({ ok: false, error: String(error) }),
);
