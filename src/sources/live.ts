/**
 * A live source: core subscriptions of a host selection (`*` for the fleet,
 * or names and globs such as `web-*`), from now on, no history. Each message
 * goes through the FrameIntake to the handler; a slow handler cannot hold
 * the server back (core NATS drops for a slow consumer), so its promise is
 * not waited for.
 */
import type { Subscription } from '@nats-io/nats-core';
import type { Logger } from 'pino';
import { hostFilterSubjects, hostSelector, subjectHostToken } from '../bus/subjects.js';
import { emptySkipStats, type SkipStats } from './checks.js';
import { FrameIntake } from './intake.js';
import { linkFor, type BusLink, type BusRef } from './link.js';
import type { FrameHandler, FrameSource } from './source.js';

export interface LiveOptions {
  readonly bus: BusRef;
  /** `*`, or a comma-separated list of host names and globs */
  readonly hosts: string;
  /** wait for the descriptor bucket while no agent has made it (a service); false: a missing bucket fails start() */
  readonly waitForBucket?: boolean;
  /** count skips into this object (one a consumer already shows) instead of a new one */
  readonly skipped?: SkipStats;
}

export class LiveSource implements FrameSource {
  readonly kind = 'live';
  readonly skipped: SkipStats;
  /** the subjects subscribed to */
  readonly subjects: readonly string[];
  readonly done: Promise<void>;
  #link: BusLink | undefined;
  #owned = false;
  #subs: Subscription[] = [];
  #intake: FrameIntake | undefined;
  #stopped = false;
  #end!: () => void;

  constructor(
    private readonly options: LiveOptions,
    private readonly log: Logger,
  ) {
    this.subjects = hostFilterSubjects(options.hosts);
    this.skipped = options.skipped ?? emptySkipStats();
    this.done = new Promise<void>((resolve) => (this.#end = resolve)).then(() => this.#close());
  }

  /** whether frames are followed (start() found the descriptors and subscribed) */
  get following(): boolean {
    return this.#subs.length > 0;
  }

  async start(onFrame: FrameHandler): Promise<void> {
    const { link, owned } = await linkFor(this.options.bus, this.log);
    if (this.#stopped) {
      // stopped while connecting: done has resolved without this link
      if (owned) await link.close();
      return;
    }
    this.#link = link;
    this.#owned = owned;
    try {
      const cache = this.options.waitForBucket === true ? await link.descriptorsWhenThere(() => this.#stopped) : await link.descriptors();
      if (cache === undefined || this.#stopped) return;
      const intake = new FrameIntake(cache, this.skipped, onFrame, this.log);
      this.#intake = intake;
      const selected = hostSelector(this.options.hosts);
      const handlerFailed = (error: unknown): void => this.log.error({ err: error }, 'frame handling failed');
      this.#subs = this.subjects.map((subject) =>
        link.nc.subscribe(subject, {
          callback: (error, msg) => {
            if (error !== null) {
              this.log.error({ subject, err: error }, 'subscription error');
              return;
            }
            if (selected !== undefined && !selected(subjectHostToken(msg.subject))) return;
            try {
              intake.take(msg.subject, msg.data)?.catch(handlerFailed);
            } catch (e) {
              handlerFailed(e);
            }
          },
        }),
      );
    } catch (error) {
      this.stop();
      throw error;
    }
  }

  stop(): void {
    this.#stopped = true;
    // a frame whose descriptor lookup is still running is not handed over after done
    this.#intake?.close();
    for (const s of this.#subs) s.unsubscribe();
    this.#subs = [];
    this.#end();
  }

  /** whether the connection is up now (false before start) */
  connected(): boolean {
    return this.#link?.connected() ?? false;
  }

  async #close(): Promise<void> {
    if (this.#owned) await this.#link?.close();
  }
}
