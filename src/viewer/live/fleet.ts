/**
 * The fleet page's live data: every host's frames, keeping only the few
 * metrics a host's row shows (summary.ts) for the last minute, so memory
 * grows with hosts, not with uptime or series. The last half minute of the
 * stream is replayed at start so the page has every host at once.
 */
import type { Logger } from 'pino';
import type { Frame } from '../../frame/types.js';
import type { BusLink } from '../../sources/link.js';
import { LiveSource } from '../../sources/live.js';
import { ReplaySource } from '../../sources/replay.js';
import type { HostSummary } from '../api.js';
import { HostTracks } from '../frames.js';
import { SUMMARY_METRICS, summarize } from '../summary.js';

/** What a host's row is computed from. */
const KEEP_MS = 60_000;
/** Series of one host the fleet page holds at most (a 1024-CPU host has about 10 000 cpu_usage series). */
export const FLEET_MAX_SERIES = 20_000;
/** Hosts the fleet page lists at most (20 000 one-sampler hosts took 210 MB and 250 ms a GET /hosts); frames of others are counted in refusedHosts. */
export const FLEET_MAX_HOSTS = 10_000;
/** The stream's recent past read at start. */
const PRIMER_MS = 30_000;

export class FleetView {
  readonly #hosts = new Map<string, HostTracks>();
  readonly #live: LiveSource;
  #primer: ReplaySource | undefined;
  /** frames taken in, for the page's header and the benchmarks */
  frames = 0;
  /** frames of hosts left out because FLEET_MAX_HOSTS were listed, and when the last one came (unix ms) */
  refusedHosts = 0;
  refusedAtMs = 0;

  constructor(
    private readonly link: BusLink,
    private readonly stream: string,
    private readonly hosts: string,
    /** a host without frames for this long leaves the page */
    private readonly forgetMs: number,
    private readonly log: Logger,
  ) {
    this.#live = new LiveSource({ bus: link, hosts, waitForBucket: true }, log);
  }

  /** Follows the fleet; resolves once frames flow (the descriptor bucket exists). */
  async start(): Promise<void> {
    await this.#live.start((f) => this.#take(f));
    const nowNs = BigInt(Date.now()) * 1_000_000n;
    const primer = new ReplaySource({ bus: this.link, stream: this.stream, hosts: this.hosts, sinceNs: nowNs - BigInt(PRIMER_MS) * 1_000_000n, untilNs: nowNs }, this.log);
    this.#primer = primer;
    primer.start((f) => this.#take(f)).then(
      () => primer.done,
    ).catch((error: unknown) => this.log.warn({ err: error }, 'could not read the recent past of the fleet; hosts appear as their frames arrive'));
  }

  #take(frame: Frame): void {
    this.frames++;
    const h = this.#hosts.get(frame.host);
    if (h !== undefined) h.add(frame);
    else if (this.#hosts.size >= FLEET_MAX_HOSTS) {
      // a publisher inventing host names would grow the page and its memory without end (until forgetMs)
      this.refusedHosts++;
      this.refusedAtMs = Date.now();
    } else {
      // a host whose first frame is not taken (stamped far ahead) gets no row
      const fresh = new HostTracks(frame.host, SUMMARY_METRICS, FLEET_MAX_SERIES);
      if (fresh.add(frame)) this.#hosts.set(frame.host, fresh);
    }
  }

  /** Drops what no row needs any more: samples older than a minute, hosts silent for forgetMs. */
  trim(nowMs: number): void {
    for (const [host, h] of this.#hosts) {
      if (nowMs - h.lastMs > this.forgetMs) this.#hosts.delete(host);
      else h.trim(nowMs - KEEP_MS);
    }
  }

  hostNames(): string[] {
    return [...this.#hosts.keys()].sort();
  }

  /** the series of `host` held for its row (0 for a host not listed) */
  seriesCount(host: string): number {
    return this.#hosts.get(host)?.seriesCount() ?? 0;
  }

  has(host: string): boolean {
    return this.#hosts.has(host);
  }

  summaries(): HostSummary[] {
    return [...this.#hosts.values()].map((h) => summarize(h.host, h.lastMs, h.tracks())).sort((a, b) => (a.host < b.host ? -1 : 1));
  }

  get following(): boolean {
    return this.#live.following;
  }

  async stop(): Promise<void> {
    this.#live.stop();
    this.#primer?.stop();
    await Promise.allSettled([this.#live.done, this.#primer?.done]);
  }
}
