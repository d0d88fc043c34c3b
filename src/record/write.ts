/**
 * Writes a Parquet file in a worker thread (see parquet-worker.ts), so that
 * encoding a long recording never blocks the event loop of the recorder or
 * the hindsight service.
 */
import { Worker } from 'node:worker_threads';
import type { ColumnSpec } from './columns.js';
import { ROW_GROUP_SIZE, type FileMetadata, type RecordRow } from './parquet.js';

export interface WorkerJob {
  readonly path: string;
  readonly columns: readonly ColumnSpec[];
  readonly rows: readonly RecordRow[];
  readonly meta: FileMetadata;
  readonly rowGroupSize: number;
}

export function writeParquetInWorker(
  path: string,
  columns: readonly ColumnSpec[],
  rows: readonly RecordRow[],
  meta: FileMetadata,
  rowGroupSize = ROW_GROUP_SIZE,
): Promise<void> {
  const job: WorkerJob = { path, columns, rows, meta, rowGroupSize };
  return new Promise((resolve, reject) => {
    const worker = startWorker(job);
    let settled = false;
    worker.once('message', (m: { ok: boolean; error?: string }) => {
      settled = true;
      if (m.ok) resolve();
      else reject(new Error(`writing ${path} failed: ${m.error ?? 'unknown error'}`));
    });
    worker.once('error', (error) => {
      settled = true;
      reject(error);
    });
    worker.once('exit', (code) => {
      if (!settled) reject(new Error(`the Parquet writer exited with ${code} before finishing ${path}`));
    });
  });
}

/**
 * The worker: built code runs parquet-worker.js directly; from sources (tsx,
 * as in tests) a worker does not inherit the TypeScript loader, so a small
 * bootstrap registers it first.
 */
function startWorker(job: WorkerJob): Worker {
  if (!import.meta.url.endsWith('.ts')) return new Worker(new URL('./parquet-worker.js', import.meta.url), { workerData: job });
  const entry = new URL('./parquet-worker.ts', import.meta.url).href;
  const bootstrap = `import('tsx/esm/api').then((m) => { m.register(); return import(${JSON.stringify(entry)}); });`;
  return new Worker(bootstrap, { eval: true, workerData: job });
}
