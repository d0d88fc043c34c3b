/**
 * `rezolus record --durable NAME`: a recording that survives SIGKILL.
 *
 * Frames come from the JetStream stream through a durable pull consumer
 * (bus/durable.ts). Each message is appended to the spool next to the
 * output (`<output>.spool`, spool.ts) and handed to the writer; after each
 * fetched batch the spool is fsynced and only then is the batch acked. A
 * restart with the same arguments finds the spool: it feeds every spooled
 * frame to a fresh writer (the rows come out as they would have), recreates
 * the consumer just after the greater of its ack floor and the last spooled
 * sequence, skips redelivered sequences it already holds, and goes on. The
 * window (start, and end when a duration or --until was given) is fixed in
 * the spool header at the first start, so restarts do not stretch it; it is
 * measured in stream store time.
 *
 * The ack is an ack-all, so it is sent only for a batch that was received
 * whole: no gap in the consumer's delivery sequence, no fetch error, no
 * connection drop meanwhile. Otherwise messages the server counts as
 * delivered may never have arrived, and acking a later one would drop them;
 * the recorder then acks nothing, fsyncs the spool and recreates the
 * consumer just after it, as a restart does. Descriptor lookups wait out a
 * dropped connection too: a frame is spooled (and acked) before it is
 * resolved, so a lookup given up would lose it from the file.
 *
 * A server that lost its store comes back without the stream; the agent
 * creates it again, and its sequences start over at 1. While the stream is
 * missing the recorder waits (one warning, a try every second; stopping
 * still writes the file). The stream it then finds is told from the one it
 * was reading by its creation time: a new one starts a new epoch in the
 * spool (spool-format.ts), whose base is the highest spool sequence so far,
 * and is read from the window's start time. Frames are spooled and compared
 * in spool sequences (base + stream sequence), so the frames of the old
 * stream are kept once, none of the new one is taken for a redelivery, and
 * a restart resumes in the right stream at the right sequence. Frames the
 * old stream held that were not spooled yet were lost with it.
 *
 * At the end the Parquet file is written atomically (temporary name, fsync,
 * rename), the spool is marked done, the consumer deleted and the spool
 * removed. A kill before the rename leaves the previous file (if any) under
 * the name and redoes the write on restart; a kill after it only leaves the
 * clean-up, which the restart finishes.
 */
import { existsSync, statSync } from 'node:fs';
import { resolve } from 'node:path';
import type { JsMsg, ConsumerMessages } from '@nats-io/jetstream';
import type { KV } from '@nats-io/kv';
import type { NatsConnection } from '@nats-io/nats-core';
import type { Logger } from 'pino';
import { connectBus } from '../bus/connect.js';
import { DescriptorCache } from '../bus/descriptors.js';
import { deleteDurable, openDurable, type OpenedDurable, type StreamIdentity } from '../bus/durable.js';
import { openDescriptorBucket } from '../bus/kv.js';
import { SeqGuard } from '../bus/order.js';
import { checkLookback, consumerFilter } from '../bus/replay.js';
import { emptySkipStats, frameOnSubject, type SkipStats } from '../bus/subscribe.js';
import { subjectHostToken } from '../bus/subjects.js';
import type { NatsSecurity } from '../config/nats.js';
import { ConfigError, RezolusError } from '../errors.js';
import { VERSION } from '../version.js';
import { lockFile } from '../files/lock.js';
import { closeBus, streamHosts } from './nats.js';
import type { RecordSummary, RunningRecord } from './main.js';
import { Spool } from '../spool/spool.js';
import { epochFor, streamSeqAfter, type SpoolHeader } from '../spool/spool-format.js';
import { RecordingWriter } from '../parquet/write.js';

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

export interface DurableRecordConfig {
  readonly natsUrl: string;
  /** credentials, TLS and inbox prefix; absent = none */
  readonly nats?: NatsSecurity | undefined;
  readonly hosts: string;
  readonly intervalMs: number;
  readonly output: string;
  readonly durable: DurableSpec;
}

