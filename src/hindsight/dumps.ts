/**
 * The hindsight dumps: one at a time, in trigger order; a trigger while a
 * dump of the same file waits joins it (several queued triggers share the
 * next dump), none is lost. Each dump is a recording of a replayed window
 * (record/main.ts with a ReplaySource) over the service's own connection.
 */
import { resolve } from 'node:path';
import type { Logger } from 'pino';
import type { HindsightConfig } from '../config/hindsight.js';
import { NatsUnavailableError } from '../errors.js';
import { runRecord } from '../record/main.js';
import type { SkipStats } from '../sources/checks.js';
import type { BusLink } from '../sources/link.js';

export interface DumpResult {
  readonly output: string;
  readonly rows: number;
  readonly hosts: readonly string[];
  /** frames read from the stream, and the file's size */
  readonly frames: number;
  readonly bytes: number;
  /** false when the window held nothing of the hosts: no file was written */
  readonly written: boolean;
  /** messages of the window left out, by reason (sources/checks.ts) */
  readonly skipped: SkipStats;
  /** frames of a second agent run for a host that was live with another one, left out */
  readonly contested: number;
  readonly trigger: string;
  readonly startedAt: string;
  readonly ms: number;
}

export class DumpQueue {
  #running: Promise<DumpResult> | undefined;
  /** dumps waiting for the running one, by output file: triggers for the same file share one */
  readonly #queued = new Map<string, Promise<DumpResult>>();
  #tail: Promise<unknown> = Promise.resolve();
  #dumps = 0;
  #last: DumpResult | undefined;

  constructor(
    private readonly config: HindsightConfig,
    private readonly bus: BusLink,
    private readonly log: Logger,
  ) {}

  /** what GET /status shows of the dumps */
  state(): { dumping: boolean; queued: boolean; dumps: number; last: DumpResult | undefined } {
    return { dumping: this.#running !== undefined, queued: this.#queued.size > 0, dumps: this.#dumps, last: this.#last };
  }

  /** Writes a dump (queued behind a running one) to `output`; resolves when the file is written. */
  dump(trigger: string, output = this.config.output): Promise<DumpResult> {
    if (this.#running === undefined && this.#queued.size === 0) {
      const p = this.#start(trigger, output);
      this.#tail = p.catch(() => undefined);
      return p;
    }
    const waiting = this.#queued.get(output);
    if (waiting !== undefined) return waiting;
    const p = this.#tail.then(() => {
      this.#queued.delete(output);
      return this.#start(trigger, output);
    });
    this.#queued.set(output, p);
    this.#tail = p.catch(() => undefined);
    return p;
  }

  /** resolves when every dump asked for so far has ended */
  async idle(): Promise<void> {
    await this.#tail;
  }

  #start(trigger: string, output: string): Promise<DumpResult> {
    const p = this.#once(trigger, output).finally(() => {
      if (this.#running === p) this.#running = undefined;
    });
    this.#running = p;
    return p;
  }

  async #once(trigger: string, output: string): Promise<DumpResult> {
    const c = this.config;
    // the service's connection reconnects on its own; a request now would only wait for its timeout
    if (!this.bus.connected()) throw new NatsUnavailableError(`cannot connect to NATS at ${c.natsUrl}: the connection is down (reconnecting)`);
    const began = Date.now();
    const rec = await runRecord(
      {
        natsUrl: c.natsUrl,
        nats: c.nats,
        bus: this.bus,
        hosts: c.hosts,
        intervalMs: c.intervalMs,
        durationMs: undefined,
        output,
        replay: { stream: c.stream, sinceNs: BigInt(began - c.durationMs) * 1_000_000n, untilNs: BigInt(began) * 1_000_000n },
      },
      this.log.child({ component: 'dump' }),
    );
    const s = await rec.done;
    this.#dumps++;
    const last: DumpResult = {
      output: resolve(s.output), rows: s.rows, hosts: s.hosts, frames: s.frames, bytes: s.bytes, written: s.written,
      skipped: { ...s.skipped }, contested: s.rowStats?.contested ?? 0, trigger, startedAt: new Date(began).toISOString(), ms: Date.now() - began,
    };
    this.#last = last;
    this.log.info(last, 'dump written');
    return last;
  }
}
