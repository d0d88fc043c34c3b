/**
 * The recorder's writer: a worker thread that resamples frames into rows and
 * writes the Parquet file one row group at a time (sink.ts), so that
 * encoding never blocks the subscription, the HTTP service or a replay, and
 * memory holds one row group, not the recording.
 *
 * Frames go to the worker in batches of their message bytes, in one
 * transferred buffer (each descriptor once); the worker decodes them again,
 * which costs a tenth of a structured clone of the decoded frames. It acks
 * each batch with its progress. A producer that can wait (a replay) gets a
 * promise from add() while too many batches are unacknowledged; a live
 * subscription cannot wait and does not.
 */
import { Worker } from 'node:worker_threads';
import type { Descriptor, Frame } from '../frame/types.js';
import { writeError } from '../files/io-error.js';
import type { SinkOptions, SinkProgress, SinkSummary } from './sink.js';

/** Messages to the worker. */
export type ToWorker =
  | {
      readonly t: 'frames';
      readonly descriptors: readonly (readonly [string, Descriptor])[];
      /** each frame's message bytes, after its length (u32 little-endian) */
      readonly packed: ArrayBuffer;
    }
  | { readonly t: 'finish' }
  | { readonly t: 'abort' };

/** Messages from the worker. */
export type FromWorker =
  | { readonly t: 'ack'; readonly progress: SinkProgress }
  | { readonly t: 'done'; readonly summary: SinkSummary }
  | { readonly t: 'error'; readonly message: string; readonly code?: string | undefined };

const BATCH_FRAMES = 2000;
const MAX_IN_FLIGHT = 8;
const POST_EVERY_MS = 250;
/** a small young generation: measured on a one-host hour, peak RSS 156 → 135 MiB at no CPU cost */
const WORKER_LIMITS = { maxYoungGenerationSizeMb: 8 };

export class RecordingWriter {
  readonly #output: string;
  readonly #worker: Worker;
  readonly #sent = new Set<string>();
  readonly #timer: NodeJS.Timeout;
  #descriptors: [string, Descriptor][] = [];
  #frames: Uint8Array[] = [];
  #bytes = 0;
  #inFlight = 0;
  #waiters: (() => void)[] = [];
  #progress: SinkProgress = { frames: 0, rows: 0, bytes: 0 };
  #error: Error | undefined;
  #onError: (error: Error) => void = () => undefined;
  #finished: { resolve: (s: SinkSummary) => void; reject: (e: Error) => void } | undefined;
  /** done, failed or aborted: the worker's exit is expected */
  #over = false;
  #exited = false;

  constructor(options: SinkOptions) {
    this.#output = options.output;
    this.#worker = startWorker(options);
    this.#worker.on('message', (m: FromWorker) => this.#onMessage(m));
    this.#worker.on('error', (error) => this.#fail(error));
    this.#worker.on('exit', (code) => {
      this.#exited = true;
      clearInterval(this.#timer);
      if (!this.#over) this.#fail(new Error(`the Parquet writer exited with ${code} before finishing ${this.#output}`));
    });
    this.#timer = setInterval(() => this.#post(), POST_EVERY_MS);
    this.#timer.unref();
  }

  /** Called once if writing fails (the recording should end). */
  onError(callback: (error: Error) => void): void {
    this.#onError = callback;
  }

  /**
   * Takes a frame and the message bytes it was decoded from (which the
   * worker decodes again); returns a promise to wait for when the worker is
   * behind.
   */
  add(f: Frame, data: Uint8Array): Promise<void> | undefined {
    if (this.#error !== undefined || this.#finished !== undefined || this.#over) return undefined;
    if (!this.#sent.has(f.descriptorHash)) {
      this.#sent.add(f.descriptorHash);
      this.#descriptors.push([f.descriptorHash, f.descriptor]);
    }
    this.#frames.push(data);
    this.#bytes += data.byteLength;
    if (this.#frames.length >= BATCH_FRAMES) this.#post();
    return this.#inFlight >= MAX_IN_FLIGHT ? new Promise((resolve) => this.#waiters.push(resolve)) : undefined;
  }

  /** Frames, rows and bytes the worker has handled so far. */
  progress(): SinkProgress {
    return this.#progress;
  }

  /** Sends what is left, writes the file; rejects if writing failed. */
  finish(): Promise<SinkSummary> {
    if (this.#error !== undefined) return Promise.reject(this.#error);
    if (this.#over) return Promise.reject(new Error(`the recording of ${this.#output} was aborted`));
    this.#post();
    clearInterval(this.#timer);
    return new Promise((resolve, reject) => {
      this.#finished = { resolve, reject };
      this.#worker.postMessage({ t: 'finish' } satisfies ToWorker);
    });
  }

  /** Stops without a file (the temporary one is removed). */
  async abort(): Promise<void> {
    clearInterval(this.#timer);
    this.#over = true;
    // a source waiting for the worker to catch up must not wait for ever
    for (const wake of this.#waiters.splice(0)) wake();
    if (this.#exited) return;
    this.#worker.postMessage({ t: 'abort' } satisfies ToWorker);
    await new Promise((resolve) => this.#worker.once('exit', resolve));
  }

  #post(): void {
    if (this.#frames.length === 0 || this.#error !== undefined) return;
    const packed = new ArrayBuffer(this.#bytes + 4 * this.#frames.length);
    const bytes = new Uint8Array(packed);
    const view = new DataView(packed);
    let at = 0;
    for (const data of this.#frames) {
      view.setUint32(at, data.byteLength, true);
      bytes.set(data, at + 4);
      at += 4 + data.byteLength;
    }
    const message: ToWorker = { t: 'frames', descriptors: this.#descriptors, packed };
    this.#descriptors = [];
    this.#frames = [];
    this.#bytes = 0;
    this.#inFlight++;
    this.#worker.postMessage(message, [packed]);
  }

  #onMessage(m: FromWorker): void {
    if (m.t === 'ack') {
      this.#progress = m.progress;
      this.#inFlight--;
      if (this.#inFlight < MAX_IN_FLIGHT) for (const wake of this.#waiters.splice(0)) wake();
    } else if (m.t === 'done') {
      this.#over = true;
      this.#progress = m.summary;
      const f = this.#finished;
      this.#finished = undefined;
      f?.resolve(m.summary);
    } else {
      this.#fail(writeError(this.#output, Object.assign(new Error(m.message), { code: m.code })));
    }
  }

  #fail(error: Error): void {
    if (this.#error !== undefined || this.#over) return;
    this.#over = true;
    this.#error = error;
    clearInterval(this.#timer);
    for (const wake of this.#waiters.splice(0)) wake();
    const f = this.#finished;
    this.#finished = undefined;
    if (f !== undefined) f.reject(error);
    else this.#onError(error);
  }
}

/**
 * The worker: built code runs recording-worker.js directly; from sources
 * (tsx, as in tests) a worker does not inherit the TypeScript loader, so a
 * small bootstrap registers it first.
 */
function startWorker(options: SinkOptions): Worker {
  if (!import.meta.url.endsWith('.ts')) return new Worker(new URL('./recording-worker.js', import.meta.url), { workerData: options, resourceLimits: WORKER_LIMITS });
  const entry = new URL('./recording-worker.ts', import.meta.url).href;
  // resolved from here: an eval worker resolves bare names from the current directory
  const api = import.meta.resolve('tsx/esm/api');
  const bootstrap = `import(${JSON.stringify(api)}).then((m) => { m.register(); return import(${JSON.stringify(entry)}); });`;
  return new Worker(bootstrap, { eval: true, workerData: options, resourceLimits: WORKER_LIMITS });
}
