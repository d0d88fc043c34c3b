/**
 * Where recorded frames go: resampled into rows (rows.ts), gathered into
 * column groups (group.ts) and written one row group at a time (parquet.ts).
 * Runs inside the writer worker (write.ts); no I/O of its own besides the
 * Parquet file, so it is tested directly too.
 */
import type { Descriptor } from '../frame/types.js';
import { type RecordedFrame, GroupBuilder } from './group.js';
import { MIN_ROW_GROUP, ParquetStream } from './parquet.js';
import { RowBuilder, type Row, type RowStats } from './rows.js';

/**
 * Rows per row group: 6 per host seen, within [600, 6000]. Small groups
 * keep the worker's memory low (a group's frames die young: measured on 100
 * hosts with histograms, peak RSS 280–420 → 225 MiB against groups of
 * 6000); a large fleet still gets groups large enough that the footer's
 * per-chunk metadata stays small.
 */
export function rowGroupTarget(hosts: number): number {
  return Math.min(6000, Math.max(MIN_ROW_GROUP, 6 * hosts));
}

export interface SinkOptions {
  readonly output: string;
  readonly intervalMs: number;
  readonly version: string;
  /** rows per row group; default rowGroupTarget(hosts seen) */
  readonly rowGroupRows?: number;
}

export interface SinkProgress {
  readonly frames: number;
  readonly rows: number;
  /** bytes of the file so far */
  readonly bytes: number;
}

export interface SinkSummary extends SinkProgress {
  readonly output: string;
  /** false when there was no row to write: no file is made, and one already there is left as it was */
  readonly written: boolean;
  readonly columns: number;
  readonly hosts: readonly string[];
  /** frames resampling left out or moved, by reason */
  readonly rowStats: RowStats;
}

export class RecordingSink {
  readonly #options: SinkOptions;
  readonly #rows: RowBuilder<RecordedFrame>;
  readonly #group = new GroupBuilder();
  readonly #file: ParquetStream;
  readonly #descriptions = new Map<string, string>();
  readonly #hosts = new Set<string>();
  #frames = 0;
  #rowCount = 0;

  constructor(options: SinkOptions) {
    this.#options = options;
    this.#rows = new RowBuilder(BigInt(options.intervalMs) * 1_000_000n);
    this.#file = new ParquetStream(options.output, `rezolus-nats ${options.version}`);
  }

  describe(hash: string, d: Descriptor): void {
    this.#group.describe(hash, d);
    for (const [name, m] of Object.entries(d.metrics)) if (!this.#descriptions.has(name)) this.#descriptions.set(name, m.description);
  }

  /** A descriptor given to describe(), by hash. */
  descriptor(hash: string): Descriptor | undefined {
    return this.#group.descriptor(hash);
  }

  add(frame: RecordedFrame): void {
    this.#frames++;
    for (const row of this.#rows.add(frame)) this.#addRow(row);
  }

  progress(): SinkProgress {
    return { frames: this.#frames, rows: this.#rowCount, bytes: this.#file.bytes };
  }

  /**
   * Writes the rows held back and the footer; the file appears under its
   * name. With no row at all, nothing appears: an empty recording never
   * replaces a file.
   */
  async finish(): Promise<SinkSummary> {
    for (const row of this.#rows.flush()) this.#addRow(row);
    this.#file.write(this.#group.take());
    if (this.#rowCount === 0) {
      this.#file.abort();
      return { ...this.progress(), bytes: 0, output: this.#options.output, columns: 0, hosts: [], written: false, rowStats: { ...this.#rows.stats } };
    }
    const hosts = [...this.#hosts].sort();
    await this.#file.finish({
      source: 'rezolus-nats',
      version: this.#options.version,
      hosts,
      samplingIntervalMs: this.#options.intervalMs,
      descriptions: this.#describedColumns(),
    });
    return { ...this.progress(), output: this.#options.output, columns: this.#file.columns, hosts, written: true, rowStats: { ...this.#rows.stats } };
  }

  /** metric name -> description, for the metrics the file has columns of */
  #describedColumns(): Record<string, string> {
    const names = [...new Set([...this.#group.specs()].map((c) => c.metric))].sort();
    return Object.fromEntries(names.map((n) => [n, this.#descriptions.get(n) ?? '']));
  }

  abort(): void {
    this.#file.abort();
  }

  #addRow(row: Row<RecordedFrame>): void {
    this.#rowCount++;
    this.#hosts.add(row.host);
    this.#group.add(row);
    if (this.#group.size >= (this.#options.rowGroupRows ?? rowGroupTarget(this.#rows.hosts))) this.#file.write(this.#group.take());
  }
}
