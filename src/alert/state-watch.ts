/**
 * Follows the alert state bucket: every record as it is now, then each
 * change as it is written (a KV watch is an ordered consumer; it survives a
 * reconnect). The evaluator uses it to learn another evaluator's
 * transitions; the exporter's gauge, the forwarder and the viewer use it to
 * know which alerts are pending and firing.
 */
import type { KV, KvWatchEntry } from '@nats-io/kv';
import type { QueuedIterator } from '@nats-io/nats-core';
import type { Logger } from 'pino';
import { parseRecord, type AlertRecord } from './contract.js';

export interface WatchedRecord {
  readonly record: AlertRecord;
  /** the KV revision (for compare-and-set) */
  readonly revision: number;
}

/** Called for each record written (undefined: the key was deleted). */
export type RecordListener = (key: string, now: WatchedRecord | undefined) => void;

export class AlertStateWatch {
  readonly #records = new Map<string, WatchedRecord>();
  readonly #listeners: RecordListener[] = [];
  #iter: QueuedIterator<KvWatchEntry> | undefined;
  #loop: Promise<void> | undefined;

  constructor(
    private readonly kv: KV,
    private readonly log: Logger,
  ) {}

  /** Starts following; resolves once the bucket's current records are read (then follows in the background). */
  async start(): Promise<void> {
    const status = await this.kv.status();
    const expected = status.values;
    let initial!: () => void;
    const loaded = new Promise<void>((resolve) => (initial = resolve));
    this.#iter = await this.kv.watch({ key: '>' });
    let seen = 0;
    if (expected === 0) initial();
    const iter = this.#iter;
    this.#loop = (async () => {
      for await (const e of iter) {
        seen++;
        this.#take(e);
        if (seen >= expected || e.delta === 0) initial();
      }
      initial();
    })().catch((error: unknown) => {
      this.log.error({ err: error }, 'alert state watch ended');
      initial();
    });
    await loaded;
  }

  onChange(listener: RecordListener): void {
    this.#listeners.push(listener);
  }

  get(key: string): WatchedRecord | undefined {
    return this.#records.get(key);
  }

  records(): IterableIterator<[string, WatchedRecord]> {
    return this.#records.entries();
  }

  /** Takes a record this process wrote itself (so a read right after a put sees it before the watch does). */
  note(key: string, record: AlertRecord, revision: number): void {
    const had = this.#records.get(key);
    if (had !== undefined && had.revision >= revision) return;
    this.#set(key, { record, revision });
  }

  #take(e: KvWatchEntry): void {
    if (e.operation === 'DEL' || e.operation === 'PURGE') {
      if (this.#records.delete(e.key)) for (const l of this.#listeners) l(e.key, undefined);
      return;
    }
    const record = parseRecord(e.value);
    if (record === undefined) {
      this.log.warn({ key: e.key }, 'alert state key is not a rezolus alert record; ignored');
      return;
    }
    const had = this.#records.get(e.key);
    if (had !== undefined && had.revision >= e.revision) return;
    this.#set(e.key, { record, revision: e.revision });
  }

  #set(key: string, now: WatchedRecord): void {
    this.#records.set(key, now);
    for (const l of this.#listeners) {
      try {
        l(key, now);
      } catch (error) {
        this.log.error({ err: error, key }, 'alert state listener failed');
      }
    }
  }

  async stop(): Promise<void> {
    this.#iter?.stop();
    await this.#loop;
  }

  /**
   * Starts again from what the bucket holds now (after it was lost and made
   * again): every record known before is dropped (listeners see a delete),
   * then the bucket's records are read.
   */
  async restart(): Promise<void> {
    await this.stop();
    for (const key of [...this.#records.keys()]) {
      this.#records.delete(key);
      for (const l of this.#listeners) l(key, undefined);
    }
    await this.start();
  }
}
