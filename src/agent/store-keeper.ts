/**
 * Keeps on the server what the agent's frames need: the stream, the
 * descriptor and status buckets, and the agent's own descriptors in the
 * descriptor bucket.
 *
 * A server can come back with an empty store (the disk was lost, a new node
 * took the address): then a publish finds no stream (NoStreamError, from the
 * Publisher), no ack comes (a live subscriber took the frame), a status put
 * fails or a probe misses, and the keeper creates what is missing,
 * if this NATS user may, and puts every recent descriptor again ahead of the
 * buffered frames. A per-host user may not create them: it says so once at
 * warn level and the publisher keeps buffering within its bound until an
 * admin creates them. A bucket emptied under a running agent (purged, or
 * recreated by someone else) is found within seconds by a probe every 5 s:
 * one direct get of one of the agent's descriptors, in turn (O(1) on the
 * server, however large the fleet's bucket); a probe that misses asks for
 * the agent's keys (one stream-info request filtered to `<host>.*`) and puts
 * the missing ones again (one put in the last 2 s may still be on its way:
 * the next check looks again). No put per frame.
 */
import type { JetStreamManager } from '@nats-io/jetstream';
import type { KV } from '@nats-io/kv';
import type { NatsConnection } from '@nats-io/nats-core';
import type { Logger } from 'pino';
import { isNoStreamAnswer, isStreamNotFound, permissionViolation } from '../bus/api-errors.js';
import { bucketStream, descriptorBucket, statusBucket } from '../bus/kv.js';
import { ensureStream, type StreamOptions } from '../bus/stream.js';
import { DESCRIPTOR_BUCKET, STATUS_BUCKET, descriptorKey } from '../bus/subjects.js';
import { NatsPermissionError, NoStreamError } from '../errors.js';
import { everyOnTheClock } from './clock.js';

export interface StoreKeeperOptions {
  readonly nc: NatsConnection;
  readonly jsm: JetStreamManager;
  /** the agent's host token */
  readonly host: string;
  readonly stream: StreamOptions;
  readonly descriptorTtlMs: number;
  readonly statusTtlMs: number;
  /** the agent's logger: the keeper logs as component store (and stream, kv while it provisions) */
  readonly log: Logger;
  /** whether a put of a descriptor is still queued in the publisher (Publisher.isDescriptorQueued) */
  readonly queued?: (hash: string) => boolean;
  /** how often the agent's descriptors are checked in the bucket */
  readonly checkEveryMs?: number;
}

/** What the keeper needs of the agent: its recent descriptors, and a way to put them again. */
export interface DescriptorOwner {
  recentDescriptors(): readonly { readonly hash: string; readonly putAt: number }[];
  reputDescriptors(only?: ReadonlySet<string>): number;
}

export interface Provisioned {
  readonly descriptors: KV;
  readonly status: KV;
}

/** one direct get (a request: inbox, timer, header parse) per probe; every 5 s, not 2, for the agent's CPU at 1 Hz (issue 19) */
const CHECK_EVERY_MS = 5000;
/** repairs are tried at most this often (the publisher retries every second while the stream is gone) */
const REPAIR_EVERY_MS = 2000;
/** a descriptor queued this recently may still be on its way: not missing yet */
const IN_FLIGHT_MS = 2000;
/** missing descriptors are said at warn level at most this often */
const MISSING_SAID_EVERY_MS = 10 * 60_000;

/** A bucket this user may not create: say who should. */
function explainRefusal(error: unknown): never {
  const refused = permissionViolation(error);
  if (refused !== undefined) {
    throw new NatsPermissionError(
      `cannot open the KV buckets (${refused.message}): a per-host user cannot create them; create them once with rezolus setup as the admin user (see rezolus nats-auth)`,
      { cause: error },
    );
  }
  throw error;
}

export class StoreKeeper {
  private owner: DescriptorOwner | undefined;
  private stopTimer: (() => void) | undefined;
  private repairing: Promise<void> | undefined;
  private lastRepairAt = 0;
  /** names found missing in the current episode (undefined: none open) */
  private episode: string[] | undefined;
  private refusalSaid = false;
  private statusFailing = false;
  private checking = false;
  /** which recent descriptor the next probe reads */
  private probeIndex = 0;
  /**
   * A full check found descriptors missing that were put too recently to call missing (in flight):
   * the next check is a full check again, not a probe. Without it, one put just before the bucket was
   * emptied was found only when the round-robin probe reached it (5 s per descriptor).
   */
  private recheck = false;
  private descriptors: KV | undefined;
  /**
   * When missing descriptors were last said at warn level. A time, not a flag a probe hit clears: in a
   * bucket too small for all of them, probes alternate between hits and misses and a flag would
   * warn every few seconds.
   */
  private descriptorsMissingSaidAt = 0;
  private readonly log: Logger;

