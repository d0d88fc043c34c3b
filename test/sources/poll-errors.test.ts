/**
 * What the poll source (record http://agent, view http://agent) says when the
 * agent does not answer: the cause under fetch's "fetch failed" (refused,
 * with the address; a name that does not resolve; no answer in time), in the
 * log when polling first fails, again when the cause changes, and when the
 * agent answers again; lastError() (the summary's "last poll") has it too.
 */
import test from 'ava';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { pack } from 'msgpackr';
import pino from 'pino';
import { fetchFailure } from '../../src/errors.js';
import { PollSource } from '../../src/sources/poll.js';
import { freePort } from '../../src/up/nats-server.js';
import { until } from '../helpers/until.js';
import { DESCRIPTOR, frameOf } from './frames.js';

async function failureOf(url: string, timeoutMs = 2000): Promise<string> {
  const ac = new AbortController();
  const timer = setTimeout(() => ac.abort(new DOMException('late', 'TimeoutError')), timeoutMs);
  try {
    await fetch(url, { signal: ac.signal });
    return 'answered';
  } catch (error) {
    return fetchFailure(error, timeoutMs);
  } finally {
    clearTimeout(timer);
  }
}

test('fetchFailure names the cause: refused with the address, a name that does not resolve, no answer in time', async (t) => {
  const port = await freePort();
  t.is(await failureOf(`http://127.0.0.1:${port}/`), `connect ECONNREFUSED 127.0.0.1:${port}`);
  t.regex(await failureOf('http://nosuchhost.invalid:4241/'), /^getaddrinfo (ENOTFOUND|EAI_AGAIN) nosuchhost\.invalid$/);
  const silent = createServer(() => undefined);
  await new Promise<void>((r) => silent.listen(0, '127.0.0.1', r));
  t.is(await failureOf(`http://127.0.0.1:${(silent.address() as AddressInfo).port}/`, 300), 'no answer within 300 ms');
  silent.closeAllConnections();
  silent.close();
  // localhost with ::1 and 127.0.0.1: Node tries both and fails with an AggregateError whose message is empty
  const both = new TypeError('fetch failed', {
    cause: Object.assign(new AggregateError([new Error('connect ECONNREFUSED ::1:4241'), new Error('connect ECONNREFUSED 127.0.0.1:4241')], ''), { code: 'ECONNREFUSED' }),
  });
  t.is(fetchFailure(both), 'connect ECONNREFUSED ::1:4241; connect ECONNREFUSED 127.0.0.1:4241');
  t.is(fetchFailure(new Error('http://a:4241/metrics/binary answered 503')), 'http://a:4241/metrics/binary answered 503', 'our own errors as they are');
});

interface Line {
  level: number;
  msg: string;
}

/** An agent's /metrics/binary on `port`, answering with a frame while `answer.now`, else never answering (a hung agent). */
async function agentOn(port: number, answer: { now: boolean }): Promise<Server> {
  let seq = 0;
  const server = createServer((_req, res) => {
    if (!answer.now) return;
    const f = frameOf('h1', ++seq);
    res.writeHead(200, { 'content-type': 'application/msgpack' }).end(pack({ v: 1, host: 'h1', frames: [f.data], descriptors: { [DESCRIPTOR.hash]: DESCRIPTOR.json } }));
  });
  await new Promise<void>((r) => server.listen(port, '127.0.0.1', r));
  return server;
}

async function close(server: Server): Promise<void> {
  server.closeAllConnections();
  await new Promise((r) => server.close(r));
}

test('the poll source says why polling fails: once, again when the cause changes, and when the agent answers again', async (t) => {
  const port = await freePort();
  const lines: Line[] = [];
  const log = pino({ level: 'info' }, { write: (s: string) => void lines.push(JSON.parse(s) as Line) });
  const source = new PollSource({ url: `http://127.0.0.1:${port}`, intervalMs: 100 }, log);
  let frames = 0;
  let server = await agentOn(port, { now: true });
  await source.start(() => void frames++);
  try {
    t.true(await until(() => frames >= 2, 20_000), 'polls the agent');
    await close(server);
    t.true(await until(() => source.lastError() !== undefined, 20_000));
    t.is(source.lastError(), `connect ECONNREFUSED 127.0.0.1:${port}`);
    // later polls fail the same way: not logged again
    await new Promise((r) => setTimeout(r, 500));
    // then it hangs (its connections are never cut: a cut one would be a third cause), then it answers
    const answer = { now: false };
    server = await agentOn(port, answer);
    t.true(await until(() => source.lastError()?.startsWith('no answer') === true, 20_000));
    t.is(source.lastError(), 'no answer within 2000 ms');
    answer.now = true;
    const before = frames;
    t.true(await until(() => frames > before && source.lastError() === undefined, 20_000), 'polls again');
  } finally {
    source.stop();
    await source.done;
    await close(server);
  }
  const said = lines.filter((l) => l.level >= 30).map((l) => l.msg);
  const target = `http://127.0.0.1:${port}/metrics/binary`;
  t.deepEqual(said, [
    `polling ${target} failed: connect ECONNREFUSED 127.0.0.1:${port}; retrying every interval`,
    `polling ${target} failed: no answer within 2000 ms; retrying every interval`,
    said[2] ?? 'a line when it answers again',
  ]);
  t.regex(said[2] ?? '', /^the agent answers again after \d+ failed polls$/);
});
