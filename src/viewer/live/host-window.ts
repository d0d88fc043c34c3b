/**
 * One host's window, opened when its page is: the stream's window of that
 * host replayed (an ordered consumer from now − window), then the host
 * followed live. Live frames that arrive while the replay runs wait and go
 * in after it, so each sampler's track only goes forward.
 */
import type { Logger } from 'pino';
import type { Frame } from '../../frame/types.js';
import type { BusLink } from '../../sources/link.js';
import { LiveSource } from '../../sources/live.js';
import { ReplaySource } from '../../sources/replay.js';
import { HostTracks } from '../frames.js';

export class HostWindow {
  readonly tracks: HostTracks;
  /** resolves once the replayed window is in */
  readonly ready: Promise<void>;
  readonly openedAt = Date.now();
  lastUsed = this.openedAt;
  /** requests waiting for this window to be ready (LiveData never closes it for another while there are) */
  waiting = 0;
  /** why the replay of the window failed, when it did (the window then holds only what came live) */
  replayError: unknown;
  readonly #live: LiveSource;
  #replay: ReplaySource | undefined;
  #waiting: Frame[] | undefined = [];
  #closed = false;

  constructor(
    readonly host: string,
    private readonly link: BusLink,
    private readonly stream: string,
    private readonly windowMs: number,
    private readonly log: Logger,
    /** how far back the replay starts (the window, unless the stream keeps less) */
    private readonly replayMs: number = windowMs,
  ) {
    this.tracks = new HostTracks(host);
    this.#live = new LiveSource({ bus: link, hosts: host, waitForBucket: true }, log);
    this.ready = this.#open();
  }

  async #open(): Promise<void> {
    await this.#live.start((frame) => {
      if (this.#waiting === undefined) this.tracks.add(frame);
      else this.#waiting.push(frame);
    });
    // closed while the live part started (the page was left, or a 7th window pushed this one out): no replay
    if (this.#closed) return;
    const nowNs = BigInt(Date.now()) * 1_000_000n;
    // until the end of this millisecond: Date.now() is whole milliseconds, and a frame stored
    // within the current one, before the subscription above, would be neither replayed nor
    // received live (a frame both replayed and received is added once: tracks refuse a time not after the last)
    const replay = new ReplaySource(
      { bus: this.link, stream: this.stream, hosts: this.host, sinceNs: nowNs - BigInt(this.replayMs) * 1_000_000n, untilNs: nowNs + 999_999n },
      this.log,
    );
    this.#replay = replay;
    try {
      await replay.start((frame) => {
        this.tracks.add(frame);
      });
      await replay.done;
    } catch (error) {
      // a window the stream cannot give (gone, refused) still leaves the live part
      this.replayError = error;
      this.log.warn({ err: error, host: this.host }, 'could not replay the window of the host; showing it from now on');
    } finally {
      const waiting = this.#waiting ?? [];
      this.#waiting = undefined;
      for (const frame of waiting) this.tracks.add(frame);
    }
  }

  trim(nowMs: number): void {
    this.tracks.trim(nowMs - this.windowMs);
  }

  async close(): Promise<void> {
    this.#closed = true;
    this.#live.stop();
    this.#replay?.stop();
    await Promise.allSettled([this.#live.done, this.#replay?.done, this.ready]);
  }
}
