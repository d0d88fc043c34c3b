/**
 * `rezolus record --durable NAME`: a recording that survives SIGKILL.
 *
 * Frames come from a DurableSource (src/sources/durable.ts), whose ledger
 * here is the spool next to the output (`<output>.spool`, src/spool/): each
 * message is appended to it and handed to the writer; after each fetched
 * batch the spool is fsynced and only then is the batch acked. A restart with
 * the same arguments finds the spool: its frames go to a fresh writer first
 * (the rows come out as they would have), then the stream is read on from
 * just after them. The window (start, and end when a duration or --until
 * was given) is fixed in the spool header at the first start, so restarts do
 * not stretch it. A window with an end is in frame time, so the frames of
 * its last seconds that a late fleet stores after the end are still
 * recorded, and adjacent windows share no frame (src/sources/window-end.ts).
 *
 * A server that lost its store comes back without the stream; the agent
 * creates it again, and its sequences start over at 1. The stream the source
 * then finds is told from the one it was reading by its creation time: a new
 * one starts a new epoch in the spool (spool-format.ts), whose base is the
 * highest spool sequence so far, and is read from the window's start time.
 * Frames are spooled and compared in spool sequences (base + stream
 * sequence), so the frames of the old stream are kept once, none of the new
 * one is taken for a redelivery, and a restart resumes in the right stream at
 * the right sequence. Frames the old stream held that were not spooled yet
 * were lost with it.
 *
 * At the end the Parquet file is written atomically (temporary name, fsync,
 * rename), the spool is marked done, the consumer deleted and the spool
 * removed. A kill before the rename leaves the previous file (if any) under
 * the name and redoes the write on restart; a kill after it only leaves the
 * clean-up, which the restart finishes.
 */
import { existsSync, statSync } from 'node:fs';
import { resolve } from 'node:path';
import type { Logger } from 'pino';
import type { StreamIdentity } from '../bus/durable.js';
import { checkLookback, consumerFilter } from '../bus/replay.js';
import { ConfigError, RezolusError } from '../errors.js';
import { lockFile } from '../files/lock.js';
import { Spool } from '../spool/spool.js';
import { epochFor, streamSeqAfter, type SpoolHeader } from '../spool/spool-format.js';
import { DurableSource, durableReadFromNs, type DurableLedger } from '../sources/durable.js';
import { NatsDurablePort } from '../sources/durable-nats.js';
import { BusLink } from '../sources/link.js';
import { newWriter } from './writer.js';
import { busUrl, outside, type DurableSpec, type RecordConfig, type RecordSummary, type RunningRecord } from './types.js';

export type DurableRecordConfig = RecordConfig & { readonly durable: DurableSpec };

export function spoolPath(output: string): string {
  return `${output}.spool`;
}

function headerFor(c: DurableRecordConfig): SpoolHeader {
  const startNs = c.durable.sinceNs ?? BigInt(Date.now()) * 1_000_000n;
  const endNs = c.durable.untilNs ?? (c.durable.durationMs === undefined ? undefined : startNs + BigInt(c.durable.durationMs) * 1_000_000n);
  return {
    v: 1,
    stream: c.durable.stream,
    consumer: c.durable.name,
    hosts: c.hosts,
    intervalMs: c.intervalMs,
    output: resolve(c.output),
    startNs: startNs.toString(),
    endNs: endNs === undefined ? null : endNs.toString(),
    window: c.durable.window,
  };
}

/** Refuses a restart whose arguments differ from the spool's. */
function checkSame(path: string, was: SpoolHeader, now: SpoolHeader): void {
  const keys = ['stream', 'consumer', 'hosts', 'intervalMs', 'output', 'window'] as const;
  const diff = keys.filter((k) => was[k] !== now[k]).map((k) => `${k} ${JSON.stringify(was[k])} (now ${JSON.stringify(now[k])})`);
  if (diff.length > 0) {
    throw new ConfigError(`${path} belongs to a recording started with ${diff.join(', ')}: run it with the same arguments to finish it, or delete the spool to start over`);
  }
}

/** The spool as the durable source's ledger. */
function spoolLedger(spool: Spool, stream: string, log: Logger): DurableLedger {
  return {
    get maxSeq() {
      return spool.maxSeq;
    },
    get base() {
      return spool.epoch?.base ?? 0;
    },
    afterSeq(found: StreamIdentity): number {
      const { epoch, record, newStream } = epochFor(spool.epoch, spool.maxSeq, found);
      if (record) spool.beginEpoch(epoch);
      if (newStream) {
        log.warn(
          { stream, created: found.created, lastSeq: found.lastSeq, spooled: spool.maxSeq, base: epoch.base },
          'the stream is a new one (the server lost its store?): reading it from the window start; frames of the old one not spooled yet were lost with it',
        );
      }
      return streamSeqAfter(epoch, spool.maxSeq);
    },
    async replayHeld(each) {
      const cut = await spool.replay((r) => each(r.subject, r.data, r.timeNs));
      if (cut !== undefined) {
        log.warn(
          { spool: spool.path, offset: cut.offset, bytes: cut.bytes, torn: cut.reason === 'short' ? 'runs past the end of the file' : 'fails its checksum, nothing good after it', spooledMessages: spool.frames },
          'the spool ended in a torn record (a kill or a crash during a write): cut it off; its frames are taken from the stream again',
        );
      }
      return { lostHeld: cut !== undefined, finished: spool.done };
    },
    keep: (m) => spool.append(m),
    commit: () => spool.sync(),
  };
}

