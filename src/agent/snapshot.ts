/**
 * The agent's latest snapshot over HTTP (the Rezolus agent's port, 4241):
 * GET /metrics/binary is msgpack `{ v, host, frames: [frame bytes as
 * published], descriptors: { hash: descriptor JSON } }` and GET /metrics/json
 * the same frames decoded. A recorder can poll it without NATS. It is a tee
 * in front of the publisher: whatever goes to the bus is what is served.
 */
import { createServer, type Server } from 'node:http';
import { pack } from 'msgpackr';
import type { Logger } from 'pino';
import { decodeFrame } from '../frame/codec.js';
import type { FrameSink } from './agent.js';
import { bearerMatches } from '../security/bearer.js';

export const SNAPSHOT_VERSION = 1;

export class SnapshotSink implements FrameSink {
  readonly #next: FrameSink;
  /** subject -> latest frame bytes */
  readonly #latest = new Map<string, Uint8Array>();
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
    this.#latest.set(subject, data);
    this.#next.publishFrame(subject, data, idPrefix, seq);
  }

  putDescriptor(key: string, value: string, urgent = false): void {
    this.#descriptors.set(key, value);
    this.#next.putDescriptor(key, value, urgent);
  }

  /** The latest frame of every sampler and the descriptors they use. */
  snapshot(): { frames: Uint8Array[]; descriptors: Record<string, string> } {
    const frames = [...this.#latest.values()];
    const descriptors: Record<string, string> = {};
    for (const f of frames) {
      const hash = decodeFrame(f).descriptor;
      const json = this.#descriptors.get(hash);
      if (json !== undefined) descriptors[hash] = json;
    }
    return { frames, descriptors };
  }
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
    const { frames, descriptors } = sink.snapshot();
    if (path === '/metrics/binary') {
      res.writeHead(200, { 'content-type': 'application/msgpack' }).end(pack({ v: SNAPSHOT_VERSION, host, frames, descriptors }));
      return;
    }
    const decoded = frames.map((f) => {
      const raw = decodeFrame(f);
      return { sampler: raw.sampler, instance: raw.instance, seq: raw.seq, begin_ns: raw.beginNs, end_ns: raw.endNs, descriptor: raw.descriptor, values: raw.values };
    });
    const parsed = Object.fromEntries(Object.entries(descriptors).map(([k, v]) => [k, JSON.parse(v) as unknown]));
    res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify({ v: SNAPSHOT_VERSION, host, frames: decoded, descriptors: parsed }, jsonSafe));
  });
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(listen.port, listen.host, () => resolve());
  });
  log.info({ address: server.address() }, 'serving the latest snapshot on /metrics/binary and /metrics/json');
  return server;
}
