/**
 * `rezolus view http://host:4241`: one agent's HTTP snapshot polled (as
 * upstream's viewer does), its frames kept for a bounded window.
 */
import type { Logger } from 'pino';
import { PollSource } from '../sources/poll.js';
import { VERSION } from '../version.js';
import type { HostSummary, ViewInfo } from './api.js';
import { NotFoundError, seriesOfTracks, type ViewerData } from './data.js';
import { HostTracks } from './frames.js';
import { summarize } from './summary.js';
import type { SeriesInfo, Track } from './track.js';

export interface AgentDataOptions {
  readonly url: string;
  readonly intervalMs: number;
  readonly windowMs: number;
  readonly token?: string | undefined;
}

export class AgentData implements ViewerData {
  readonly #source: PollSource;
  readonly #hosts = new Map<string, HostTracks>();
  readonly #sweep: NodeJS.Timeout;
  readonly #started = Date.now();

  constructor(
    private readonly o: AgentDataOptions,
    private readonly log: Logger,
  ) {
    this.#source = new PollSource({ url: o.url, intervalMs: o.intervalMs, token: o.token }, log.child({ component: 'poll' }));
    this.#sweep = setInterval(() => {
      const before = Date.now() - o.windowMs;
      for (const h of this.#hosts.values()) h.trim(before);
    }, 5000);
    this.#sweep.unref();
  }

  async start(): Promise<void> {
    await this.#source.start((frame) => {
      let h = this.#hosts.get(frame.host);
      if (h === undefined) {
        h = new HostTracks(frame.host);
        this.#hosts.set(frame.host, h);
      }
      h.add(frame);
    });
    this.#source.done.catch((error: unknown) => this.log.error({ err: error }, 'polling the agent ended'));
  }

  info(): ViewInfo {
    const error = this.#source.lastError();
    const now = Date.now();
    return {
      mode: 'agent',
      sources: [{ name: 'agent', location: this.o.url, start: Math.max(this.#started, now - this.o.windowMs), end: now, hosts: [...this.#hosts.keys()].sort() }],
      windowMs: this.o.windowMs,
      canSave: false,
      version: VERSION,
      ...(error === undefined ? {} : { problem: `the agent at ${this.o.url} does not answer: ${error}` }),
    };
  }

  async hosts(source: string | undefined): Promise<HostSummary[]> {
    this.#check(source);
    return [...this.#hosts.values()].map((h) => summarize(h.host, h.lastMs, h.tracks()));
  }

  async series(source: string | undefined, host: string): Promise<readonly SeriesInfo[]> {
    return seriesOfTracks(await this.tracks(source, host));
  }

  tracks(source: string | undefined, host: string): Promise<readonly Track[]> {
    this.#check(source);
    const h = this.#hosts.get(host);
    if (h === undefined) return Promise.reject(new NotFoundError(`no frames of host "${host}" from ${this.o.url} (hosts: ${[...this.#hosts.keys()].join(', ') || 'none yet'})`));
    return Promise.resolve(h.tracks());
  }

  async close(): Promise<void> {
    clearInterval(this.#sweep);
    this.#source.stop();
    await this.#source.done.catch(() => undefined);
  }

  #check(source: string | undefined): void {
    if (source !== undefined && source !== 'agent') throw new NotFoundError(`no source "${source}" (this viewer shows the agent at ${this.o.url})`);
  }
}