export async function runDurableRecord(config: DurableRecordConfig, log: Logger): Promise<RunningRecord> {
  const path = spoolPath(config.output);
  const release = lockFile(path);
  let link: BusLink;
  try {
    link = await BusLink.open({ url: busUrl(config), security: config.nats, name: `rezolus-record-${config.durable.name}`, waitOnFirstConnect: false }, log);
  } catch (error) {
    release();
    throw error;
  }
  try {
    return await start(config, path, link, release, log);
  } catch (error) {
    release();
    await link.close();
    throw error;
  }
}

async function start(config: DurableRecordConfig, path: string, link: BusLink, release: () => void, log: Logger): Promise<RunningRecord> {
  const wanted = headerFor(config);
  const found = Spool.open(path);
  if (found !== undefined) checkSame(path, found.header, wanted);
  // a past window must still be in the stream at the first start (a restart lives with what is left)
  if (found === undefined && config.durable.sinceNs !== undefined) await checkLookback(link.nc, config.durable.stream, config.durable.sinceNs, BigInt(Date.now()) * 1_000_000n);
  const { filter, pick } = consumerFilter(config.hosts);
  const { stream, name } = config.durable;
  // made before the consumer, so that a kill in between leaves a spool (a restart then makes the consumer)
  const spool = found ?? Spool.create(path, wanted);
  const header = spool.header;
  const startNs = BigInt(header.startNs);
  const began = Date.now();
  const endNs = header.endNs === null ? undefined : BigInt(header.endNs);
  const intervalNs = BigInt(header.intervalMs) * 1_000_000n;
  // a window with an end is read from a little before its start (frames of agents whose clock is ahead)
  const port = new NatsDurablePort(link, { stream, name, filter, startNs: durableReadFromNs({ startNs, endNs, intervalNs }) }, log);
  const source = new DurableSource(
    {
      port,
      ledger: spoolLedger(spool, stream, log),
      pick,
      startNs,
      endNs,
      intervalNs,
      resuming: found !== undefined,
      stream,
    },
    log,
  );
  let aborted = false;
  const writer = newWriter(config, log, () => source.stop());
  try {
    await source.start((f, data) => writer.add(f, data));
  } catch (error) {
    await writer.abort();
    // a spool made just now for a consumer that cannot be had is not a recording
    if (found === undefined) spool.remove();
    else spool.close();
    throw error;
  }
  if (spool.done) {
    // killed after the file was in place: only the clean-up is left
    await writer.abort();
    const done = finishCleanUp(port, spool, config, source, release, link);
    return { done, progress: () => ({ frames: spool.frames, rows: 0, bytes: 0 }), skipped: () => ({ ...source.skipped }), stop: () => undefined, abort: async () => void (await done.catch(() => undefined)) };
  }
  log.info(
    { hosts: config.hosts, stream, consumer: name, output: config.output, spool: path, spooledMessages: spool.frames, fromSeq: source.fromSeq, epochBase: spool.epoch?.base, resumeMs: Date.now() - began },
    found === undefined ? 'recording' : 'resuming',
  );
  const done = (async (): Promise<RecordSummary> => {
    try {
      return await finish();
    } finally {
      spool.close();
      release();
      await link.close();
    }
  })();
  async function finish(): Promise<RecordSummary> {
    try {
      await source.done;
    } catch (error) {
      await writer.abort();
      throw error;
    }
    if (aborted) throw new RezolusError('ABORTED', `the recording of ${config.output} was aborted; ${path} is kept`);
    let s;
    try {
      s = await writer.finish();
    } catch (error) {
      const message = error instanceof Error ? error.message : String(error);
      throw new RezolusError('WRITE_FAILED', `${message}; ${path} and consumer ${name} are kept: run the same command again to write the file`, { cause: error });
    }
    spool.markDone();
    log.info({ output: s.output, frames: s.frames, spooledMessages: spool.frames, rows: s.rows, hosts: s.hosts.length, consumerRecreated: source.recreated, window: source.windowSummary() }, 'recorded');
    const hostsInStream = s.written ? undefined : await link.streamHosts(stream);
    await port.remove();
    spool.remove();
    return { output: s.output, rows: s.rows, columns: s.columns, hosts: s.hosts, frames: s.frames, bytes: s.bytes, written: s.written, skipped: source.skipped, rowStats: s.rowStats, hostsInStream, outsideWindow: outside(source.windowSummary()) };
  }
  return {
    done,
    progress: () => writer.progress(),
    skipped: () => ({ ...source.skipped }),
    stop: () => source.stop(),
    async abort() {
      aborted = true;
      source.stop();
      await done.catch(() => undefined);
    },
  };
}

/** The file is written and the spool says so: delete the consumer and the spool. */
async function finishCleanUp(port: NatsDurablePort, spool: Spool, config: DurableRecordConfig, source: DurableSource, release: () => void, link: BusLink): Promise<RecordSummary> {
  try {
    await port.remove();
    spool.remove();
    const written = existsSync(config.output);
    return { output: config.output, rows: 0, columns: 0, hosts: [], frames: spool.frames, bytes: written ? statSync(config.output).size : 0, written, skipped: source.skipped };
  } finally {
    spool.close();
    release();
    await link.close();
  }
}
