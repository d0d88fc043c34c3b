/**
 * The spool of a durable recording (`<output>.spool`): every frame message
 * taken from the stream, appended and fsynced in batches before its
 * JetStream ack, so that a recorder killed at any point can rebuild its
 * rows from the spool and continue from the consumer's ack floor. The
 * header (what the recording was started with, its window) is written once,
 * atomically; a torn last record (a kill during an append) is cut off on
 * open. A `done` record says the Parquet file is in place, so a recorder
 * killed while cleaning up only has to finish the clean-up.
 */
import { closeSync, fsyncSync, ftruncateSync, openSync, readSync, renameSync, rmSync, statSync, writeFileSync, writeSync } from 'node:fs';
import { RezolusError } from '../errors.js';
import { syncDir } from './fsync.js';
import { writeError } from './io-error.js';
import { decodeRecord, encodeRecord, RECORD_PREFIX, SPOOL_MAGIC, type FrameRecord, type SpoolHeader } from './spool-format.js';

const READ_CHUNK = 1024 * 1024;

export class Spool {
  readonly path: string;
  readonly header: SpoolHeader;
  #fd: number | undefined;
  #pending: Uint8Array[] = [];
  #maxSeq = 0;
  #frames = 0;
  #done = false;
  /** bytes of the file that are whole records */
  #end: number;

  private constructor(path: string, header: SpoolHeader, end: number) {
    this.path = path;
    this.header = header;
    this.#end = end;
  }

  /** The highest stream sequence spooled (0: none). */
  get maxSeq(): number {
    return this.#maxSeq;
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
   */
  async replay(onFrame: (r: FrameRecord) => Promise<void> | undefined): Promise<void> {
    const fd = openSync(this.path, 'r');
    let buf = Buffer.alloc(0);
    let base = this.#end; // file offset of buf[0]
    let at = 0;
    let eof = false;
    try {
      for (;;) {
        const d = decodeRecord(buf, at);
        if (d === 'bad') break;
        if (d === 'more') {
          if (eof) break;
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
    this.#end = base + at;
    try {
      this.#fd = openSync(this.path, 'r+');
      if (statSync(this.path).size > this.#end) {
        ftruncateSync(this.#fd, this.#end);
        fsyncSync(this.#fd);
      }
    } catch (error) {
      throw writeError(this.path, error);
    }
  }

  /** Queues a frame message; it is durable after sync(). */
  append(r: Omit<FrameRecord, 't'>): void {
    this.#pending.push(encodeRecord({ t: 'frame', ...r }));
    this.#frames++;
    if (r.seq > this.#maxSeq) this.#maxSeq = r.seq;
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
