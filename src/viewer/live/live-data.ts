/**
 * `rezolus view` on the live bus: the fleet page from FleetView, a host's
 * page from a HostWindow opened on first look and closed when nobody has
 * looked for a while (at most MAX_OPEN at once), "save this window" through
 * the hindsight path (a replayed window recorded to Parquet).
 */
import { existsSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { jetstreamManager } from '@nats-io/jetstream';
import type { Logger } from 'pino';
import { hostToken } from '../../bus/subjects.js';
import { BadRequestError, RezolusError } from '../../errors.js';
import { runRecord } from '../../record/main.js';
import type { BusLink } from '../../sources/link.js';
import { VERSION } from '../../version.js';
import type { AlertsResult, HostSummary, SaveRequest, SaveResult, ViewInfo } from '../api.js';
import { NotFoundError, seriesOfTracks, type ViewerData } from '../data.js';
import type { SeriesInfo, Track } from '../track.js';
import { AlertFeed } from './alert-feed.js';
import { FLEET_MAX_HOSTS, FleetView } from './fleet.js';
import { HostWindow } from './host-window.js';

export interface LiveDataOptions {
  readonly link: BusLink;
  readonly natsUrl: string;
  readonly stream: string;
  /** `*` or names and globs */
  readonly hosts: string;
  /** how far back a host page reaches; undefined = the stream's max_age */
  readonly windowMs: number | undefined;
  /** where "save this window" writes */
  readonly saveDir: string;
  /** row interval of a saved file */
  readonly saveIntervalMs: number;
}

/** Host windows held at once: each holds every series of a host for the window (a 7th host's page closes the least recently used). */
const MAX_OPEN = 6;
/** A host window nobody asked for this long is closed. */
const IDLE_MS = 120_000;
const SWEEP_MS = 5000;

export class LiveData implements ViewerData {
  readonly fleet: FleetView;
  /** the window's alert events (REZOLUS_ALERTS), for the charts' markers */
  readonly alertFeed: AlertFeed;
  readonly #windows = new Map<string, HostWindow>();
  readonly #sweep: NodeJS.Timeout;
  #windowMs = 15 * 60_000;
  /** the stream's max_age in ms (0: unlimited, or not read yet) */
  #streamKeepsMs = 0;
  /** when NATS last went away or came back (unix ms; 0: never) */
  #outageAtMs = 0;
  /** files being written by a save */
  readonly #saving = new Set<string>();
  /** unix ms of the oldest message the stream holds (a young stream has less than the window) */
  #streamFirstMs = 0;

  constructor(
    private readonly o: LiveDataOptions,
    private readonly log: Logger,
  ) {
    this.fleet = new FleetView(o.link, o.stream, o.hosts, o.windowMs ?? this.#windowMs, log.child({ component: 'fleet' }));
    this.alertFeed = new AlertFeed(o.link, o.windowMs ?? this.#windowMs, o.hosts, log.child({ component: 'alerts' }));
    this.#sweep = setInterval(() => this.#tidy(), SWEEP_MS);
    this.#sweep.unref();
    void (async () => {
      for await (const s of o.link.nc.status()) if (s.type === 'disconnect' || s.type === 'reconnect') this.#outageAtMs = Date.now();
    })();
  }

  /** Reads the window from the stream, then follows the fleet (in the background while no agent has made the bucket). */
  async start(): Promise<void> {
    const read = await this.#readStreamStart();
    if (this.o.windowMs !== undefined) this.#windowMs = this.o.windowMs;
    else if (this.#streamKeepsMs > 0) this.#windowMs = this.#streamKeepsMs;
    else if (read !== undefined) this.log.info({ err: read, stream: this.o.stream }, 'stream not readable yet; host pages reach back 15 min');
    this.alertFeed.setWindow(this.#windowMs);
    this.alertFeed.poke();
    this.fleet.start().catch((error: unknown) => this.log.error({ err: error }, 'cannot follow the fleet'));
  }

  /** Reads the stream's max_age and oldest message (at start, then every sweep); returns the error when it cannot. */
  async #readStreamStart(): Promise<unknown> {
    try {
      const info = await (await jetstreamManager(this.o.link.nc)).streams.info(this.o.stream);
      this.#streamKeepsMs = Math.round(info.config.max_age / 1e6);
      const first = Date.parse(info.state.first_ts);
      if (info.state.messages > 0 && Number.isFinite(first)) this.#streamFirstMs = first;
      return undefined;
    } catch (error) {
      // not there yet: the window's start stays now − window
      return error;
    }
  }

  /**
   * How far back the stream can be replayed: the window, or the stream's
   * max_age when --window is longer (a replay from before it is refused, and
   * every host page showed only what came live).
   */
  #lookbackMs(): number {
    return this.#streamKeepsMs > 0 ? Math.min(this.#windowMs, this.#streamKeepsMs) : this.#windowMs;
  }

  info(): ViewInfo {
    const hosts = this.fleet.hostNames();
    const now = Date.now();
    let problem: string | undefined;
    if (!this.o.link.connected()) problem = `NATS at ${this.o.natsUrl} does not answer; reconnecting`;
    else if (!this.fleet.following) problem = 'waiting for the first agent (no descriptor bucket on this NATS yet)';
    else if (now - this.fleet.refusedAtMs < 60_000) problem = `more than ${FLEET_MAX_HOSTS} hosts publish: the ones beyond are not listed (${this.fleet.refusedHosts} of their frames left out); narrow them with --hosts`;
    return {
      mode: 'live',
      sources: [{ name: 'live', location: this.o.natsUrl, start: Math.max(this.#streamFirstMs, now - this.#windowMs), end: now, hosts }],
      windowMs: this.#windowMs,
      canSave: true,
      version: VERSION,
      ...(problem === undefined ? {} : { problem }),
    };
  }

  /** the hosts whose window is held (at most MAX_OPEN) */
  openHosts(): string[] {
    return [...this.#windows.keys()].sort();
  }

  async hosts(source: string | undefined): Promise<HostSummary[]> {
    this.#checkSource(source);
    return this.fleet.summaries().map((h) => ({ ...h, alertsFiring: this.alertFeed.firing(h.host) }));
  }

  alerts(host: string | undefined, from: number, to: number): AlertsResult {
    return this.alertFeed.range(host, from, to);
  }

  async series(source: string | undefined, host: string): Promise<readonly SeriesInfo[]> {
    return seriesOfTracks(await this.tracks(source, host));
  }

  async tracks(source: string | undefined, host: string): Promise<readonly Track[]> {
    this.#checkSource(source);
    let w = this.#windows.get(host);
    if (w === undefined) {
      if (!this.fleet.has(host)) throw new NotFoundError(`no frames of host "${host}" on the bus in the last minutes (hosts: ${this.fleet.hostNames().join(', ') || 'none yet'})`);
      // a window a request waits on is never the one closed: that request would answer from an emptied window
      if (this.#windows.size >= MAX_OPEN && !this.#closeLeastUsed()) {
        throw new RezolusError('NOT_READY', `${MAX_OPEN} host pages are being read from the stream at once; try "${host}" again in a moment`);
      }
      w = new HostWindow(host, this.o.link, this.o.stream, this.#windowMs, this.log.child({ component: 'host-window', host }), this.#lookbackMs());
      this.#windows.set(host, w);
    }
    w.lastUsed = Date.now();
    w.waiting++;
    try {
      await w.ready;
    } finally {
      w.waiting--;
    }
    if (w.replayError !== undefined && (!this.o.link.connected() || this.#outageAtMs >= w.openedAt)) {
      // opened while NATS was away (or went or came back): the host's history could not be read. Held, the
      // window would show only what comes live for as long as the page is open; dropped, the next request reads it again.
      if (this.#windows.get(host) === w) {
        this.#windows.delete(host);
        void w.close();
      }
      throw new RezolusError('NOT_READY', `NATS at ${this.o.natsUrl} does not answer: the window of "${host}" cannot be read from the stream yet`);
    }
    return w.tracks.tracks();
  }

  async save(request: SaveRequest): Promise<SaveResult> {
    const hosts = request.hosts.map((h) => hostToken(h));
    if (hosts.length === 0) throw new BadRequestError('save needs at least one host');
    if (!(request.end > request.start)) throw new BadRequestError('save needs a time range with end after start');
    const now = Date.now();
    if (request.start < now - this.#lookbackMs()) throw new BadRequestError(`the stream keeps only the last ${Math.round(this.#lookbackMs() / 1000)} s; the range starts before that`);
    if (request.start > now) throw new BadRequestError('the range starts after now: there is nothing in it yet');
    const stamp = new Date(request.start).toISOString().replace(/[:.]/g, '-');
    const output = this.#freeName(`view-${hosts.length === 1 ? hosts[0] : `${hosts.length}-hosts`}-${stamp}`);
    try {
      return await this.#record(hosts, request, now, output);
    } finally {
      this.#saving.delete(output);
    }
  }

  /**
   * A path in the save directory that no file and no save under way has:
   * `<base>.parquet`, else `<base>-2.parquet`, … (two saves of one range
   * for other hosts, or the same save twice, overwrote the first file).
   */
  #freeName(base: string): string {
    for (let n = 1; ; n++) {
      const output = resolve(join(this.o.saveDir, `${base}${n === 1 ? '' : `-${n}`}.parquet`));
      if (this.#saving.has(output) || existsSync(output)) continue;
      this.#saving.add(output);
      return output;
    }
  }

  async #record(hosts: readonly string[], request: SaveRequest, now: number, output: string): Promise<SaveResult> {
    const rec = await runRecord(
      {
        natsUrl: this.o.natsUrl,
        bus: this.o.link,
        hosts: hosts.join(','),
        intervalMs: this.o.saveIntervalMs,
        durationMs: undefined,
        output,
        replay: { stream: this.o.stream, sinceNs: BigInt(Math.floor(request.start)) * 1_000_000n, untilNs: BigInt(Math.ceil(Math.min(request.end, now))) * 1_000_000n },
      },
      this.log.child({ component: 'save' }),
    );
    const s = await rec.done;
    if (!s.written) throw new NotFoundError(`nothing to save: the stream has no frames of ${hosts.join(', ')} in that range`);
    this.log.info({ output: s.output, rows: s.rows, frames: s.frames, rowStats: s.rowStats, skipped: s.skipped }, 'window saved');
    return { path: resolve(s.output), rows: s.rows };
  }

  async close(): Promise<void> {
    clearInterval(this.#sweep);
    await Promise.allSettled([this.alertFeed.stop(), this.fleet.stop(), ...[...this.#windows.values()].map((w) => w.close())]);
    this.#windows.clear();
  }

  #checkSource(source: string | undefined): void {
    if (source !== undefined && source !== 'live') throw new NotFoundError(`no source "${source}" (this viewer shows the live bus)`);
  }

  #tidy(): void {
    const now = Date.now();
    void this.#readStreamStart();
    this.alertFeed.poke(now);
    this.fleet.trim(now);
    for (const [host, w] of this.#windows) {
      if (now - w.lastUsed > IDLE_MS && w.waiting === 0) {
        this.#windows.delete(host);
        void w.close();
      } else w.trim(now);
    }
  }

  /** Closes the least recently used window no request waits on; false when every one has a request waiting. */
  #closeLeastUsed(): boolean {
    let oldest: [string, HostWindow] | undefined;
    for (const e of this.#windows) if (e[1].waiting === 0 && (oldest === undefined || e[1].lastUsed < oldest[1].lastUsed)) oldest = e;
    if (oldest === undefined) return false;
    this.#windows.delete(oldest[0]);
    void oldest[1].close();
    return true;
  }
}