const FETCH_MAX = 1000;
/** how long a request waits for a dropped connection to come back before it is tried anyway */
const RECONNECT_PATIENCE_MS = 10_000;
const FETCH_EXPIRES_MS = 1000;
/** how often a missing stream or an unreachable server is tried again */
const RETRY_MS = 1000;
/** store times are the server's clock: allow it to be this far behind ours before the window is over */
const END_GRACE_NS = 500_000_000n;

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

/**
 * The descriptor bucket with a get() that outlasts a dropped connection. The
 * cache takes a failed lookup for an unusable descriptor and skips the frame
 * (and the host's next frames for a while); here the frame is already spooled
 * and will be acked, so a timeout while NATS is away would lose it from the
 * file. A lookup that fails is tried again once connected, for as long as the
 * recording runs; a missing key (null) is an answer, not a failure.
 */
function patientKv(kv: KV, untilConnected: () => Promise<void>, stopped: () => boolean, log: Logger): KV {
  const get: KV['get'] = async (key, opts) => {
    for (let attempt = 0; ; attempt++) {
      try {
        return await kv.get(key, opts);
      } catch (error) {
        if (stopped()) throw error;
        if (attempt === 0) log.warn({ key, error: String(error) }, 'descriptor lookup failed; retrying once NATS answers');
        await untilConnected();
        await new Promise((r) => setTimeout(r, 200));
      }
    }
  };
  return new Proxy(kv, {
    get(target, prop) {
      if (prop === 'get') return get;
      const v: unknown = Reflect.get(target, prop, target);
      return typeof v === 'function' ? (v as (...a: unknown[]) => unknown).bind(target) : v;
    },
  });
}

/** Refuses a restart whose arguments differ from the spool's. */
function checkSame(path: string, was: SpoolHeader, now: SpoolHeader): void {
  const keys = ['stream', 'consumer', 'hosts', 'intervalMs', 'output', 'window'] as const;
  const diff = keys.filter((k) => was[k] !== now[k]).map((k) => `${k} ${JSON.stringify(was[k])} (now ${JSON.stringify(now[k])})`);
  if (diff.length > 0) {
    throw new ConfigError(`${path} belongs to a recording started with ${diff.join(', ')}: run it with the same arguments to finish it, or delete the spool to start over`);
  }
}

export async function runDurableRecord(config: DurableRecordConfig, log: Logger): Promise<RunningRecord> {
  const path = spoolPath(config.output);
  const release = lockFile(path);
  let nc: NatsConnection;
  try {
    nc = await connectBus({ url: config.natsUrl, name: `rezolus-record-${config.durable.name}`, log: log.child({ component: 'nats' }), waitOnFirstConnect: false, security: config.nats });
  } catch (error) {
    release();
    throw error;
  }
  try {
    return await start(config, path, nc, release, log);
  } catch (error) {
    release();
    await closeBus(nc);
    throw error;
  }
}

