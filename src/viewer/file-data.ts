/**
 * `rezolus view A.parquet [B.parquet]`: one recording, or two compared on
 * shared time axes. Each file is a source named by its alias (`name=path`,
 * else A and B, or the file name when alone). A recording's columns are
 * read when a chart first asks for them (file/load.ts); the fleet page's
 * few metrics at open.
 */
import { statSync } from 'node:fs';
import type { Logger } from 'pino';
import { VERSION } from '../version.js';
import type { HostSummary, ViewInfo } from './api.js';
import { NotFoundError, seriesOfTracks, type ViewerData } from './data.js';
import { loadRecording, type Recording } from './file/load.js';
import { OVERVIEW_METRICS, SECTIONS, sectionOf } from './query/sections.js';
import { SUMMARY_METRICS, summarize } from './summary.js';
import type { SeriesInfo, Track } from './track.js';

/** Recordings up to this size are read whole in the background (about 10× in memory). */
const PREFETCH_BYTES = 64 * 1024 * 1024;
/** Reading ahead starts this long after the page's last request. */
const IDLE_MS = 400;

export class FileData implements ViewerData {
  #closed = false;
  /** read ahead waits until then: a request came just now */
  #busyUntil = 0;

  private constructor(private readonly recordings: readonly Recording[]) {}

  static async open(files: readonly { readonly name: string; readonly path: string }[], log: Logger): Promise<FileData> {
    const recordings: Recording[] = [];
    try {
      for (const f of files) {
        const began = Date.now();
        const r = await loadRecording(f.path, f.name);
        recordings.push(r);
        log.info({ file: f.path, source: f.name, hosts: r.meta.hosts, rows: r.rows, series: r.series.size, ms: Date.now() - began }, 'recording opened');
      }
    } catch (error) {
      await Promise.allSettled(recordings.map((r) => r.close()));
      throw error;
    }
    const data = new FileData(recordings);
    data.#prefetch(log);
    return data;
  }

  /**
   * Reads every column in the background, a metric at a time in page order
   * (Overview, then each section), yielding between metrics so a chart's
   * request waits for one metric's read at most; a section opened later
   * then draws from memory. Files above PREFETCH_BYTES are left to on
   * demand reads (their columns could outgrow memory).
   */
  #prefetch(log: Logger): void {
    const run = async (): Promise<void> => {
      for (const r of this.recordings) {
        if (statSync(r.path).size > PREFETCH_BYTES) continue;
        const all = r.metrics();
        const order = [...OVERVIEW_METRICS.filter((m) => all.includes(m)), ...SECTIONS.flatMap((s) => all.filter((m) => sectionOf(m) === s))];
        for (const m of new Set([...order, ...all])) {
          // a page's requests go first: read ahead only while none came for a moment
          do await new Promise((resolve) => setTimeout(resolve, 50));
          while (Date.now() < this.#busyUntil && !this.#closed);
          if (this.#closed) return;
          await r.loadMetrics([m]);
        }
      }
    };
    const began = Date.now();
    run().then(
      () => log.debug({ ms: Date.now() - began }, 'every column read'),
      (error: unknown) => log.warn({ err: error }, 'reading the recording ahead failed; columns are read when a chart asks'),
    );
  }

  info(): ViewInfo {
    return {
      mode: this.recordings.length > 1 ? 'compare' : 'file',
      sources: this.recordings.map((r) => ({ name: r.name, location: r.path, start: r.start, end: r.end, hosts: [...r.tracks.keys()].sort() })),
      canSave: false,
      version: VERSION,
    };
  }

  #recording(source: string | undefined): Recording {
    this.#busyUntil = Date.now() + IDLE_MS;
    const r = source === undefined ? this.recordings[0] : this.recordings.find((x) => x.name === source);
    if (r === undefined) throw new NotFoundError(`no source "${String(source)}" (sources: ${this.recordings.map((x) => x.name).join(', ')})`);
    return r;
  }

  #checkHost(r: Recording, host: string): void {
    if (!r.tracks.has(host)) throw new NotFoundError(`no host "${host}" in ${r.path} (hosts: ${[...r.tracks.keys()].join(', ')})`);
  }

  async hosts(source: string | undefined): Promise<HostSummary[]> {
    const r = this.#recording(source);
    await r.loadMetrics(SUMMARY_METRICS);
    return [...r.tracks.entries()].map(([host, rows]) => summarize(host, rows.last ?? r.end, r.tracksOf(host))).sort((a, b) => (a.host < b.host ? -1 : 1));
  }

  async series(source: string | undefined, host: string): Promise<readonly SeriesInfo[]> {
    const r = this.#recording(source);
    this.#checkHost(r, host);
    if (r.tracks.size === 1) return [...r.series.values()];
    // a fleet file: which series a host has shows only in its values (a column of another host is null for it)
    await r.loadAll();
    return seriesOfTracks(r.tracksOf(host));
  }

  async tracks(source: string | undefined, host: string, metrics?: readonly string[]): Promise<readonly Track[]> {
    const r = this.#recording(source);
    this.#checkHost(r, host);
    await (metrics === undefined ? r.loadAll() : r.loadMetrics(metrics));
    return r.tracksOf(host);
  }

  async close(): Promise<void> {
    this.#closed = true;
    await Promise.allSettled(this.recordings.map((r) => r.close()));
  }
}
