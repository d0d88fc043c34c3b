/**
 * The agent's latest snapshot over HTTP (the Rezolus agent's port, 4241):
 * GET /metrics/binary is msgpack `{ v, host, at, frames: [frame bytes as
 * published], descriptors: { hash: descriptor JSON } }` and GET
 * /metrics/json the same frames decoded. A recorder can poll it without
 * NATS. It is a tee in front of the publisher: whatever goes to the bus is
 * what is served.
 *
 * `frames` holds the newest frame of every sampler. `at` is when the
 * snapshot was made (unix ns, the agent's clock); `?since=<an earlier
 * snapshot's at>` adds, before each sampler's newest frame, the frames it
 * published after that snapshot (at most RECENT_FRAMES per sampler, older
 * first). The agent samples on its own clock and a poller's request can
 * come late (a busy machine): with `since`, a late poll still gets every
 * frame, where the newest alone would have lost the ones in between (a
 * missing row in a recording). Frames carry their run and seq, so a frame
 * served twice is taken once.
 */
import { createServer, type Server } from 'node:http';
import { pack } from 'msgpackr';
import type { Logger } from 'pino';
import { roomFor } from '../frame/bundle-bytes.js';
import { decodeFrame } from '../frame/codec.js';
import { instanceHex } from '../frame/types.js';
import type { FrameSink, Tick } from './agent.js';
import { nowNs } from './clock.js';
import { bearerMatches } from '../security/bearer.js';

export const SNAPSHOT_VERSION = 1;

/** Frames kept per sampler for `?since`: a poll up to this many intervals late loses none. */
export const RECENT_FRAMES = 5;

/**
 * A sampler's last RECENT_FRAMES frames, copied into memory written again
 * for each next frame: after its first ticks the sink makes nothing new per
 * frame (a new copy and entry each tick, kept RECENT_FRAMES ticks, outlived
 * V8's young generation and waited in the old space for a full GC).
 */
class Recent {
  /** slot -> the memory its frame is copied into */
  readonly #rooms: Buffer[] = [];
  /** slot -> its frame's length */
  readonly #lengths = new Uint32Array(RECENT_FRAMES);
  /** slot -> when its frame was published, unix ns (the agent's clock; after the frame's end) */
  readonly #atNs = new BigUint64Array(RECENT_FRAMES);
  /** the oldest frame's slot */
  #first = 0;
  #count = 0;

