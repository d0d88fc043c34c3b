/**
 * The spool of a durable recording (`<output>.spool`): every frame message
 * taken from the stream, appended and fsynced in batches before its
 * JetStream ack, so that a recorder killed at any point can rebuild its
 * rows from the spool and continue from the consumer's ack floor. The
 * header (what the recording was started with, its window) is written once,
 * atomically; a torn last record (a kill during an append) is cut off on
 * open, and reported; damage before the end is refused (see replay). A `done` record says the Parquet file is in place, so a recorder
 * killed while cleaning up only has to finish the clean-up. An `epoch`
 * record names the stream the frames after it come from (a stream created
 * again after the server lost its store starts over at sequence 1): frames
 * are kept in spool sequences, the epoch's base + their stream sequence
 * (spool-format.ts).
 */
import { closeSync, fstatSync, fsyncSync, ftruncateSync, openSync, readSync, renameSync, rmSync, statSync, writeFileSync, writeSync } from 'node:fs';
import { RezolusError } from '../errors.js';
import { syncDir } from '../files/fsync.js';
import { writeError } from '../files/io-error.js';
import { decodeRecord, encodeRecord, RECORD_PREFIX, SPOOL_MAGIC, type EpochRecord, type FrameRecord, type SpoolHeader } from './spool-format.js';

const READ_CHUNK = 1024 * 1024;

/** A torn tail replay() cut off. */
export interface SpoolCut {
  /** byte offset of the first byte cut */
  readonly offset: number;
  readonly bytes: number;
  /** `short`: the last record runs past the end of the file; `bad`: the last one fails its checksum */
  readonly reason: 'short' | 'bad';
}

/**
 * Whether the bad record at `offset` can be a torn last write: no whole
 * record that passes its checksum follows it. Its length and those of the
 * records after it are followed to the end of the file (a record running
 * past the end, or a few stray bytes, end the walk); a length that cannot
 * be followed is accepted only when everything from there on is zeros.
 */
function tornAt(fd: number, offset: number, size: number): boolean {
  const prefix = Buffer.alloc(RECORD_PREFIX);
  for (let at = offset, first = true; ; first = false) {
    if (size - at < RECORD_PREFIX) return true;
    readSync(fd, prefix, 0, RECORD_PREFIX, at);
    // a prefix alone decodes as `more`, or as `bad` when its length is 0 or too large to be a record
    if (decodeRecord(prefix, 0) === 'bad') return zerosFrom(fd, at, size);
    const n = prefix.readUInt32LE(0);
    if (at + RECORD_PREFIX + n > size) return true;
    if (!first) {
      const whole = Buffer.allocUnsafe(RECORD_PREFIX + n);
      readSync(fd, whole, 0, whole.length, at);
      if (decodeRecord(whole, 0) !== 'bad') return false;
    }
    at += RECORD_PREFIX + n;
  }
}

function zerosFrom(fd: number, offset: number, size: number): boolean {
  const chunk = Buffer.allocUnsafe(READ_CHUNK);
  for (let at = offset; at < size; ) {
    const n = readSync(fd, chunk, 0, Math.min(chunk.length, size - at), at);
    if (n === 0) break;
    for (let i = 0; i < n; i++) if (chunk[i] !== 0) return false;
    at += n;
  }
  return true;
}

export class Spool {
  readonly path: string;
  readonly header: SpoolHeader;
  #fd: number | undefined;
  #pending: Uint8Array[] = [];
  #maxSeq = 0;
  #epoch: EpochRecord | undefined;
  #frames = 0;
  #done = false;
  /** bytes of the file that are whole records */
  #end: number;

  private constructor(path: string, header: SpoolHeader, end: number) {
    this.path = path;
    this.header = header;
    this.#end = end;
  }

  /** The highest spool sequence spooled (0: none): the epoch's base + the stream sequence. */
  get maxSeq(): number {
    return this.#maxSeq;
  }

  /** The stream the last frames came from; undefined before the first (or in a spool from before epochs). */
  get epoch(): EpochRecord | undefined {
    return this.#epoch;
  }

  get frames(): number {
    return this.#frames;
  }

  /** The Parquet file was written: only the clean-up is left. */
  get done(): boolean {
    return this.#done;
  }

  /** Writes a new spool holding only `header`: under a temporary name, fsynced, renamed. */
  static create(path: string, header: SpoolHeader): Spool {
    const tmp = `${path}.tmp-${process.pid}`;
    try {
      const head = Buffer.concat([SPOOL_MAGIC, encodeRecord({ t: 'header', header })]);
      writeFileSync(tmp, head, { flush: true });
      renameSync(tmp, path);
      syncDir(path);
      const s = new Spool(path, header, head.byteLength);
      s.#fd = openSync(path, 'r+');
      return s;
    } catch (error) {
      rmSync(tmp, { force: true });
      throw writeError(path, error);
    }
  }

