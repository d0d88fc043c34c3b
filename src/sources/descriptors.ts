import type { KV } from '@nats-io/kv';
import type { Logger } from 'pino';
import { hashDescriptorJson, parseDescriptor } from '../frame/descriptor.js';
import type { Descriptor } from '../frame/types.js';
import { descriptorKey } from '../bus/subjects.js';
import type { DescriptorLookup } from './checks.js';

const HASH = /^[0-9a-f]{16}$/;
/** a host token as subjects carry it (hostToken) */
const HOST = /^[a-z0-9_-]+$/;
/** Misses remembered at most (frames with ever new unknown hashes must not grow memory). */
const MAX_MISSING = 10_000;
/**
 * Descriptors kept at most, by their JSON size (cgroup churn makes new ones, each up to
 * megabytes with thousands of cgroups). The one kept longest goes first; if it is still in use
 * it is read from the bucket again.
 */
const MAX_KNOWN_BYTES = 256 * 1024 * 1024;

/**
 * Resolves descriptor hashes through the KV bucket with a cache. Descriptors
 * are immutable, so a hit never expires; a miss is remembered for a while so
 * a stream of frames with an unknown hash does not hammer the bucket.
 */
export class DescriptorCache implements DescriptorLookup {
  private readonly known = new Map<string, { readonly d: Descriptor; readonly bytes: number }>();
  private knownBytes = 0;
  private readonly missing = new Map<string, number>();
  private readonly pending = new Map<string, Promise<Descriptor | undefined>>();

  constructor(
    private readonly kv: KV,
    private readonly log: Logger,
    private readonly retryMissingMs = 2000,
  ) {}

  get size(): number {
    return this.known.size;
  }

  /** The descriptor of a hash already found, without I/O. */
  peek(hash: string): Descriptor | undefined {
    return this.known.get(hash)?.d;
  }

  /**
   * The descriptor of a frame of `host`, or undefined when the hash is
   * malformed, absent from the bucket or its content is invalid. Looked up
   * under the host's own key (descriptorKey), then under the bare hash (the
   * layout of older agents). Content is checked against the hash, so a
   * descriptor found once serves every host that uses the same hash.
   */
  async resolve(hash: string, host: string): Promise<Descriptor | undefined> {
    const hit = this.known.get(hash);
    if (hit !== undefined) return hit.d;
    if (!HASH.test(hash) || !HOST.test(host)) return undefined;
    const key = descriptorKey(host, hash);
    const missedAt = this.missing.get(key);
    if (missedAt !== undefined && Date.now() - missedAt < this.retryMissingMs) return undefined;
    let p = this.pending.get(key);
    if (p === undefined) {
      p = this.fetch(hash, key).finally(() => this.pending.delete(key));
      this.pending.set(key, p);
    }
    return p;
  }

  private async fetch(hash: string, key: string): Promise<Descriptor | undefined> {
    let entry;
    try {
      entry = (await this.kv.get(key)) ?? (await this.kv.get(hash));
    } catch (error) {
      // NATS away or slow: not an answer about the descriptor, so not remembered as a miss
      this.log.warn({ descriptor: key, err: error }, 'descriptor lookup failed; the next frame asks again');
      return undefined;
    }
    try {
      if (entry === null || entry.value.length === 0) {
        this.#miss(key);
        return undefined;
      }
      const json = entry.string();
      if (hashDescriptorJson(json) !== hash) throw new Error('content does not match its hash');
      const d = parseDescriptor(json);
      this.#keep(hash, d, json.length);
      this.missing.delete(key);
      return d;
    } catch (error) {
      this.log.warn({ descriptor: key, err: error }, 'unusable descriptor');
      this.#miss(key);
      return undefined;
    }
  }

  #keep(hash: string, d: Descriptor, bytes: number): void {
    // two hosts' keys of one hash may be read at once
    if (this.known.has(hash)) return;
    this.known.set(hash, { d, bytes });
    this.knownBytes += bytes;
    for (const [oldest, entry] of this.known) {
      if (this.knownBytes <= MAX_KNOWN_BYTES || oldest === hash) break;
      this.known.delete(oldest);
      this.knownBytes -= entry.bytes;
    }
  }

  #miss(hash: string): void {
    this.missing.delete(hash);
    if (this.missing.size >= MAX_MISSING) {
      const oldest = this.missing.keys().next().value;
      if (oldest !== undefined) this.missing.delete(oldest);
    }
    this.missing.set(hash, Date.now());
  }
}