  add(data: Uint8Array, atNs: bigint): void {
    let slot: number;
    if (this.#count < RECENT_FRAMES) slot = (this.#first + this.#count++) % RECENT_FRAMES;
    else {
      slot = this.#first;
      this.#first = (this.#first + 1) % RECENT_FRAMES;
    }
    let room = this.#rooms[slot];
    if (room === undefined || room.byteLength < data.byteLength) {
      room = Buffer.allocUnsafeSlow(roomFor(data.byteLength));
      this.#rooms[slot] = room;
    }
    room.set(data);
    this.#lengths[slot] = data.byteLength;
    this.#atNs[slot] = atNs;
  }

  /** Views of the newest frame, after those published after `sinceNs` (older first): each is written over RECENT_FRAMES frames later. */
  collect(into: Uint8Array[], sinceNs: bigint | undefined): void {
    for (let i = 0; i < this.#count; i++) {
      const slot = (this.#first + i) % RECENT_FRAMES;
      if (i === this.#count - 1 || (sinceNs !== undefined && (this.#atNs[slot] as bigint) > sinceNs)) {
        into.push((this.#rooms[slot] as Buffer).subarray(0, this.#lengths[slot]));
      }
    }
  }
}

export interface Snapshot {
  /** when it was made, unix ns */
  readonly at: bigint;
  /** the newest frame of every sampler, after the ones published since `since` when asked */
  readonly frames: Uint8Array[];
  readonly descriptors: Record<string, string>;
}

export class SnapshotSink implements FrameSink {
  readonly #next: FrameSink;
  /** subject -> its last RECENT_FRAMES frames */
  readonly #recent = new Map<string, Recent>();
  /** descriptor hash -> JSON */
  readonly #descriptors = new Map<string, string>();

  constructor(next: FrameSink) {
    this.#next = next;
  }

  get stats() {
    return this.#next.stats;
  }

  maxPayload(): number | undefined {
    return this.#next.maxPayload?.();
  }

  publishFrame(subject: string, data: Uint8Array, idPrefix: string, seq: number): void {
    let recent = this.#recent.get(subject);
    if (recent === undefined) {
      recent = new Recent();
      this.#recent.set(subject, recent);
    }
    // a copy, since the frame itself is given back to the encoder once bundled (frame/frame-slabs.ts)
    recent.add(data, nowNs());
    this.#next.publishFrame(subject, data, idPrefix, seq);
  }

  putDescriptor(key: string, value: string, urgent = false): void {
    this.#descriptors.set(key, value);
    this.#next.putDescriptor(key, value, urgent);
  }

  endTick(tick?: Tick): void {
    this.#next.endTick?.(tick);
  }

  /** The newest frame of every sampler, after the frames published since `sinceNs` (older first), and the descriptors they use. */
  snapshot(sinceNs?: bigint): Snapshot {
    const at = nowNs();
    const frames: Uint8Array[] = [];
    for (const recent of this.#recent.values()) recent.collect(frames, sinceNs);
    const descriptors: Record<string, string> = {};
    for (const f of frames) {
      const hash = decodeFrame(f).descriptor;
      const json = this.#descriptors.get(hash);
      if (json !== undefined) descriptors[hash] = json;
    }
    return { at, frames, descriptors };
  }
}

/** `?since=<unix ns>`; undefined when absent or not a number. */
function sinceParam(url: string | undefined): bigint | undefined {
  const q = new URL(url ?? '/', 'http://agent').searchParams.get('since');
  return q !== null && /^\d{1,20}$/.test(q) ? BigInt(q) : undefined;
}

function jsonSafe(_key: string, value: unknown): unknown {
  return typeof value === 'bigint' ? value.toString() : value;
}

/** Serves the snapshot; resolves with the server once it listens. With `listen.token`, requests need `Authorization: Bearer <token>`. */
export async function serveSnapshot(sink: SnapshotSink, host: string, listen: { host: string; port: number; token?: string }, log: Logger): Promise<Server> {
  const server = createServer((req, res) => {
    if (listen.token !== undefined && !bearerMatches(req.headers.authorization, listen.token)) {
      res.writeHead(401, { 'content-type': 'text/plain', 'www-authenticate': 'Bearer' }).end('Authorization: Bearer <token> required\n');
      return;
    }
    const path = (req.url ?? '/').split('?')[0];
    if (req.method !== 'GET' || (path !== '/metrics/binary' && path !== '/metrics/json')) {
      res.writeHead(404, { 'content-type': 'text/plain' }).end('GET /metrics/binary or /metrics/json\n');
      return;
    }
    const { at, frames, descriptors } = sink.snapshot(path === '/metrics/binary' ? sinceParam(req.url) : undefined);
    if (path === '/metrics/binary') {
      res.writeHead(200, { 'content-type': 'application/msgpack' }).end(pack({ v: SNAPSHOT_VERSION, host, at, frames, descriptors }));
      return;
    }
    const decoded = frames.map((f) => {
      const raw = decodeFrame(f);
      return { sampler: raw.sampler, instance: instanceHex(raw.instance), seq: raw.seq, begin_ns: raw.beginNs, end_ns: raw.endNs, descriptor: raw.descriptor, values: raw.values };
    });
    const parsed = Object.fromEntries(Object.entries(descriptors).map(([k, v]) => [k, JSON.parse(v) as unknown]));
    res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify({ v: SNAPSHOT_VERSION, host, at, frames: decoded, descriptors: parsed }, jsonSafe));
  });
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(listen.port, listen.host, () => resolve());
  });
  log.info({ address: server.address() }, 'serving the latest snapshot on /metrics/binary and /metrics/json');
  return server;
}
