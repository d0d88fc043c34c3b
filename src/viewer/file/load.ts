/**
 * A recording (`rezolus record`'s Parquet file) as the viewer's tracks: one
 * Track per host, every row a sample of run 0 (a recording's rows are
 * already resampled; a counter that goes down is the query layer's to skip).
 *
 * Opening reads the footer (file metadata, the series index) and the
 * `timestamp` and `host` columns, so every track has its times and the
 * viewer knows every series before it reads a value. Series columns are
 * read on demand, a metric at a time, and stay loaded (the tracks are the
 * cache). Measured on a one-host hour at 1 s (1956 columns, 100 of them
 * histograms of 496 buckets a row, 3600 rows; test/bench/viewer-file.ts,
 * 2-vCPU AMD EPYC): opening ~0.3 s, the first chart (a histogram metric of
 * 10 series and a counter of 512) ~0.75 s after opening began, every column
 * ~1.8 s more and ~3× the memory: an eager load would miss the 1.5 s the
 * first chart may take.
 *
 *   const rec = await loadRecording(path, 'A');
 *   await rec.loadMetrics(['cpu_usage']); // or loadColumns(ids)
 *   rec.tracks.get(host)?.columns.get('cpu_usage/user/3');
 */
import type { FileMetaData } from 'hyparquet';
import type { SparseHistogram } from '../../metrics/histogram.js';
import { Track, type SeriesInfo } from '../track.js';
import { readColumns } from './columns.js';
import { ViewerFileError } from './errors.js';
import { readFooter } from './footer.js';
import { readLayout, type Layout, type RecordingMeta, type SeriesLayout } from './layout.js';
import { readChunks } from './read.js';
import { rowMap, type RowMap } from './rows.js';
import { openSource, type FileSource } from './source.js';

export type { RecordingMeta } from './layout.js';

export class Recording {
  /** first and last sample of any host, unix ms (NaN for a file without rows) */
  readonly start: number;
  readonly end: number;
  /** rows of the file (samples of all hosts) */
  readonly rows: number;
  /**
   * One track per host (sorted by name), with every sample's time and run
   * from the start; a series' column is in it once loadColumns() has read
   * it, and only where that host had a value for it.
   */
  readonly tracks: ReadonlyMap<string, Track>;
  /** Every series of the file, by id (its column name), in file order. */
  readonly series: ReadonlyMap<string, SeriesInfo>;

  readonly #source: FileSource;
  readonly #metadata: FileMetaData;
  readonly #layout: Layout;
  readonly #rows: RowMap;
  readonly #trackList: Track[];
  readonly #loaded = new Set<string>();
  readonly #pending = new Map<string, Promise<void>>();
  #closed = false;

