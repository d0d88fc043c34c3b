/**
 * `rezolus view A.parquet [B.parquet]`: one recording, or two compared on
 * shared time axes. Each file is a source named by its alias (`name=path`,
 * else A and B, or the file name when alone). A recording's columns are
 * read when a chart first asks for them (file/load.ts); the fleet page's
 * few metrics at open.
 */
import type { Logger } from 'pino';
import { VERSION } from '../version.js';
import type { HostSummary, ViewInfo } from './api.js';
import { NotFoundError, type ViewerData } from './data.js';
import { loadRecording, type Recording } from './file/load.js';
import { SUMMARY_METRICS, summarize } from './summary.js';
import type { SeriesInfo, Track } from './track.js';

export class FileData implements ViewerData {
  private constructor(private readonly recordings: readonly Recording[]) {}

  static async open(files: readonly { readonly name: string; readonly path: string }[], log: Logger): Promise<FileData> {
    const recordings: Recording[] = [];
    try {
      for (const f of files) {
        const began = Date.now();
        const r = await loadRecording(f.path, f.name);
        recordings.push(r);
        await r.loadMetrics(SUMMARY_METRICS);
        log.info({ file: f.path, name: f.name, hosts: r.meta.hosts, rows: r.rows, series: r.series.size, ms: Date.now() - began }, 'recording opened');
      }
    } catch (error) {
      await Promise.allSettled(recordings.map((r) => r.close()));
      throw error;
    }
    return new FileData(recordings);
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
    const r = source === undefined ? this.recordings[0] : this.recordings.find((x) => x.name === source);
    if (r === undefined) throw new NotFoundError(`no source "${String(source)}" (sources: ${this.recordings.map((x) => x.name).join(', ')})`);
    return r;
  }

  #track(r: Recording, host: string): Track {
    const track = r.tracks.get(host);
    if (track === undefined) throw new NotFoundError(`no host "${host}" in ${r.path} (hosts: ${[...r.tracks.keys()].join(', ')})`);
    return track;
  }

  hosts(source: string | undefined): HostSummary[] {
    const r = this.#recording(source);
    return [...r.tracks.entries()].map(([host, track]) => summarize(host, track.last ?? r.end, [track])).sort((a, b) => (a.host < b.host ? -1 : 1));
  }

  async series(source: string | undefined, host: string): Promise<readonly SeriesInfo[]> {
    const r = this.#recording(source);
    this.#track(r, host);
    return [...r.series.values()];
  }

  async tracks(source: string | undefined, host: string, metrics?: readonly string[]): Promise<readonly Track[]> {
    const r = this.#recording(source);
    const track = this.#track(r, host);
    await (metrics === undefined ? r.loadAll() : r.loadMetrics(metrics));
    return [track];
  }

  async close(): Promise<void> {
    await Promise.allSettled(this.recordings.map((r) => r.close()));
  }
}
