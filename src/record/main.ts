/**
 * `rezolus record`: follows frames of the selected hosts from the bus and
 * hands them to the writer worker (write.ts), which resamples them to one
 * row per host per interval and writes the Parquet file one row group at a
 * time; the file appears under its name when the recording ends (duration
 * reached, stop(), or the end of a replayed window).
 *
 * With `durable`, reads from the stream through a durable consumer and a
 * spool, and resumes after a kill (durable.ts).
 *
 * With `replay`, reads a past window from the JetStream stream instead, at
 * read speed (paced by the writer), and ends at the window's end. With
 * `url`, polls an agent's snapshot endpoint instead of NATS.
 */
import type { Logger } from 'pino';
import { connectBus } from '../bus/connect.js';
import type { NatsSecurity } from '../config/nats.js';
import { DescriptorCache } from '../bus/descriptors.js';
import { openDescriptorBucket } from '../bus/kv.js';
import { checkLookback, replayFrames } from '../bus/replay.js';
import { emptySkipStats, type SkipStats } from '../bus/subscribe.js';
import { subscribeFrames, type LiveSubscription } from '../bus/live.js';
import { VERSION } from '../version.js';
import type { SinkProgress } from '../parquet/sink.js';
import type { RowStats } from '../parquet/rows.js';
import { RecordingWriter } from '../parquet/write.js';
import { pollSnapshots, snapshotUrl } from './poll.js';
import { closeBus, streamHosts } from './nats.js';
import { runDurableRecord, type DurableSpec } from './durable.js';
import { DEFAULT_STREAM } from '../bus/subjects.js';

export interface RecordConfig {
  readonly natsUrl: string;
  /** credentials, TLS and inbox prefix ([nats], or REZOLUS_NATS_* for `rezolus record`); absent = none */
  readonly nats?: NatsSecurity | undefined;
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
  /** when nothing was recorded from the bus: the hosts the stream has (to point at a typo) */
  readonly hostsInStream?: readonly string[];
}

export interface RunningRecord {
  /** resolves when the file is written */
  readonly done: Promise<RecordSummary>;
  /** frames, rows and file bytes so far (for a progress line) */
  progress(): SinkProgress;
  /** ends the recording now; the file is still written */
  stop(): void;
  /** ends the recording without a file */
  abort(): Promise<void>;
}

export async function runRecord(config: RecordConfig, log: Logger): Promise<RunningRecord> {
  if (config.url !== undefined) return runPolling(config, config.url, log);
  if (config.durable !== undefined) return runDurableRecord({ ...config, durable: config.durable }, log);
  // a one-shot command: a server that does not answer is an error now, not a wait
  const nc = await connectBus({ url: config.natsUrl, name: 'rezolus-record', log: log.child({ component: 'nats' }), waitOnFirstConnect: false, security: config.nats });
  const kv = await openDescriptorBucket(nc).catch((error: unknown) => {
    void nc.close();
    throw error;
  });
  const cache = new DescriptorCache(kv, log.child({ component: 'descriptors' }));
  let stop!: () => void;
  const stopped = new Promise<void>((resolve) => (stop = resolve));
  const writer = newWriter(config, log, () => stop());
  const skipped = emptySkipStats();
  let sub: LiveSubscription | undefined;
  const replay = config.replay;
  if (replay === undefined) {
    sub = subscribeFrames(nc, config.hosts, cache, (f, data) => void writer.add(f, data), log, skipped);
    log.info({ hosts: config.hosts, subjects: sub.subjects, output: config.output }, 'recording');
  } else {
    try {
      await checkLookback(nc, replay.stream, replay.sinceNs, BigInt(Date.now()) * 1_000_000n);
    } catch (error) {
      await writer.abort();
      await nc.close();
      throw error;
    }
    log.info({ hosts: config.hosts, stream: replay.stream, output: config.output }, 'replaying');
    replayFrames(nc, { stream: replay.stream, hosts: config.hosts, sinceNs: replay.sinceNs, untilNs: replay.untilNs }, cache, (f, data) => writer.add(f, data), skipped).then(
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
    try {
      await sub?.close();
      const s = await writer.finish();
      const hostsInStream = s.written ? undefined : await streamHosts(nc, replay?.stream ?? DEFAULT_STREAM);
      return { ...summarize(s, skipped), hostsInStream };
    } finally {
      await closeBus(nc);
    }
  })();
  const abort = async (): Promise<void> => {
    await writer.abort();
    stop();
    await done.catch(() => undefined);
  };
  return { done, progress: () => writer.progress(), stop: () => stop(), abort };
}

function newWriter(config: RecordConfig, log: Logger, stop: () => void): RecordingWriter {
  const writer = new RecordingWriter({ output: config.output, intervalMs: config.intervalMs, version: VERSION });
  writer.onError((error) => {
    // the error itself ends the recording and is reported by its caller (one line on the command line)
    log.debug({ error: error.message }, 'the recording cannot be written; stopping');
    stop();
  });
  return writer;
}

function summarize(s: Awaited<ReturnType<RecordingWriter['finish']>>, skipped: SkipStats): RecordSummary {
  return { output: s.output, rows: s.rows, columns: s.columns, hosts: s.hosts, frames: s.frames, bytes: s.bytes, written: s.written, skipped, rowStats: s.rowStats };
}

/** The seeds' form: poll an agent's snapshot URL at the interval. */
function runPolling(config: RecordConfig, url: string, log: Logger): RunningRecord {
  let stopPoller = (): void => undefined;
  const writer = newWriter(config, log, () => stopPoller());
  const poller = pollSnapshots(url, config.intervalMs, (f, data) => void writer.add(f, data), log.child({ component: 'poll' }));
  stopPoller = () => poller.stop();
  log.info({ url: snapshotUrl(url), output: config.output }, 'recording');
  const timer = config.durationMs === undefined ? undefined : setTimeout(() => poller.stop(), config.durationMs);
  const done = (async (): Promise<RecordSummary> => {
    await poller.done;
    if (timer !== undefined) clearTimeout(timer);
    const s = summarize(await writer.finish(), emptySkipStats());
    const pollError = poller.lastError();
    return pollError === undefined ? s : { ...s, pollError };
  })();
  const abort = async (): Promise<void> => {
    await writer.abort();
    poller.stop();
    await done.catch(() => undefined);
  };
  return { done, progress: () => writer.progress(), stop: () => poller.stop(), abort };
}