  constructor(private readonly o: StoreKeeperOptions) {
    this.log = o.log.child({ component: 'store' });
  }

  /** Creates or checks the stream and both buckets (at start; refusals are thrown with the reason). */
  async provision(): Promise<Provisioned> {
    await ensureStream(this.o.jsm, this.o.stream, this.o.log.child({ component: 'stream' }));
    const replicas = this.o.stream.replicas;
    const descriptors = await descriptorBucket(this.o.nc, { ttlMs: this.o.descriptorTtlMs, replicas }, this.o.log.child({ component: 'kv' })).catch(explainRefusal);
    const status = await statusBucket(this.o.nc, { ttlMs: this.o.statusTtlMs, replicas }, this.o.log.child({ component: 'kv' })).catch(explainRefusal);
    this.descriptors = descriptors;
    return { descriptors, status };
  }

  /** Starts the periodic descriptor check for the agent's descriptors. */
  watch(owner: DescriptorOwner): void {
    this.owner = owner;
    this.stopTimer?.();
    // on the clock, 4 ms past the boundary: in the wake-up of the agent's tick (clock.ts)
    this.stopTimer = everyOnTheClock(this.o.checkEveryMs ?? CHECK_EVERY_MS, 4, () => void this.check());
  }

  stop(): void {
    this.stopTimer?.();
    this.stopTimer = undefined;
  }

  /**
   * A publish failed and is retried (the Publisher's onRetry): no stream took
   * it, or no ack came (the server is away, or a live subscriber took the
   * frame where no stream did: then no "no responders" comes back either).
   * Either way, at most every 2 s, ask whether the stream and buckets are there.
   */
  publishFailed(error: unknown): void {
    this.repair(error instanceof NoStreamError ? `a publish to ${error.subject} found no stream` : `publishes are not acked (${String(error)})`);
  }

  /** A status put failed: said once at warn level; a missing bucket is repaired. */
  statusFailed(error: unknown): void {
    if (!this.statusFailing) this.log.warn({ err: error }, 'status not written to the status bucket; retrying every 10 s');
    this.statusFailing = true;
    if (isNoStreamAnswer(error)) this.repair(`the status bucket ${STATUS_BUCKET} did not take a put`);
  }

  statusWritten(): void {
    if (this.statusFailing) this.log.info('status written again');
    this.statusFailing = false;
  }

  /**
   * At most every 2 s: creates what is missing. `settings`: when nothing is
   * missing, check the settings of what is there too (a bucket recreated by
   * hand may allow rollups again: provision turns them off, or says once that
   * this user may not).
   */
  private repair(why: string, settings = false): void {
    if (this.repairing !== undefined || Date.now() - this.lastRepairAt < REPAIR_EVERY_MS) return;
    this.lastRepairAt = Date.now();
    this.repairing = this.#repair(why, settings)
      .catch((error: unknown) => this.log.debug({ err: error }, 'store check failed; tried again on the next failure'))
      .finally(() => {
        this.repairing = undefined;
      });
  }

