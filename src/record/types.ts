/** What `rezolus record` is given and what it gives back, whichever source it reads. */
import type { NatsSecurity } from '../config/nats.js';
import type { RowStats } from '../parquet/rows.js';
import type { SinkProgress } from '../parquet/sink.js';
import type { SkipStats } from '../sources/checks.js';
import type { BusLink } from '../sources/link.js';

/** `record --durable NAME`: the window is fixed at the first start; a restart must repeat the flags. */
export interface DurableSpec {
  readonly name: string;
  readonly stream: string;
  /** start of the window, unix ns; undefined = now, at the first start */
  readonly sinceNs: bigint | undefined;
  /** end of the window, unix ns; undefined = start + durationMs, or until stopped */
  readonly untilNs: bigint | undefined;
  readonly durationMs: number | undefined;
  /** how the window was given on the command line, compared on a restart */
  readonly window: string;
}

export interface RecordConfig {
  /** the bus; not read when recording from an agent's `url` (and then not resolved: no NATS at all) */
  readonly natsUrl: string | undefined;
  /** credentials, TLS and inbox prefix ([nats], or REZOLUS_NATS_* for `rezolus record`); absent = none */
  readonly nats?: NatsSecurity | undefined;
  /** a connection to use instead of opening one (a service's own: hindsight) */
  readonly bus?: BusLink | undefined;
  /** `*`, or a comma-separated list of host names and globs */
  readonly hosts: string;
  readonly intervalMs: number;
  /** stop after this long; undefined = until stop() */
  readonly durationMs: number | undefined;
  readonly output: string;
  /** poll an agent's snapshot endpoint instead of the bus (no NATS) */
  readonly url?: string | undefined;
  /** a past window from the stream instead of the live bus */
  readonly replay?: { readonly stream: string; readonly sinceNs: bigint; readonly untilNs: bigint } | undefined;
  /** from the stream through a durable consumer and a spool, resumable after a kill (durable.ts) */
  readonly durable?: DurableSpec | undefined;
}

/** The NATS URL of a recording from the bus (a caller that resolved none has a bug). */
export function busUrl(config: RecordConfig): string {
  if (config.natsUrl === undefined) throw new Error('a recording from the bus needs a NATS URL');
  return config.natsUrl;
}

export interface RecordSummary {
  readonly output: string;
  readonly rows: number;
  readonly columns: number;
  readonly hosts: readonly string[];
  readonly frames: number;
  /** size of the file */
  readonly bytes: number;
  /** false when nothing was recorded: no file was written (an existing one is untouched) */
  readonly written: boolean;
  readonly skipped: SkipStats;
  /** frames resampling left out (contested: a second agent claiming a host) or moved to a later row */
  readonly rowStats?: RowStats | undefined;
  /** recording from an agent's HTTP endpoint: why its last poll failed, when it did */
  readonly pollError?: string | undefined;
  /** frames of the selected hosts that ended outside a window with an end (frame time, src/sources/window-end.ts) */
  readonly outsideWindow?: { readonly before: number; readonly after: number } | undefined;
  /** when nothing was recorded from the bus: the hosts the stream has (to point at a typo) */
  readonly hostsInStream?: readonly string[] | undefined;
}

/** RecordSummary.outsideWindow of a window's counts: undefined when it left nothing out (or there is no window). */
export function outside(w: { readonly before: number; readonly after: number } | undefined): RecordSummary['outsideWindow'] {
  return w === undefined || w.before + w.after === 0 ? undefined : { before: w.before, after: w.after };
}

export interface RunningRecord {
  /** resolves when the file is written */
  readonly done: Promise<RecordSummary>;
  /** frames, rows and file bytes so far (for a progress line) */
  progress(): SinkProgress;
  /** the frames left out so far, by reason (the summary's `skipped` once done) */
  skipped(): SkipStats;
  /** ends the recording now; the file is still written */
  stop(): void;
  /** ends the recording without a file */
  abort(): Promise<void>;
}
