/**
 * A recording (`rezolus record`'s Parquet file) as the viewer's tracks: per
 * host, one Track per sampler that has frame end times in the file, and one
 * of the rows themselves for series of no such sampler (files made before
 * frame end columns). A sampler's track holds only the rows where its frame
 * changed, at that frame's end time: a sampler slower than the rows (1 s
 * cgroup_resources in a 100 ms recording) repeats its frame over several
 * rows, and a rate per row would read 0, …, 0 then ten times the rate. Every
 * sample is of run 0 (a recording's rows are already resampled; a counter
 * that goes down is the query layer's to skip).
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
   * The rows' track of each host (sorted by name), with every row's time
   * from the start; a series of no sampler's frame ends is in it once
   * loadColumns() has read it, and only where that host had a value for it.
   * A host's every track: tracksOf().
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
  /** per sampler with frame ends, once one of its columns was asked for: where its frames changed */
  readonly #samplers = new Map<string, Promise<SamplerRows>>();
  /** the same once read, in the order they were */
  readonly #samplerPlaced = new Map<string, SamplerRows>();
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

  /**
   * Every track of `host` that holds columns or may: the rows' track, then
   * one per sampler any of whose columns was loaded; [] for a host the file
   * does not have.
   */
  tracksOf(host: string): Track[] {
    const h = this.#rows.hosts.indexOf(host);
    if (h < 0) return [];
    const out = [this.#trackList[h] as Track];
    for (const rows of this.#samplerPlaced.values()) {
      const track = rows.tracks[h];
      if (track !== undefined) out.push(track);
    }
    return out;
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
   * The tracks of `host` (tracksOf) once the columns of `ids` are in them
   * (every column when `ids` is not given); undefined for a host the file
   * does not have.
   */
  async hostTracks(host: string, ids?: Iterable<string>): Promise<Track[] | undefined> {
    if (!this.tracks.has(host)) return undefined;
    await (ids === undefined ? this.loadAll() : this.loadColumns(ids));
    return this.tracksOf(host);
  }

  /** Releases the file; the tracks stay as they are. */
  async close(): Promise<void> {
    if (this.#closed) return;
    this.#closed = true;
    await Promise.allSettled(this.#pending.values());
    await this.#source.close();
  }

  /**
   * Reads columns, then puts each into the tracks of the hosts that had a
   * value for it: a sampler's series into the host's track of that sampler,
   * at the rows where its frame changed; the rest, and a host with a value
   * in a row that has no frame end of the column's sampler (a series another
   * sampler of that host filled), into the host's rows track.
   */
  async #read(ids: readonly string[]): Promise<void> {
    const { hostOf, posOf } = this.#rows;
    const layouts = ids.map((id) => this.#layout.series.get(id) as SeriesLayout);
    const samplers = new Map<string, SamplerRows>();
    for (const l of layouts) if (l.sampler !== undefined && !samplers.has(l.sampler)) samplers.set(l.sampler, await this.#samplerRowsOf(l.sampler));
    const lengths = this.#trackList.map((t) => t.t.length);
    const filled = new Map<string, Filling>();
    for (const l of layouts) {
      const absent = l.info.kind === 'histogram' ? undefined : Number.NaN;
      filled.set(l.info.id, { absent, values: lengths.map((n) => new Array(n).fill(absent)), seen: lengths.map(() => false) });
    }
    await readColumns(this.#source, this.#metadata, layouts, (id, rowStart, cells) => {
      const into = filled.get(id);
      if (into === undefined) return;
      const n = Math.min(cells.length, hostOf.length - rowStart);
      for (let i = 0; i < n; i++) {
        const v = cells[i];
        if (!present(v)) continue;
        const h = hostOf[rowStart + i] as number;
        (into.values[h] as unknown[])[posOf[rowStart + i] as number] = v;
        into.seen[h] = true;
      }
    });
    for (const l of layouts) {
      const f = filled.get(l.info.id) as Filling;
      const rows = l.sampler === undefined ? undefined : samplers.get(l.sampler);
      f.values.forEach((values, h) => {
        if (!f.seen[h]) return;
        let track = this.#trackList[h] as Track;
        let column = values;
        const slots = rows?.slotByPos[h];
        const own = rows?.tracks[h];
        if (slots !== undefined && own !== undefined && !values.some((v, p) => slots[p] === NO_FRAME && present(v))) {
          // the sampler's frames only: the rows that repeat one are left out
          track = own;
          column = new Array(own.t.length).fill(f.absent);
          for (let p = 0; p < slots.length; p++) if ((slots[p] as number) >= 0) column[slots[p] as number] = values[p];
        }
        track.columns.set(l.info.id, l.info.kind === 'histogram' ? { info: l.info, h: column as never[] } : { info: l.info, v: column as never[] });
      });
      this.#loaded.add(l.info.id);
    }
  }

  /** Where `sampler`'s frames changed, read from its frame end column once. */
  #samplerRowsOf(sampler: string): Promise<SamplerRows> {
    let job = this.#samplers.get(sampler);
    if (job === undefined) {
      job = this.#placeSampler(sampler);
      this.#samplers.set(sampler, job);
      job.catch(() => this.#samplers.delete(sampler));
    }
    return job;
  }

  async #placeSampler(sampler: string): Promise<SamplerRows> {
    const column = this.#layout.frameEnds.get(sampler) as string;
    const ends = new Float64Array(this.rows).fill(Number.NaN);
    const layout: SeriesLayout = { info: { id: column, metric: 'timestamp', kind: 'counter', unit: 'nanoseconds', labels: {} }, groupingPower: 0, maxValuePower: 0 };
    await readColumns(this.#source, this.#metadata, [layout], (_id, rowStart, cells) => {
      const n = Math.min(cells.length, this.rows - rowStart);
      for (let i = 0; i < n; i++) ends[rowStart + i] = cells[i] as number;
    });
    const placed = placeFrames(this.#rows, ends);
    this.#samplerPlaced.set(sampler, placed);
    return placed;
  }
}

function present(v: number | SparseHistogram | undefined): boolean {
  return v !== undefined && !(typeof v === 'number' && Number.isNaN(v));
}

/** A row's slot when the row has no frame end of the sampler. */
export const NO_FRAME = -2;
/** A row's slot when it repeats the sampler's previous frame (or goes back). */
export const REPEATED = -1;

/**
 * A sampler's rows: per host, per position in its rows track, the index of
 * its sample in the host's track of the sampler (or NO_FRAME, REPEATED);
 * per host, that track.
 */
export interface SamplerRows {
  readonly slotByPos: readonly Int32Array[];
  readonly tracks: readonly (Track | undefined)[];
}

/**
 * Places a sampler's frame ends (`ends`, unix ns per file row, NaN where the
 * row has none): per host, in time order, a row whose frame ended after the
 * last one placed starts a sample at that end time; a row that repeats it
 * (or goes back) is REPEATED. A host without any gets no track.
 */
export function placeFrames(rows: RowMap, ends: Float64Array): SamplerRows {
  const { hostOf, posOf } = rows;
  const byPos = rows.times.map((t) => new Float64Array(t.length).fill(Number.NaN));
  for (let r = 0; r < hostOf.length; r++) (byPos[hostOf[r] as number] as Float64Array)[posOf[r] as number] = ends[r] as number;
  const empty = new Map<string, never>();
  const slotByPos: Int32Array[] = [];
  const tracks = byPos.map((e): Track | undefined => {
    const slots = new Int32Array(e.length).fill(NO_FRAME);
    slotByPos.push(slots);
    let track: Track | undefined;
    let last = Number.NEGATIVE_INFINITY;
    for (let p = 0; p < e.length; p++) {
      const ns = e[p] as number;
      if (Number.isNaN(ns)) continue;
      if (!(ns > last)) {
        slots[p] = REPEATED;
        continue;
      }
      last = ns;
      track ??= new Track();
      slots[p] = track.t.length;
      track.append(ns / 1e6, 0, empty);
    }
    return track;
  });
  return { slotByPos, tracks };
}

/** A column being read: per host, its values in track order, and whether it had any. */
interface Filling {
  /** NaN for counters and gauges, undefined for histograms */
  readonly absent: number | undefined;
  /** per host, in its rows track's order */
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