async function start(config: DurableRecordConfig, path: string, nc: NatsConnection, release: () => void, log: Logger): Promise<RunningRecord> {
  let stopRequested = false;
  let batch: ConsumerMessages | undefined;
  /** connection drops seen; one during a batch breaks it (see pull) */
  let drops = 0;
  /** the client drops requests made while it is disconnected (they time out): wait for the reconnect */
  let connected = true;
  // ends when the connection is closed
  void (async () => {
    for await (const s of nc.status()) {
      if (s.type !== 'disconnect' && s.type !== 'reconnect' && s.type !== 'staleConnection') continue;
      drops++;
      connected = s.type === 'reconnect';
      // what is on the way is lost: end the fetch now, not when its heartbeats are missed
      batch?.stop();
    }
  })().catch(() => undefined);
  const untilConnected = async (): Promise<void> => {
    for (let waited = 0; !connected && !stopRequested && waited < RECONNECT_PATIENCE_MS; waited += 50) await new Promise((r) => setTimeout(r, 50));
  };
  const kv = await openDescriptorBucket(nc);
  const cache = new DescriptorCache(patientKv(kv, untilConnected, () => stopRequested, log), log.child({ component: 'descriptors' }));
  const wanted = headerFor(config);
  const found = Spool.open(path);
  if (found !== undefined) checkSame(path, found.header, wanted);
  // a past window must still be in the stream at the first start (a restart lives with what is left)
  if (found === undefined && config.durable.sinceNs !== undefined) await checkLookback(nc, config.durable.stream, config.durable.sinceNs, BigInt(Date.now()) * 1_000_000n);
  const { filter, pick } = consumerFilter(config.hosts);
  const { stream, name } = config.durable;
  // made before the consumer, so that a kill in between leaves a spool (a restart then makes the consumer)
  const spool = found ?? Spool.create(path, wanted);
  const header = spool.header;
  const skipped = emptySkipStats();
  // one order guard over the spooled frames and the new ones: the same frames are used as in one run
  const guard = new SeqGuard();
  const began = Date.now();
  let aborted = false;
  const requestStop = (): void => {
    stopRequested = true;
    batch?.stop();
  };
  const writer = new RecordingWriter({ output: config.output, intervalMs: config.intervalMs, version: VERSION });
  writer.onError((error) => {
    log.debug({ error: error.message }, 'the recording cannot be written; stopping');
    requestStop();
  });
  const take = async (subject: string, data: Uint8Array): Promise<void> => {
    const frame = await frameOnSubject(subject, data, cache, skipped, guard);
    const wait = frame === undefined ? undefined : writer.add(frame, data);
    if (wait !== undefined) await wait;
  };
  let cut;
  try {
    cut = await spool.replay((r) => take(r.subject, r.data));
  } catch (error) {
    await writer.abort();
    throw error;
  }
  if (cut !== undefined) {
    log.warn(
      { spool: path, offset: cut.offset, bytes: cut.bytes, torn: cut.reason === 'short' ? 'runs past the end of the file' : 'fails its checksum, nothing good after it', spooledFrames: spool.frames },
      'the spool ended in a torn record (a kill or a crash during a write): cut it off; its frames are taken from the stream again',
    );
  }
  if (spool.done) {
    // killed after the file was in place: only the clean-up is left
    await writer.abort();
    const done = finishCleanUp(nc, spool, config, skipped, release);
    return { done, progress: () => ({ frames: spool.frames, rows: 0, bytes: 0 }), stop: () => undefined, abort: async () => void (await done.catch(() => undefined)) };
  }
  const startNs = BigInt(header.startNs);
  const endNs = header.endNs === null ? undefined : BigInt(header.endNs);
  /**
   * Where the spool stands in the stream the consumer is made on: a new stream (the server lost its
   * store) starts a new epoch first, and nothing of it is held yet.
   */
  const afterSeq = (found: StreamIdentity): number => {
    const { epoch, record, newStream } = epochFor(spool.epoch, spool.maxSeq, found);
    if (record) spool.beginEpoch(epoch);
    if (newStream) {
      log.warn(
        { stream, created: found.created, lastSeq: found.lastSeq, spooled: spool.maxSeq, base: epoch.base },
        'the stream is a new one (the server lost its store?): reading it from the window start; frames of the old one not spooled yet were lost with it',
      );
    }
    return streamSeqAfter(epoch, spool.maxSeq);
  };
  let streamGone = false;
  /**
   * Opens the consumer, waiting while the stream is missing (and, with `retryUnavailable`, while
   * NATS does not answer); undefined when stopped meanwhile.
   */
  const openWaiting = async (ignoreAckFloor: boolean, retryUnavailable: boolean): Promise<{ opened: OpenedDurable; attempts: number } | undefined> => {
    let warned = false;
    for (let attempt = 0; !stopRequested; attempt++) {
      await untilConnected();
      try {
        const opened = await openDurable(nc, { stream, name, filter, startNs, afterSeq, resuming: true, ignoreAckFloor });
        if (streamGone) log.warn({ stream, waitedS: attempt }, 'the stream is there again: recording goes on');
        streamGone = false;
        return { opened, attempts: attempt + 1 };
      } catch (error) {
        const missing = error instanceof RezolusError && error.code === 'NO_STREAM';
        // as before the stream could go missing: a RezolusError other than NATS_UNAVAILABLE ends the recording
        const unavailable = !(error instanceof RezolusError) || error.code === 'NATS_UNAVAILABLE';
        if (!missing && !(retryUnavailable && unavailable)) throw error;
        if (missing && !streamGone) log.warn({ stream }, `stream ${stream} is gone (the server lost its store?): waiting for it to be created again, trying every second`);
        else if (!missing && !warned) log.warn({ error: String(error) }, 'cannot recreate the consumer yet; retrying every second');
        streamGone ||= missing;
        warned = true;
        await new Promise((r) => setTimeout(r, RETRY_MS));
      }
    }
    return undefined;
  };
  let opened: OpenedDurable | undefined;
  try {
    // a cut tail may hold frames that were acked: start after the spool, not after the ack floor
    opened = found === undefined
      ? await openDurable(nc, { stream, name, filter, startNs, afterSeq, resuming: false })
      : (await openWaiting(cut !== undefined, false))?.opened;
  } catch (error) {
    await writer.abort();
    // a spool made just now for a consumer that cannot be had is not a recording
    if (found === undefined) spool.remove();
    throw error;
  }
  if (opened?.lostBefore !== undefined) {
    log.warn({ stream, firstSeq: opened.lostBefore, spooled: spool.maxSeq }, 'frames the recording needed left the stream (max_age) while the recorder was down: the file has a gap there');
  }
  log.info(
    { hosts: config.hosts, stream, consumer: name, output: config.output, spool: path, spooledFrames: spool.frames, fromSeq: opened?.fromSeq, epochBase: spool.epoch?.base, resumeMs: Date.now() - began },
    found === undefined ? 'recording' : 'resuming',
  );

  // The server counts a message as delivered once it is written to the socket. One that is lost
  // on the way (the connection dropped, a fetch given up) is acked by the ack-all of any later
  // one, and when it comes back after ack_wait it is below spool.maxSeq and skipped: lost. So a
  // batch is acked only when every delivery before its last message was received (the consumer's
  // delivery sequence has no gap), the fetch ended without an error and the connection did not
  // drop meanwhile. Otherwise nothing is acked: the spool is fsynced and the consumer recreated
  // just after it, as a restart does.
  // undefined: stopped while waiting for the stream; the file is written from the spool
  let consumer = opened?.consumer;
  /** the delivery sequence the next message of this consumer must have */
  let nextDelivery = 1;
  let recreated = 0;

  /** Recreates the consumer after the spool (retrying while NATS is away); false when stopped meanwhile. */
  const recreate = async (why: string): Promise<boolean> => {
    const got = await openWaiting(false, true);
    if (got === undefined) return false;
    const again = got.opened;
    consumer = again.consumer;
    nextDelivery = 1;
    recreated++;
    log.warn({ why, spooled: spool.maxSeq, fromSeq: again.fromSeq, attempts: got.attempts }, 'frames may have been delivered and not received: recreated the consumer just after the spool');
    if (again.lostBefore !== undefined) log.warn({ stream, firstSeq: again.lostBefore, spooled: spool.maxSeq }, 'frames the recording needed left the stream (max_age) meanwhile: the file has a gap there');
    return true;
  };

  const pull = async (): Promise<void> => {
    while (!stopRequested) {
      let last: JsMsg | undefined;
      let lastPending = -1;
      let ended = false;
      /** why this batch must not be acked */
      let broken: string | undefined;
      const dropsBefore = drops;
      const from = consumer;
      if (from === undefined) return;
      // spool sequence = the epoch's base + stream sequence (the consumer reads the epoch's stream)
      const base = spool.epoch?.base ?? 0;
      try {
        batch = await from.fetch({ max_messages: FETCH_MAX, expires: FETCH_EXPIRES_MS });
        if (drops !== dropsBefore) batch.stop();
        for await (const m of batch) {
          if (m.info.deliverySequence !== nextDelivery) {
            broken = `delivery ${m.info.deliverySequence} came after ${nextDelivery - 1}`;
            break;
          }
          nextDelivery++;
          if (endNs !== undefined && BigInt(m.info.timestampNanos) > endNs) {
            ended = true;
            break;
          }
          last = m;
          lastPending = m.info.pending;
          // a redelivery of what the spool holds
          const seq = base + m.info.streamSequence;
          if (seq <= spool.maxSeq) continue;
          // a start time still to come makes the server start at its last message: the window starts at startNs
          if (BigInt(m.info.timestampNanos) < startNs) continue;
          // the fleet filter delivers every host: keep the selected ones
          if (pick !== undefined && !pick(subjectHostToken(m.subject))) continue;
          spool.append({ seq, timeNs: BigInt(m.info.timestampNanos), subject: m.subject, data: m.data });
          await take(m.subject, m.data);
          if (stopRequested) break;
        }
      } catch (error) {
        if (error instanceof RezolusError) throw error;
        broken = `the fetch failed: ${String(error)}`;
      } finally {
        batch = undefined;
      }
      if (broken === undefined && drops !== dropsBefore) broken = 'the connection dropped';
      // durable first, then acked (ack policy all: the last acks the batch, and every delivery before it)
      spool.sync();
      if (broken === undefined) last?.ack();
      if (ended || stopRequested) return;
      if (broken !== undefined) {
        if (!(await recreate(broken))) return;
        continue;
      }
      if (endNs !== undefined && BigInt(Date.now()) * 1_000_000n > endNs + END_GRACE_NS && (last === undefined || lastPending === 0)) {
        // past the end and caught up, unless the server holds more (it may have been away)
        const pending = await from.info(false).then((i) => i.num_pending, () => -1);
        if (pending === 0) return;
      }
    }
  };

  const done = (async (): Promise<RecordSummary> => {
    try {
      await pull();
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
    log.info({ output: s.output, frames: s.frames, spooledFrames: spool.frames, rows: s.rows, hosts: s.hosts.length, consumerRecreated: recreated }, 'recorded');
    const hostsInStream = s.written ? undefined : await streamHosts(nc, stream);
    await deleteDurable(nc, stream, name);
    spool.remove();
    return { output: s.output, rows: s.rows, columns: s.columns, hosts: s.hosts, frames: s.frames, bytes: s.bytes, written: s.written, skipped, rowStats: s.rowStats, hostsInStream };
  })().finally(async () => {
    spool.close();
    release();
    await closeBus(nc);
  });
  return {
    done,
    progress: () => writer.progress(),
    stop: requestStop,
    async abort() {
      aborted = true;
      requestStop();
      await done.catch(() => undefined);
    },
  };
}

/** The file is written and the spool says so: delete the consumer and the spool. */
async function finishCleanUp(nc: NatsConnection, spool: Spool, config: DurableRecordConfig, skipped: SkipStats, release: () => void): Promise<RecordSummary> {
  try {
    await deleteDurable(nc, config.durable.stream, config.durable.name);
    spool.remove();
    const written = existsSync(config.output);
    return { output: config.output, rows: 0, columns: 0, hosts: [], frames: spool.frames, bytes: written ? statSync(config.output).size : 0, written, skipped };
  } finally {
    release();
    await closeBus(nc);
  }
}
