/**
 * The poll source (record http://agent): a frame whose descriptor a snapshot
 * lacks is not marked seen, so the next snapshot that carries the descriptor
 * records it (the poller before FrameSource did so; found by a review). A
 * recording's window holds D / I rows however late the first answer or the
 * timers come, and ends by itself (poll-window.ts).
 */
import test from 'ava';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { pack } from 'msgpackr';
import { encodeFrame } from '../../src/frame/codec.js';
import { silentLogger } from '../../src/log/logger.js';
import { PollSource } from '../../src/sources/poll.js';
import { until } from '../helpers/until.js';
import { DESCRIPTOR, SAMPLER, frameOf } from './frames.js';

const MS = 1_000_000n;

/** An agent's /metrics/binary whose first answer lacks the frame's descriptor (the second has it). */
async function fakeAgent(): Promise<{ url: string; server: Server; served: () => number }> {
  const f = frameOf('h1', 1);
  let n = 0;
  const server = createServer((_req, res) => {
    n++;
    const descriptors = n === 1 ? {} : { [DESCRIPTOR.hash]: DESCRIPTOR.json };
    res.writeHead(200, { 'content-type': 'application/msgpack' }).end(pack({ v: 1, host: 'h1', frames: [f.data], descriptors }));
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  return { url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`, server, served: () => n };
}

async function untilServed(served: () => number, n: number): Promise<void> {
  for (let i = 0; i < 200 && served() < n; i++) await new Promise((r) => setTimeout(r, 25));
  // let the last answer be handled
  await new Promise((r) => setTimeout(r, 100));
}

test('a frame whose descriptor the first snapshot lacks is recorded from the next one, once, and not counted as skipped', async (t) => {
  const agent = await fakeAgent();
  const seqs: number[] = [];
  const source = new PollSource({ url: agent.url, intervalMs: 100 }, silentLogger());
  await source.start((f) => void seqs.push(f.seq));
  await untilServed(agent.served, 3);
  source.stop();
  await source.done;
  agent.server.close();
  t.deepEqual(seqs, [1], 'recorded once its descriptor arrived');
  t.is(source.skipped.unknownDescriptor, 0, 'not counted as skipped');
});

test('an endpoint that streams without end is cut off at the snapshot bound and named; the poller goes on', async (t) => {
  let stop = false;
  const server = createServer((_req, res) => {
    res.writeHead(200, { 'content-type': 'application/msgpack' });
    const chunk = Buffer.alloc(1024 * 1024, 0xc0);
    const more = (): void => {
      while (!stop && res.write(chunk));
      if (!stop) res.once('drain', more);
      else res.end();
    };
    more();
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  // a 10 s interval gives each poll 20 s (max(2 s, 2 × interval)) to read the 64 MiB: with a 200 ms
  // interval a busy machine's poll timed out first, and the stop's clean end of a second poll's
  // stream then left a msgpack error as the last one
  const source = new PollSource({ url, intervalMs: 10_000 }, silentLogger());
  await source.start(() => undefined);
  for (let i = 0; i < 800 && source.lastError() === undefined; i++) await new Promise((r) => setTimeout(r, 50));
  stop = true;
  source.stop();
  await source.done;
  server.closeAllConnections();
  await new Promise((r) => server.close(r));
  t.regex(source.lastError() ?? '', /sent more than a snapshot's 67108864 bytes: not an agent\?/);
});

/**
 * An agent whose sampler refreshes on the wall clock's whole `intervalMs` (a
 * frame ends 1 ms after its tick), serving its newest frame and the ones
 * published since (five at most, as src/agent/snapshot.ts). Its first answer
 * comes `firstLateMs` late, the snapshot made then.
 */
async function tickingAgent(intervalMs: number, firstLateMs: number): Promise<{ url: string; server: Server }> {
  const k0 = Math.floor(Date.now() / intervalMs) - 10;
  const frameAt = (k: number): Uint8Array => {
    const begin = BigInt(k * intervalMs) * MS;
    return encodeFrame({ host: 'h1', sampler: SAMPLER, instance: 1, seq: k - k0, beginNs: begin, endNs: begin + MS, descriptor: DESCRIPTOR.hash }, [k]);
  };
  let answers = 0;
  const server = createServer((req, res) => {
    const answer = (): void => {
      const nowMs = Date.now();
      const q = new URL(req.url ?? '/', 'http://agent').searchParams.get('since');
      const since = q === null ? undefined : BigInt(q);
      const newest = Math.floor((nowMs - 1) / intervalMs);
      const frames: Uint8Array[] = [];
      for (let k = newest - 4; k <= newest; k++) if (k === newest || (since !== undefined && (BigInt(k * intervalMs) + 1n) * MS > since)) frames.push(frameAt(k));
      res.writeHead(200, { 'content-type': 'application/msgpack' }).end(pack({ v: 1, host: 'h1', at: BigInt(nowMs) * MS, frames, descriptors: { [DESCRIPTOR.hash]: DESCRIPTOR.json } }));
    };
    if (answers++ === 0) setTimeout(answer, firstLateMs);
    else answer();
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  return { url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`, server };
}

/** Records `durationMs` at `intervalMs` from the agent until the source ends by itself (false when it does not within 30 s); the row times of the frames. */
async function recordRows(url: string, intervalMs: number, durationMs: number, meanwhile?: () => void): Promise<{ rows: number[]; ended: boolean }> {
  const rows = new Set<number>();
  const source = new PollSource({ url, intervalMs, window: { durationMs } }, silentLogger());
  await source.start((f) => void rows.add(Math.ceil(Number(f.endNs / MS) / intervalMs) * intervalMs));
  meanwhile?.();
  let ended = false;
  void source.done.then(() => (ended = true));
  const byItself = await until(() => ended, 30_000);
  source.stop();
  await source.done;
  return { rows: [...rows].sort((a, b) => a - b), ended: byItself };
}

test('a recording whose first answer comes after the agent\'s next refresh: D / I rows, none missing, and it ends by itself', async (t) => {
  const agent = await tickingAgent(100, 150);
  const { rows, ended } = await recordRows(agent.url, 100, 1000);
  agent.server.close();
  t.true(ended, 'the source ended at the window\'s end without a stop()');
  t.is(rows.length, 10, `rows ${rows.join(', ')}`);
  t.deepEqual(rows.map((r) => r - (rows[0] as number)), Array.from({ length: 10 }, (_, i) => i * 100), 'one row after the other');
});

test('a recording whose process is blocked across its end (every timer late): D / I rows, none missing', async (t) => {
  const agent = await tickingAgent(100, 0);
  // the event loop is blocked for 2.5 intervals from just before the window's end
  const block = (): void => {
    setTimeout(() => {
      const until = Date.now() + 250;
      while (Date.now() < until);
    }, 950);
  };
  const { rows, ended } = await recordRows(agent.url, 100, 1000, block);
  agent.server.close();
  t.true(ended);
  t.is(rows.length, 10, `rows ${rows.join(', ')}`);
  t.deepEqual(rows.map((r) => r - (rows[0] as number)), Array.from({ length: 10 }, (_, i) => i * 100));
});
