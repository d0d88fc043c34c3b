/**
 * Incident capture: when an alert fires, its host's frames from `before`
 * its start to `after` its firing are written to
 * <dir>/<host>/<rule>-<firedAt>.parquet through the recording path (a
 * ReplaySource run by runRecord: the layout of every Parquet file here),
 * then a capture event names the file, or says why there is none.
 *
 * The capture is part of the firing record (owner and window), so it
 * survives its evaluator: another evaluator takes over one that is overdue
 * by TAKEOVER_MS. At most one capture per host and rule within `everyMs`,
 * and one runs at a time.
 */
import { mkdirSync } from 'node:fs';
import { join, resolve, sep } from 'node:path';
import type { KV } from '@nats-io/kv';
import type { Logger } from 'pino';
import { runRecord } from '../record/main.js';
import type { BusLink } from '../sources/link.js';
import type { AlertCapture, AlertRecord, CaptureResult } from './contract.js';
import type { AlertRule } from './rules.js';
import type { AlertStateWatch } from './state-watch.js';
import type { Transitions } from './transitions.js';

/** After its end, frames are given this long to reach the stream before the window is read. */
const SETTLE_MS = 2000;
/** A capture its owner has not written this long after its end is taken over. */
export const TAKEOVER_MS = 60_000;

export interface CaptureOptions {
  readonly dir: string;
  readonly everyMs: number;
  readonly intervalMs: number;
  readonly stream: string;
  /** the stream's max_age: a window never starts before what it keeps */
  readonly maxAgeMs: number;
}

const encoder = new TextEncoder();

/** `20261126T013512Z` */
function stamp(ms: number): string {
  return new Date(ms).toISOString().replace(/[-:]/g, '').replace(/\.\d+Z$/, 'Z');
}

export class IncidentCapture {
  #running: Promise<void> | undefined;
  captures = 0;
  failures = 0;

  constructor(
    private readonly o: CaptureOptions,
    private readonly bus: BusLink,
    private readonly kv: KV,
    private readonly watch: AlertStateWatch,
    private readonly transitions: Transitions,
    private readonly log: Logger,
  ) {}

  /** The capture a firing transition asks for, or undefined (the rule captures nothing, or one of this host and rule is recent). */
  plan(rule: AlertRule, host: string, activeAt: number, firedAt: number): AlertCapture | undefined {
    if (rule.capture === undefined) return undefined;
    for (const [, { record }] of this.watch.records()) {
      if (record.host === host && record.rule === rule.name && record.capture !== undefined && firedAt - record.capture.until < this.o.everyMs) return undefined;
    }
    const since = Math.max(activeAt - rule.capture.beforeMs, firedAt - this.o.maxAgeMs + 5000);
    return { since, until: firedAt + rule.capture.afterMs, owner: this.transitions.evaluator, activeAt, firedAt };
  }

  /** Starts the next capture that is due, if none is running. */
  tick(now: number): void {
    if (this.#running !== undefined) return;
    for (const [key, { record, revision }] of this.watch.records()) {
      const c = record.capture;
      if (c === undefined || c.result !== undefined || now < c.until + SETTLE_MS) continue;
      const mine = c.owner === this.transitions.evaluator;
      if (!mine && now < c.until + TAKEOVER_MS) continue;
      this.#running = this.#run(key, record, revision, mine)
        .catch((error: unknown) => this.log.error({ key, err: error }, 'incident capture failed'))
        .finally(() => (this.#running = undefined));
      return;
    }
  }

  async idle(): Promise<void> {
    await this.#running;
  }

  async #run(key: string, record: AlertRecord, revision: number, mine: boolean): Promise<void> {
    const c = record.capture as AlertCapture;
    let rev = revision;
    if (!mine) {
      // take it over: of several evaluators, the one whose compare-and-set wins writes it
      const taken: AlertRecord = { ...record, capture: { ...c, owner: this.transitions.evaluator } };
      try {
        rev = await this.kv.update(key, encoder.encode(JSON.stringify(taken)), revision);
        this.watch.note(key, taken, rev);
        record = taken;
        this.log.info({ key, from: c.owner }, 'taking over an incident capture its evaluator did not write');
      } catch {
        return;
      }
    }
    const result = await this.#write(record, c);
    const done: AlertRecord = { ...record, capture: { ...c, owner: this.transitions.evaluator, result } };
    try {
      const r = await this.kv.update(key, encoder.encode(JSON.stringify(done)), rev);
      this.watch.note(key, done, r);
    } catch {
      // the alert moved on meanwhile (resolved, or a new episode): keep the result on the newer record
      const now = this.watch.get(key);
      if (now?.record.capture !== undefined && now.record.capture.activeAt === c.activeAt && now.record.capture.result === undefined) {
        const merged: AlertRecord = { ...now.record, capture: { ...now.record.capture, result } };
        try {
          this.watch.note(key, merged, await this.kv.update(key, encoder.encode(JSON.stringify(merged)), now.revision));
        } catch (error) {
          this.log.warn({ key, err: error }, 'could not store the capture result in the alert record');
        }
      }
    }
    try {
      await this.transitions.publishCapture(record, c, result, Date.now());
    } catch (error) {
      this.log.warn({ key, err: error }, 'publishing the capture event failed');
    }
  }

  async #write(record: AlertRecord, c: AlertCapture): Promise<CaptureResult> {
    const file = join(this.o.dir, record.host, `${record.rule}-${stamp(c.firedAt)}.parquet`);
    // host and rule are tokens (parseRecord); the file must stay in the directory all the same
    if (!resolve(file).startsWith(resolve(this.o.dir) + sep)) return { since: c.since, until: c.until, error: `refused: ${file} is outside ${this.o.dir}` };
    try {
      mkdirSync(join(this.o.dir, record.host), { recursive: true });
      const rec = await runRecord(
        {
          natsUrl: '',
          bus: this.bus,
          hosts: record.host,
          intervalMs: this.o.intervalMs,
          durationMs: undefined,
          output: file,
          replay: { stream: this.o.stream, sinceNs: BigInt(c.since) * 1_000_000n, untilNs: BigInt(c.until) * 1_000_000n },
        },
        this.log.child({ component: 'capture' }),
      );
      const s = await rec.done;
      if (!s.written) {
        this.failures++;
        return { since: c.since, until: c.until, error: `the stream held no frames of ${record.host} from ${new Date(c.since).toISOString()} to ${new Date(c.until).toISOString()}` };
      }
      this.captures++;
      this.log.info({ file: resolve(file), rows: s.rows, bytes: s.bytes }, `incident captured: ${record.rule} on ${record.host}`);
      return { file: resolve(file), since: c.since, until: c.until, rows: s.rows, bytes: s.bytes };
    } catch (error) {
      this.failures++;
      const reason = (error as Error).message;
      this.log.warn({ file, err: error }, `incident capture failed: ${reason}`);
      return { since: c.since, until: c.until, error: reason };
    }
  }
}
