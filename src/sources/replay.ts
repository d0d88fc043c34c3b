/**
 * A replay source: a past window of frames from the JetStream stream (the
 * hindsight buffer), read at the pace of the handler: an ordered consumer
 * from the window's start time, ended at its end or at the stream head, and
 * deleted when done. Messages go one at a time through the same FrameIntake
 * as live ones, so the handler sees stream order.
 */
import { DeliverPolicy, jetstream, type ConsumerMessages } from '@nats-io/jetstream';
import type { Logger } from 'pino';
import { checkLookback, consumerFilter } from '../bus/replay.js';
import { retryOnTimeout } from '../bus/retry.js';
import { subjectHostToken } from '../bus/subjects.js';
import { emptySkipStats, type SkipStats } from './checks.js';
import { FrameIntake } from './intake.js';
import { linkFor, type BusLink, type BusRef } from './link.js';
import { RunState } from './run-state.js';
import { SourceStopped, type FrameHandler, type FrameSource } from './source.js';
import { WindowEnd } from './window-end.js';

export interface ReplayOptions {
  readonly bus: BusRef;
  readonly stream: string;
  /** `*`, names or globs */
  readonly hosts: string;
  /** unix ns, inclusive */
  readonly sinceNs: bigint;
  /** unix ns, inclusive; frames stored later end the replay (unless `endInFrameTime`) */
  readonly untilNs: bigint;
  /**
   * The window in frame time instead (window-end.ts, as a recording's): frames that ended after
   * `sinceNs` and by `untilNs` (both moved down to a row time) are used however late they were stored;
   * the read starts a little before `sinceNs` and goes on past `untilNs` until every host and sampler
   * has a frame after it, or the deadline (two row intervals of `intervalNs`, at least 2 s, plus the
   * lateness seen), or the stream's head. For a recording of a past window; a view that goes on live
   * from the head does not want it.
   */
  readonly endInFrameTime?: { readonly intervalNs: bigint } | undefined;
}

export class ReplaySource implements FrameSource {
  readonly kind = 'replay';
  readonly skipped: SkipStats = emptySkipStats();
  readonly done: Promise<void>;
  /** messages of the window read so far (the selected hosts' and, with a fleet filter, the others') */
  read = 0;
  readonly #state = new RunState();
  #messages: ConsumerMessages | undefined;
  readonly #end: WindowEnd | undefined;
  /** store time of the message being handed over */
  #arrivedNs: bigint | undefined;

  constructor(
    private readonly options: ReplayOptions,
    private readonly log: Logger,
  ) {
    this.done = this.#state.done;
    const e = options.endInFrameTime;
    this.#end = e === undefined ? undefined : new WindowEnd(options.untilNs, e.intervalNs, options.sinceNs);
  }

  /** What the window left out and waited for (undefined: not in frame time), for the recording's log. */
  windowSummary(): ReturnType<WindowEnd['summary']> | undefined {
    return this.#end?.summary();
  }

  /** The handler behind the window's end: a frame that ended after it is read (its host and sampler are done) but not used. */
  #admitting(end: WindowEnd, onFrame: FrameHandler): FrameHandler {
    return (f, data) => (end.admit(f.host, f.sampler, f.endNs, this.#arrivedNs) ? onFrame(f, data) : undefined);
  }

  /** Refuses a window older than what the stream keeps (LOOKBACK), then reads it in the background. */
  async start(onFrame: FrameHandler): Promise<void> {
    if (!this.#state.beginStart()) return;
    let opened: { readonly link: BusLink; readonly owned: boolean } | undefined;
    try {
      opened = await linkFor(this.options.bus, this.log);
      await checkLookback(opened.link.nc, this.options.stream, this.options.sinceNs, BigInt(Date.now()) * 1_000_000n);
      const cache = await opened.link.descriptors();
      if (this.#state.stopped) throw new SourceStopped();
      const intake = new FrameIntake(cache, this.skipped, this.#end === undefined ? onFrame : this.#admitting(this.#end, onFrame), this.log);
      this.#state.started(this.#run(opened.link, opened.owned, intake));
    } catch (error) {
      if (opened?.owned === true) await opened.link.close();
      this.#state.started();
      if (!(error instanceof SourceStopped)) throw error;
    }
  }

  stop(): void {
    this.#state.stop();
    void this.#messages?.close();
  }

  async #run(link: BusLink, owned: boolean, intake: FrameIntake): Promise<void> {
    try {
      await this.#read(link, intake);
    } finally {
      if (owned) await link.close();
    }
  }

  async #read(link: BusLink, intake: FrameIntake): Promise<void> {
    const w = this.options;
    const { filter, pick } = consumerFilter(w.hosts);
    const consumer = await retryOnTimeout(() =>
      jetstream(link.nc).consumers.get(w.stream, {
        deliver_policy: DeliverPolicy.StartTime,
        // in frame time, from a little before the start: frames of the window an agent whose clock is ahead stored before it
        opt_start_time: new Date(Number((this.#end === undefined ? w.sinceNs : w.sinceNs - this.#end.leadNs) / 1_000_000n)).toISOString(),
        filter_subjects: filter,
        inactive_threshold: 10_000,
      }),
    );
    try {
      if (this.#state.stopped || (await consumer.info()).num_pending === 0) return;
      const messages = await consumer.consume({ max_messages: 1000 });
      this.#messages = messages;
      try {
        if (this.#state.stopped) return;
        const end = this.#end;
        for await (const m of messages) {
          const storedNs = BigInt(m.info.timestampNanos);
          if (this.#state.stopped || (end === undefined && storedNs > w.untilNs)) break;
          this.read++;
          if (pick === undefined || pick(subjectHostToken(m.subject))) {
            this.#arrivedNs = storedNs;
            const wait = intake.take(m.subject, m.data);
            if (wait !== undefined) await wait;
          }
          // in frame time: after the message, so that its own lateness moves the deadline
          if (m.info.pending === 0 || end?.overAt(storedNs) === true) break;
        }
      } finally {
        await messages.close();
      }
    } finally {
      await consumer.delete().catch(() => undefined);
    }
  }
}
