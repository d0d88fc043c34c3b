/**
 * What the viewer's HTTP side reads, whatever the source: the live bus, an
 * agent's HTTP, one recording or two compared. Each implementation fills
 * Tracks; the routes (app.ts) and the queries (query/) never know which.
 */
import { RezolusError } from '../errors.js';
import type { AlertsResult, HostSummary, SaveRequest, SaveResult, ViewInfo } from './api.js';
import type { SeriesInfo, Track } from './track.js';

export interface ViewerData {
  info(): ViewInfo;
  /** the fleet page's rows of one source (default: the first) */
  hosts(source: string | undefined): Promise<HostSummary[]>;
  /** every series of a host (a recording reads no values for this); throws NotFoundError for an unknown source or host */
  series(source: string | undefined, host: string): Promise<readonly SeriesInfo[]>;
  /** a host's samples, with at least the columns of `metrics` (default: all) read; throws NotFoundError as series() */
  tracks(source: string | undefined, host: string, metrics?: readonly string[]): Promise<readonly Track[]>;
  /** live only: the alert events with from ≤ at ≤ to of `host` (undefined: every host); a source without it has none */
  alerts?(host: string | undefined, from: number, to: number): AlertsResult;
  /** live only: writes the hosts and range through the hindsight path */
  save?(request: SaveRequest): Promise<SaveResult>;
  close(): Promise<void>;
}

/** An unknown source, host or metric: HTTP 404. */
export class NotFoundError extends RezolusError {
  override readonly name = 'NotFoundError';
  constructor(message: string) {
    super('NOT_FOUND', message);
  }
}

/** The series of tracks, each id once (a source whose tracks hold every column it has). */
export function seriesOfTracks(tracks: readonly Track[]): SeriesInfo[] {
  const seen = new Map<string, SeriesInfo>();
  for (const t of tracks) for (const c of t.columns.values()) if (!seen.has(c.info.id)) seen.set(c.info.id, c.info);
  return [...seen.values()];
}
