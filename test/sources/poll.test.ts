/**
 * The poll source (record http://agent): a frame whose descriptor a snapshot
 * lacks is not marked seen, so the next snapshot that carries the descriptor
 * records it (the poller before FrameSource did so; found by a review).
 */
import test from 'ava';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { pack } from 'msgpackr';
import { silentLogger } from '../../src/log/logger.js';
import { PollSource } from '../../src/sources/poll.js';
import { DESCRIPTOR, frameOf } from './frames.js';

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
  const source = new PollSource({ url, intervalMs: 200 }, silentLogger());
  await source.start(() => undefined);
  for (let i = 0; i < 600 && source.lastError() === undefined; i++) await new Promise((r) => setTimeout(r, 50));
  stop = true;
  source.stop();
  await source.done;
  server.closeAllConnections();
  await new Promise((r) => server.close(r));
  t.regex(source.lastError() ?? '', /sent more than a snapshot's 67108864 bytes: not an agent\?/);
});