  /**
   * Opens an existing spool and reads its header; undefined when there is
   * none. A spool without a whole header (killed while created) is removed.
   */
  static open(path: string): Spool | undefined {
    let fd: number;
    try {
      fd = openSync(path, 'r');
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code === 'ENOENT') return undefined;
      throw error;
    }
    try {
      const head = Buffer.alloc(Math.min(statSync(path).size, 64 * 1024));
      readSync(fd, head, 0, head.length, 0);
      if (!head.subarray(0, SPOOL_MAGIC.length).equals(SPOOL_MAGIC)) {
        throw new RezolusError('SPOOL', `${path} is not a rezolus spool; move it away or choose another -o`);
      }
      const d = decodeRecord(head, SPOOL_MAGIC.length);
      if (typeof d === 'string' || d.record.t !== 'header') {
        throw new RezolusError('SPOOL', `${path} has no readable header; delete it to start the recording again`);
      }
      return new Spool(path, d.record.header, d.next);
    } finally {
      closeSync(fd);
    }
  }

  /**
   * Reads every frame record, in order, waiting whenever `onFrame` returns a
   * promise; then cuts off a torn tail and opens the spool for appending.
   * Returns what was cut, if anything (the caller logs it).
   *
   * Only the end of the file can be torn: every write appends, and a frame
   * is acked only after the write holding it was fsynced. So a record that
   * runs past the end of the file (a kill or a crash during the last write),
   * or a bad one that no good record follows (a crash that got the file's
   * size to disk before all of its data), is cut. A bad record with a good
   * one after it is damage, not a torn write: the frames
   * after it were fsynced and may have been acked, so they may be in no other
   * place; cutting them would lose them without a word. That is refused, in
   * one line naming the file and the byte offset.
   */
  async replay(onFrame: (r: FrameRecord) => Promise<void> | undefined): Promise<SpoolCut | undefined> {
    const fd = openSync(this.path, 'r');
    let buf = Buffer.alloc(0);
    let base = this.#end; // file offset of buf[0]
    let at = 0;
    let eof = false;
    let cut: SpoolCut | undefined;
    try {
      const size = fstatSync(fd).size;
      for (;;) {
        const d = decodeRecord(buf, at);
        if (d === 'bad') {
          const offset = base + at;
          if (!tornAt(fd, offset, size)) {
            throw new RezolusError(
              'SPOOL',
              `${this.path} is damaged at byte ${offset} of ${size} (a record fails its checksum and ${size - offset} bytes follow, frames that may be stored nowhere else): ` +
                `move it away to start the recording over, or cut it there (truncate -s ${offset}) to keep the ${this.#frames} frames before it`,
            );
          }
          cut = { offset, bytes: size - offset, reason: 'bad' };
          break;
        }
        if (d === 'more') {
          if (eof) {
            if (buf.length > at) cut = { offset: base + at, bytes: buf.length - at, reason: 'short' };
            break;
          }
          const held = buf.length - at;
          const missing = held >= RECORD_PREFIX ? buf.readUInt32LE(at) + RECORD_PREFIX - held : RECORD_PREFIX;
          const chunk = Buffer.allocUnsafe(Math.max(READ_CHUNK, missing));
          const n = readSync(fd, chunk, 0, chunk.length, base + buf.length);
          if (n === 0) eof = true;
          base += at;
          buf = Buffer.concat([buf.subarray(at), chunk.subarray(0, n)]);
          at = 0;
          continue;
        }
        at = d.next;
        if (d.record.t === 'done') this.#done = true;
        else if (d.record.t === 'epoch') this.#epoch = d.record;
        else if (d.record.t === 'frame') {
          this.#frames++;
          if (d.record.seq > this.#maxSeq) this.#maxSeq = d.record.seq;
          const wait = onFrame(d.record);
          if (wait !== undefined) await wait;
        }
      }
    } finally {
      closeSync(fd);
    }
    this.#end = cut?.offset ?? base + at;
    try {
      this.#fd = openSync(this.path, 'r+');
      if (statSync(this.path).size > this.#end) {
        ftruncateSync(this.#fd, this.#end);
        fsyncSync(this.#fd);
      }
    } catch (error) {
      throw writeError(this.path, error);
    }
    return cut;
  }

  /** Queues a frame message; it is durable after sync(). */
  append(r: Omit<FrameRecord, 't'>): void {
    this.#pending.push(encodeRecord({ t: 'frame', ...r }));
    this.#frames++;
    if (r.seq > this.#maxSeq) this.#maxSeq = r.seq;
  }

  /**
   * Starts an epoch: the frames appended after it come from this stream, at
   * spool sequence `base` + their stream sequence. Written and fsynced now,
   * with whatever append() queued before it.
   */
  beginEpoch(epoch: EpochRecord): void {
    if (this.#epoch !== undefined && epoch.base < this.#maxSeq) {
      throw new RangeError(`epoch base ${epoch.base} is below spooled sequence ${this.#maxSeq}`);
    }
    this.#pending.push(encodeRecord(epoch));
    this.sync();
    this.#epoch = epoch;
  }

  /** Writes what append() queued and fsyncs; after it returns, those messages may be acked. */
  sync(): void {
    if (this.#pending.length === 0) return;
    const fd = this.#fd;
    if (fd === undefined) throw new Error(`spool ${this.path} is not open for appending`);
    const bytes = Buffer.concat(this.#pending);
    this.#pending = [];
    try {
      for (let off = 0; off < bytes.length; ) off += writeSync(fd, bytes, off, bytes.length - off, this.#end + off);
      fsyncSync(fd);
    } catch (error) {
      // a partial record is cut off by the next open
      throw writeError(this.path, error);
    }
    this.#end += bytes.length;
  }

  /** Records that the Parquet file is in place. */
  markDone(): void {
    this.#pending.push(encodeRecord({ t: 'done' }));
    this.sync();
    this.#done = true;
  }

  close(): void {
    if (this.#fd !== undefined) closeSync(this.#fd);
    this.#fd = undefined;
  }

  /** Deletes the spool (the recording is over). */
  remove(): void {
    this.close();
    rmSync(this.path, { force: true });
    syncDir(this.path);
  }
}
