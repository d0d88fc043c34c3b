/**
 * `rezolus record`: follows frames of the selected hosts from the bus, resamples them to one row per host per interval and writes a
 * Parquet file when the recording ends (duration reached or stop()).
 *
 * With `replay`, reads a past window from the JetStream stream instead, at
 * read speed, and ends at the window's end.
 *
 * The file is written in a worker thread (write.ts). Not done yet (issue 4):
 * polling an agent URL; streaming row groups while recording (rows are held
 * in memory until the end).
 */
import type { Logger } from 'pino';
import { connectBus } from '../bus/connect.js';
import { DescriptorCache } from '../bus/descriptors.js';
import { openDescriptorBucket } from '../bus/kv.js';
import { checkLookback, replayFrames } from '../bus/replay.js';
import { emptySkipStats, subscribeFrames, type LiveSubscription, type SkipStats } from '../bus/subscribe.js';
import type { Frame } from '../frame/types.js';
import { VERSION } from '../version.js';
import { writeParquetInWorker } from './write.js';
import { pollSnapshots, snapshotUrl } from './poll.js';
import { RowBuilder, toRecordRows, type Row } from './rows.js';

export interface RecordConfig {
  readonly natsUrl: string;
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
}

export interface RecordSummary {
  readonly output: string;
  readonly rows: number;
  readonly columns: number;
  readonly hosts: readonly string[];
  readonly frames: number;
  readonly skipped: SkipStats;
}

export interface RunningRecord {
  /** resolves when the file is written */
  readonly done: Promise<RecordSummary>;
  /** rows so far (for a progress line) */
  rows(): number;
  /** ends the recording now; the file is still written */
  stop(): void;
}

export async function runRecord(config: RecordConfig, log: Logger): Promise<RunningRecord> {
  if (config.url !== undefined) return runPolling(config, config.url, log);
  const nc = await connectBus({ url: config.natsUrl, name: 'rezolus-record', log: log.child({ component: 'nats' }) });
  const recording = new Recording(config);
  const skipped = emptySkipStats();
  const onFrame = (f: Frame): void => recording.add(f);
  const kv = await openDescriptorBucket(nc).catch((error: unknown) => {
    void nc.close();
    throw error;
  });
  const cache = new DescriptorCache(kv, log.child({ component: 'descriptors' }));
  let stop!: () => void;
  const stopped = new Promise<void>((resolve) => (stop = resolve));
  let sub: LiveSubscription | undefined;
  const replay = config.replay;
  if (replay === undefined) {
    sub = subscribeFrames(nc, config.hosts, cache, onFrame, log, skipped);
    log.info({ hosts: config.hosts, subjects: sub.subjects, output: config.output }, 'recording');
  } else {
    try {
      await checkLookback(nc, replay.stream, replay.sinceNs, BigInt(Date.now()) * 1_000_000n);
    } catch (error) {
      await nc.close();
      throw error;
    }
    log.info({ hosts: config.hosts, stream: replay.stream, output: config.output }, 'replaying');
    replayFrames(nc, { stream: replay.stream, hosts: config.hosts, sinceNs: replay.sinceNs, untilNs: replay.untilNs }, cache, onFrame, skipped).then(
      () => stop(),
      (error: unknown) => {
        log.error({ error: String(error) }, 'replay failed; writing what was read');
        stop();
      },
    );
  }

  const timer = config.durationMs === undefined ? undefined : setTimeout(stop, config.durationMs);
  const done = (async (): Promise<RecordSummary> => {
    await stopped;
    if (timer !== undefined) clearTimeout(timer);
    await sub?.close();
    await nc.drain().catch(() => nc.close());
    return recording.finish(skipped);
  })();
  return { done, rows: () => recording.rows.length, stop: () => stop() };
}

/** Frames resampled into rows, then the file: the part live, replay and polling share. */
class Recording {
  readonly rows: Row[] = [];
  readonly #config: RecordConfig;
  readonly #builder: RowBuilder;
  readonly #descriptions = new Map<string, string>();
  #frames = 0;

  constructor(config: RecordConfig) {
    this.#config = config;
    this.#builder = new RowBuilder(BigInt(config.intervalMs) * 1_000_000n);
  }

  add(f: Frame): void {
    this.#frames++;
    for (const [name, m] of Object.entries(f.descriptor.metrics)) this.#descriptions.set(name, m.description);
    this.rows.push(...this.#builder.add(f));
  }

  /** Flushes the last rows and writes the file. */
  async finish(skipped: SkipStats): Promise<RecordSummary> {
    const { rows } = this;
    rows.push(...this.#builder.flush());
    const columns = this.#builder.columns();
    const hosts = [...new Set(rows.map((r) => r.host))].sort();
    await writeParquetInWorker(this.#config.output, columns, toRecordRows(rows, columns), {
      source: 'rezolus-nats',
      version: VERSION,
      hosts,
      samplingIntervalMs: this.#config.intervalMs,
      descriptions: Object.fromEntries([...this.#descriptions].sort(([a], [b]) => (a < b ? -1 : 1))),
    });
    return { output: this.#config.output, rows: rows.length, columns: columns.length, hosts, frames: this.#frames, skipped };
  }
}

/** The seeds' form: poll an agent's snapshot URL at the interval. */
function runPolling(config: RecordConfig, url: string, log: Logger): RunningRecord {
  const recording = new Recording(config);
  const poller = pollSnapshots(url, config.intervalMs, (f) => recording.add(f), log.child({ component: 'poll' }));
  log.info({ url: snapshotUrl(url), output: config.output }, 'recording');
  const timer = config.durationMs === undefined ? undefined : setTimeout(() => poller.stop(), config.durationMs);
  const done = (async (): Promise<RecordSummary> => {
    await poller.done;
    if (timer !== undefined) clearTimeout(timer);
    return recording.finish(emptySkipStats());
  })();
  return { done, rows: () => recording.rows.length, stop: () => poller.stop() };
}
