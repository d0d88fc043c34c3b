/**
 * The byte layout of a durable recording's spool (spool.ts): a magic, then
 * records, each `[u32 body length][u32 crc32 of body][body]` (little
 * endian). The first record is the header (JSON), then one record per
 * frame message taken from the stream (its spool sequence, store time,
 * subject and message bytes), and a `done` record once the Parquet file is
 * in place. A record whose length runs past the end of the file or whose
 * checksum is wrong ends the spool: it is the torn tail of a killed writer.
 *
 * Stream epochs: a server that lost its store gets the stream created again
 * (by the agent), and its sequences start over at 1. An `epoch` record marks
 * the stream the frames after it come from: its creation time (stream info
 * `created`, as the server gave it) and a base; a frame's spool sequence is
 * base + its stream sequence, so spool sequences only grow across streams
 * (a new epoch's base is the highest spool sequence before it). Spools
 * written before epochs existed have none: their frames are in stream
 * sequences of one stream, which is base 0 of an epoch of unknown creation.
 * Pure, no I/O.
 */
import { crc32 } from 'node:zlib';
import type { StreamIdentity } from '../bus/durable.js';

export const SPOOL_MAGIC = Buffer.from('RZSPOOL1', 'ascii');
/** length and checksum before each body */
export const RECORD_PREFIX = 8;
/** a frame message is at most the server's max_payload (1 MiB); anything far above is corruption */
const MAX_BODY = 64 * 1024 * 1024;

const HEADER = 0;
const FRAME = 1;
const DONE = 2;
const EPOCH = 3;

/** What a recording was started with; a restart must match it. */
export interface SpoolHeader {
  readonly v: 1;
  readonly stream: string;
  readonly consumer: string;
  readonly hosts: string;
  readonly intervalMs: number;
  readonly output: string;
  /** unix ns (decimal string): the consumer starts at this store time */
  readonly startNs: string;
  /** unix ns (decimal string): messages stored later end the recording; null = until stopped */
  readonly endNs: string | null;
  /** how the window was given, to tell a restart with other arguments */
  readonly window: string;
}

export interface FrameRecord {
  readonly t: 'frame';
  /** spool sequence: the epoch's base + the stream sequence (before any epoch record: the stream sequence) */
  readonly seq: number;
  /** store time, unix ns */
  readonly timeNs: bigint;
  readonly subject: string;
  readonly data: Uint8Array;
}

/** The stream the frames after it come from. */
export interface EpochRecord {
  readonly t: 'epoch';
  /** the stream's creation time, as stream info gives it (compared as text) */
  readonly created: string;
  /** spool sequence = base + stream sequence */
  readonly base: number;
}

export type SpoolRecord = { readonly t: 'header'; readonly header: SpoolHeader } | FrameRecord | EpochRecord | { readonly t: 'done' };

function frame(body: Uint8Array): Uint8Array {
  const out = Buffer.allocUnsafe(RECORD_PREFIX + body.byteLength);
  out.writeUInt32LE(body.byteLength, 0);
  out.writeUInt32LE(crc32(body), 4);
  out.set(body, RECORD_PREFIX);
  return out;
}

export function encodeRecord(r: SpoolRecord): Uint8Array {
  if (r.t === 'header') {
    const json = Buffer.from(JSON.stringify(r.header), 'utf8');
    const body = Buffer.allocUnsafe(1 + json.byteLength);
    body[0] = HEADER;
    body.set(json, 1);
    return frame(body);
  }
  if (r.t === 'done') return frame(Uint8Array.of(DONE));
  if (r.t === 'epoch') {
    const created = Buffer.from(r.created, 'utf8');
    const body = Buffer.allocUnsafe(1 + 8 + created.byteLength);
    body[0] = EPOCH;
    body.writeBigUInt64LE(BigInt(r.base), 1);
    body.set(created, 9);
    return frame(body);
  }
  const subject = Buffer.from(r.subject, 'utf8');
  const body = Buffer.allocUnsafe(1 + 8 + 8 + 2 + subject.byteLength + r.data.byteLength);
  body[0] = FRAME;
  body.writeBigUInt64LE(BigInt(r.seq), 1);
  body.writeBigUInt64LE(r.timeNs, 9);
  body.writeUInt16LE(subject.byteLength, 17);
  body.set(subject, 19);
  body.set(r.data, 19 + subject.byteLength);
  return frame(body);
}

/** Decoding one record at `at` of `buf`: the record and the offset after it, `more` (not all there yet) or `bad`. */
export type Decoded = { readonly record: SpoolRecord; readonly next: number } | 'more' | 'bad';

export function decodeRecord(buf: Buffer, at: number): Decoded {
  if (buf.length - at < RECORD_PREFIX) return 'more';
  const n = buf.readUInt32LE(at);
  if (n === 0 || n > MAX_BODY) return 'bad';
  if (buf.length - at - RECORD_PREFIX < n) return 'more';
  const body = buf.subarray(at + RECORD_PREFIX, at + RECORD_PREFIX + n);
  if (crc32(body) !== buf.readUInt32LE(at + 4)) return 'bad';
  const next = at + RECORD_PREFIX + n;
  try {
    if (body[0] === DONE) return { record: { t: 'done' }, next };
    if (body[0] === HEADER) return { record: { t: 'header', header: JSON.parse(body.subarray(1).toString('utf8')) as SpoolHeader }, next };
    if (body[0] === EPOCH) return n < 9 ? 'bad' : { record: { t: 'epoch', base: Number(body.readBigUInt64LE(1)), created: body.subarray(9).toString('utf8') }, next };
    if (body[0] !== FRAME || n < 19) return 'bad';
    const subjectBytes = body.readUInt16LE(17);
    if (19 + subjectBytes > n) return 'bad';
    return {
      record: {
        t: 'frame',
        seq: Number(body.readBigUInt64LE(1)),
        timeNs: body.readBigUInt64LE(9),
        subject: body.subarray(19, 19 + subjectBytes).toString('utf8'),
        // a copy: the read buffer is reused
        data: Uint8Array.prototype.slice.call(body, 19 + subjectBytes),
      },
      next,
    };
  } catch {
    return 'bad';
  }
}

/**
 * The epoch the frames of `stream` go into, given the spool's last epoch
 * (undefined: none yet, or a spool from before epochs) and its highest spool
 * sequence; `record` when it must be written to the spool before any frame
 * of it. The same creation time is the same stream. Without an epoch, a
 * stream whose last sequence is below what the spool holds cannot be the
 * one it was read from (its sequences started over); otherwise it is taken
 * for it (a spool from before epochs cannot tell a new stream that has
 * grown past it).
 */
export function epochFor(current: EpochRecord | undefined, maxSeq: number, stream: StreamIdentity): { readonly epoch: EpochRecord; readonly record: boolean; readonly newStream: boolean } {
  if (current !== undefined && current.created === stream.created) return { epoch: current, record: false, newStream: false };
  const same = current === undefined && stream.lastSeq >= maxSeq;
  return { epoch: { t: 'epoch', created: stream.created, base: same ? 0 : maxSeq }, record: true, newStream: !same };
}

/** The stream sequence after which the epoch's stream holds nothing the spool lacks (0: nothing of it spooled). */
export function streamSeqAfter(epoch: EpochRecord, maxSeq: number): number {
  return Math.max(0, maxSeq - epoch.base);
}
