/**
 * `rezolus record`: frames of the selected hosts from a FrameSource
 * (src/sources/) to the Parquet writer (src/parquet/), which resamples them
 * to one row per host per interval and writes the file one row group at a
 * time; the file appears under its name when the recording ends (duration
 * reached, stop(), or the end of the source: a replayed window).
 *
 * The source: live (core subscriptions), replay (`replay`: a past window of
 * the stream, read at the writer's pace), agent poll (`url`: an agent's
 * snapshot endpoint, no NATS), or durable (`durable`: a durable consumer and
 * a spool, resumable after a kill; durable.ts).
 */
import type { Logger } from 'pino';
import { DEFAULT_STREAM } from '../bus/subjects.js';
import { BusLink } from '../sources/link.js';
import { LiveSource } from '../sources/live.js';
import { PollSource } from '../sources/poll.js';
import { ReplaySource } from '../sources/replay.js';
import type { FrameSource } from '../sources/source.js';
import { WindowEnd } from '../sources/window-end.js';
import { runDurableRecord } from './durable.js';
import { newWriter } from './writer.js';
import { busUrl, outside, type RecordConfig, type RecordSummary, type RunningRecord } from './types.js';

export type { DurableSpec, RecordConfig, RecordSummary, RunningRecord } from './types.js';

export async function runRecord(config: RecordConfig, log: Logger): Promise<RunningRecord> {
  if (config.url !== undefined) {
    // the rows stamped within the duration from the agent's first answer (or until stop()): D / I rows of an agent that samples every I
    const source = new PollSource({ url: config.url, intervalMs: config.intervalMs, window: { durationMs: config.durationMs } }, log.child({ component: 'poll' }));
    log.info({ url: source.target, output: config.output }, 'recording');
    return recordFrom(source, undefined, config, log, () => source.lastError());
  }
  if (config.durable !== undefined) return runDurableRecord({ ...config, durable: config.durable }, log);
  // a one-shot command: a server that does not answer is an error now, not a wait
  const link = config.bus ?? (await BusLink.open({ url: busUrl(config), security: config.nats, name: 'rezolus-record', waitOnFirstConnect: false }, log));
  const owned = config.bus === undefined;
  const replay = config.replay;
  const source: FrameSource = replay === undefined
    ? new LiveSource({ bus: link, hosts: config.hosts }, log)
    : new ReplaySource({ bus: link, stream: replay.stream, hosts: config.hosts, sinceNs: replay.sinceNs, untilNs: replay.untilNs, endInFrameTime: { intervalNs: BigInt(config.intervalMs) * 1_000_000n } }, log);
  if (replay === undefined) log.info({ hosts: config.hosts, subjects: (source as LiveSource).subjects, output: config.output }, 'recording');
  else log.info({ hosts: config.hosts, stream: replay.stream, output: config.output }, 'replaying');
  return recordFrom(source, { link, owned, stream: replay?.stream ?? DEFAULT_STREAM }, config, log, () => undefined);
}

/** How often a live recording past its end checks whether its window is complete. */
const END_CHECK_MS = 100;

function nowNs(): bigint {
  return BigInt(Date.now()) * 1_000_000n;
}

/** The bus a recording reads from: to name the hosts its stream holds when nothing was recorded, and to close when it opened it. */
interface RecordBus {
  readonly link: BusLink;
  readonly owned: boolean;
  readonly stream: string;
}

/** Runs a source into a writer until the duration, stop(), or the end of the source. */
async function recordFrom(source: FrameSource, bus: RecordBus | undefined, config: RecordConfig, log: Logger, pollError: () => string | undefined): Promise<RunningRecord> {
  const writer = newWriter(config, log, () => source.stop());
  // a live recording for a duration is a window in frame time: its last frames may come after the end (window-end.ts)
  const startNs = nowNs();
  const end = source.kind === 'live' && config.durationMs !== undefined ? new WindowEnd(startNs + BigInt(config.durationMs) * 1_000_000n, BigInt(config.intervalMs) * 1_000_000n, startNs) : undefined;
  try {
    await source.start(end === undefined ? (f, data) => writer.add(f, data) : (f, data) => (end.admit(f.host, f.sampler, f.endNs, nowNs()) ? writer.add(f, data) : undefined));
  } catch (error) {
    await writer.abort();
    if (bus?.owned === true) await bus.link.close();
    throw error;
  }
  // a replay that fails on the way keeps what it read
  const ended = source.done.catch((error: unknown) => log.error({ err: error }, `${source.kind} failed; writing what was read`));
  // a poll source ends by itself once it holds the duration's rows (src/sources/poll-window.ts): a timer here could only cut it short
  let timer: NodeJS.Timeout | undefined;
  if (end !== undefined) timer = setTimeout(function check(waited: boolean) {
    const now = nowNs();
    if (end.overAt(now)) {
      source.stop();
      return;
    }
    if (!waited) {
      log.info(
        { waitingFor: end.waitingFor, examples: end.waitingPairs(5), lagMs: Number(end.lagNs / 1_000_000n), upToMs: Number((end.deadlineNs() - now) / 1_000_000n) },
        end.waitingFor === 0 ? 'the window is over and no frame of it came: waiting for the late ones' : 'the window is over: waiting for its frames still on the way',
      );
    }
    timer = setTimeout(check, END_CHECK_MS, true);
  }, Number((end.endNs - nowNs()) / 1_000_000n), false);
  else if (config.durationMs !== undefined && source.kind !== 'poll') timer = setTimeout(() => source.stop(), config.durationMs);
  const done = (async (): Promise<RecordSummary> => {
    await ended;
    if (timer !== undefined) clearTimeout(timer);
    try {
      const s = await writer.finish();
      const hostsInStream = s.written || bus === undefined ? undefined : await bus.link.streamHosts(bus.stream);
      const window = end?.summary() ?? (source instanceof ReplaySource ? source.windowSummary() : undefined);
      if (window !== undefined) log.info({ window }, 'the window in frame time: frames left out before its start and after its end, host.samplers with no frame past the end');
      const summary: RecordSummary = { output: s.output, rows: s.rows, columns: s.columns, hosts: s.hosts, frames: s.frames, bytes: s.bytes, written: s.written, skipped: source.skipped, rowStats: s.rowStats, hostsInStream, outsideWindow: outside(window) };
      const lastPoll = pollError();
      return lastPoll === undefined ? summary : { ...summary, pollError: lastPoll };
    } finally {
      if (bus?.owned === true) await bus.link.close();
    }
  })();
  const abort = async (): Promise<void> => {
    // done rejects (no file) while the writer aborts: handled from the start
    const settled = done.catch(() => undefined);
    source.stop();
    await writer.abort();
    await settled;
  };
  return { done, progress: () => writer.progress(), skipped: () => ({ ...source.skipped }), stop: () => source.stop(), abort };
}