  async #repair(why: string, settings: boolean): Promise<void> {
    const missing = await this.missing();
    if (missing.length === 0) {
      this.closeEpisode();
      if (settings) await this.provision().catch((error: unknown) => this.log.debug({ err: error }, 'settings check failed'));
      return;
    }
    const first = this.episode === undefined;
    this.episode = missing;
    // Once per episode, whatever happens next: the descriptors go ahead of the buffered frames,
    // so that when the bucket exists again (made here or by an admin) they are stored first.
    const reput = first ? this.reput() : 0;
    try {
      await this.provision();
    } catch (error) {
      if (!this.refusalSaid) {
        this.log.warn(
          { missing, why, err: error },
          `${missing.join(', ')} missing on the server (its store was lost or replaced?) and this NATS user may not create ${missing.length > 1 ? 'them' : 'it'}: ` +
            'buffering frames (up to [buffer] max_bytes) until the admin creates them: run rezolus setup with the rezolus-admin credentials ' +
            'and the agents\' config (README: Security)',
        );
        this.refusalSaid = true;
      }
      return;
    }
    this.log.warn({ recreated: missing, why, descriptors_put_again: reput }, `${missing.join(', ')} missing on the server (its store was lost or replaced?): recreated; flushing the buffer`);
    this.closeEpisode();
  }

  private closeEpisode(): void {
    if (this.episode !== undefined && this.refusalSaid) this.log.info({ found: this.episode }, 'the stream and buckets are there again; flushing the buffer');
    this.episode = undefined;
    this.refusalSaid = false;
  }

  /** The stream and buckets the server does not have (a failed lookup other than "not found" is thrown). */
  private async missing(): Promise<string[]> {
    const names = [this.o.stream.name, bucketStream(DESCRIPTOR_BUCKET), bucketStream(STATUS_BUCKET)];
    const out: string[] = [];
    for (const name of names) {
      try {
        await this.o.jsm.streams.info(name);
      } catch (error) {
        if (!isStreamNotFound(error)) throw error;
        out.push(name);
      }
    }
    return out;
  }

  /** Every 5 s: one of the agent's descriptors, in turn, read back; a miss starts a full check. */
  async check(): Promise<void> {
    if (this.owner === undefined || this.descriptors === undefined || this.checking) return;
    if (this.episode !== undefined) {
      this.repair('checking whether the stream and buckets are back');
      return;
    }
    if (this.recheck) {
      await this.fullCheck();
      return;
    }
    const settled = this.owner.recentDescriptors().filter((d) => Date.now() - d.putAt > IN_FLIGHT_MS);
    const probe = settled[this.probeIndex++ % Math.max(1, settled.length)];
    if (probe === undefined) return;
    this.checking = true;
    try {
      const entry = await this.descriptors.get(descriptorKey(this.o.host, probe.hash));
      if (entry !== null && entry.value.length > 0) return;
    } catch (error) {
      // no answer (the bus is away or slow, or the bucket is gone and a per-host user's request
      // through its service import times out): the full check asks whether the bucket is there
      this.log.debug({ err: error }, 'descriptor probe failed');
    } finally {
      this.checking = false;
    }
    await this.fullCheck();
    // someone purged or recreated the bucket: check its settings too (rollups)
    this.repair('a descriptor of this agent was missing from the bucket', true);
  }

  /** Puts recent descriptors again (all, or those in `only`), except those still queued. */
  private reput(only?: ReadonlySet<string>): number {
    if (this.owner === undefined) return 0;
    const hashes = new Set(
      this.owner.recentDescriptors().map((d) => d.hash).filter((h) => (only === undefined || only.has(h)) && this.o.queued?.(h) !== true),
    );
    return hashes.size === 0 ? 0 : this.owner.reputDescriptors(hashes);
  }

  /**
   * Are the agent's recent descriptors in the bucket? One stream-info
   * request filtered to `<host>.*` answers for all of them; those missing
   * are put again. A missing bucket starts a repair.
   */
  private async fullCheck(): Promise<void> {
    if (this.owner === undefined || this.checking) return;
    this.checking = true;
    try {
      const prefix = `$KV.${DESCRIPTOR_BUCKET}.${descriptorKey(this.o.host, '')}`;
      let subjects: Record<string, number>;
      try {
        const info = await this.o.jsm.streams.info(bucketStream(DESCRIPTOR_BUCKET), { subjects_filter: `${prefix}*` });
        subjects = info.state.subjects ?? {};
      } catch (error) {
        if (isStreamNotFound(error)) this.repair(`the descriptor bucket ${DESCRIPTOR_BUCKET} is gone`);
        else this.log.debug({ err: error }, 'descriptor check failed; tried again later');
        return;
      }
      const now = Date.now();
      const absent = this.owner.recentDescriptors().filter((d) => subjects[`${prefix}${d.hash}`] === undefined);
      const gone = new Set(absent.filter((d) => now - d.putAt > IN_FLIGHT_MS).map((d) => d.hash));
      this.recheck = gone.size < absent.length;
      const n = this.reput(gone);
      if (n === 0) return;
      if (now - this.descriptorsMissingSaidAt > MISSING_SAID_EVERY_MS) {
        this.log.warn({ descriptors: n }, 'descriptors of this agent were missing from the descriptor bucket (purged or recreated?): put again');
        this.descriptorsMissingSaidAt = now;
      } else {
        this.log.debug({ descriptors: n }, 'descriptors still missing: put again');
      }
    } finally {
      this.checking = false;
    }
  }
}