  /** @internal use loadRecording() */
  constructor(
    readonly name: string,
    readonly path: string,
    readonly meta: RecordingMeta,
    parts: { source: FileSource; metadata: FileMetaData; layout: Layout; rows: RowMap },
  ) {
    this.#source = parts.source;
    this.#metadata = parts.metadata;
    this.#layout = parts.layout;
    this.#rows = parts.rows;
    this.series = new Map([...parts.layout.series].map(([id, s]) => [id, s.info]));
    const empty = new Map<string, never>();
    this.#trackList = parts.rows.times.map((times) => {
      const track = new Track();
      for (const t of times) track.append(t, 0, empty);
      return track;
    });
    this.tracks = new Map(parts.rows.hosts.map((h, i) => [h, this.#trackList[i] as Track]));
    this.rows = parts.rows.hostOf.length;
    let start = Number.POSITIVE_INFINITY;
    let end = Number.NEGATIVE_INFINITY;
    for (const track of this.#trackList) {
      start = Math.min(start, track.first ?? start);
      end = Math.max(end, track.last ?? end);
    }
    this.start = this.rows > 0 ? start : Number.NaN;
    this.end = this.rows > 0 ? end : Number.NaN;
  }

  /** The metrics of the file, in file order. */
  metrics(): string[] {
    return [...new Set([...this.series.values()].map((s) => s.metric))];
  }

  /** The series of one metric, in file order. */
  seriesOf(metric: string): SeriesInfo[] {
    return [...this.series.values()].filter((s) => s.metric === metric);
  }

  /** True once the column of `id` is in the tracks. */
  isLoaded(id: string): boolean {
    return this.#loaded.has(id);
  }

  /**
   * Reads the columns of `ids` into the tracks (those already loaded or
   * being loaded are not read again; ids the file does not have are
   * ignored). Resolves when every one of them is in; rejects with a
   * ViewerFileError when the file cannot be read.
   */
  async loadColumns(ids: Iterable<string>): Promise<void> {
    if (this.#closed) throw new Error(`the recording ${this.path} is closed`);
    const want = new Set<string>();
    const waits = new Set<Promise<void>>();
    for (const id of ids) {
      if (!this.#layout.series.has(id) || this.#loaded.has(id)) continue;
      const pending = this.#pending.get(id);
      if (pending !== undefined) waits.add(pending);
      else want.add(id);
    }
    if (want.size > 0) {
      const job = this.#read([...want]).finally(() => {
        for (const id of want) this.#pending.delete(id);
      });
      for (const id of want) this.#pending.set(id, job);
      waits.add(job);
    }
    await Promise.all(waits);
  }

  /** Reads the columns of every series of `metrics` (names the file does not have are ignored). */
  loadMetrics(metrics: Iterable<string>): Promise<void> {
    const wanted = new Set(metrics);
    return this.loadColumns([...this.series.values()].filter((s) => wanted.has(s.metric)).map((s) => s.id));
  }

  /** Reads every column (what an eager load would have done). */
  loadAll(): Promise<void> {
    return this.loadColumns(this.series.keys());
  }

  /**
   * The track of `host` once the columns of `ids` are in it (every column
   * when `ids` is not given); undefined for a host the file does not have.
   */
  async track(host: string, ids?: Iterable<string>): Promise<Track | undefined> {
    const track = this.tracks.get(host);
    if (track === undefined) return undefined;
    await (ids === undefined ? this.loadAll() : this.loadColumns(ids));
    return track;
  }

  /** Releases the file; the tracks stay as they are. */
  async close(): Promise<void> {
    if (this.#closed) return;
    this.#closed = true;
    await Promise.allSettled(this.#pending.values());
    await this.#source.close();
  }

  /** Reads columns, then puts each into the tracks of the hosts that had a value for it. */
  async #read(ids: readonly string[]): Promise<void> {
    const { hostOf, posOf } = this.#rows;
    const lengths = this.#trackList.map((t) => t.t.length);
    const layouts = ids.map((id) => this.#layout.series.get(id) as SeriesLayout);
    const filled = new Map<string, Filling>();
    for (const l of layouts) {
      const absent = l.info.kind === 'histogram' ? undefined : Number.NaN;
      filled.set(l.info.id, { values: lengths.map((n) => new Array(n).fill(absent)), seen: lengths.map(() => false) });
    }
    await readColumns(this.#source, this.#metadata, layouts, (id, rowStart, cells) => {
      const into = filled.get(id);
      if (into === undefined) return;
      const n = Math.min(cells.length, hostOf.length - rowStart);
      for (let i = 0; i < n; i++) {
        const v = cells[i];
        if (v === undefined || (typeof v === 'number' && Number.isNaN(v))) continue;
        const h = hostOf[rowStart + i] as number;
        (into.values[h] as unknown[])[posOf[rowStart + i] as number] = v;
        into.seen[h] = true;
      }
    });
    for (const { info } of layouts) {
      const f = filled.get(info.id) as Filling;
      this.#trackList.forEach((track, h) => {
        if (!f.seen[h]) return;
        const values = f.values[h] as never[];
        track.columns.set(info.id, info.kind === 'histogram' ? { info, h: values } : { info, v: values });
      });
      this.#loaded.add(info.id);
    }
  }
}

/** A column being read: per host, its values in track order, and whether it had any. */
interface Filling {
  readonly values: (number | SparseHistogram | undefined)[][];
  readonly seen: boolean[];
}

/**
 * Opens a recording: its footer, series index and sample times (no series
 * values yet: see Recording.loadColumns). `name` is the source's alias in
 * the viewer (`A`, `B`, or the `name=` given). Rejects with a
 * ViewerFileError naming the file when it is missing or unreadable, not
 * Parquet, incomplete (still being written), damaged, or not a recording.
 */
export async function loadRecording(path: string, name: string): Promise<Recording> {
  const source = await openSource(path);
  try {
    const metadata = await readFooter(source);
    const layout = readLayout(path, metadata);
    const rows = Number(metadata.num_rows);
    const timestamps = new Array<bigint>(rows);
    const hosts = new Array<string>(rows);
    await readChunks(source, metadata, ['timestamp', 'host'], (chunks) => {
      for (const c of chunks) {
        const into: unknown[] = c.column === 'timestamp' ? timestamps : hosts;
        for (let i = 0; i < c.cells.length && c.rowStart + i < rows; i++) into[c.rowStart + i] = c.cells[i];
      }
    });
    for (let r = 0; r < rows; r++) {
      if (typeof timestamps[r] !== 'bigint' || typeof hosts[r] !== 'string') {
        throw new ViewerFileError(path, 'corrupt', `${path} is damaged: row ${r} has no timestamp or no host`);
      }
    }
    const map = rowMap(timestamps, hosts);
    const meta: RecordingMeta = layout.meta.hosts.length > 0 ? layout.meta : { ...layout.meta, hosts: map.hosts };
    return new Recording(name, path, meta, { source, metadata, layout, rows: map });
  } catch (error) {
    await source.close().catch(() => undefined);
    throw error;
  }
}
