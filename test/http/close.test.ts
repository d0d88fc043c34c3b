import test from 'ava';
import Fastify from 'fastify';
import { Agent, get } from 'node:http';
import { connect, type Socket } from 'node:net';
import { Readable } from 'node:stream';
import { closeHttpApp } from '../../src/http/close.js';
import { within } from '../helpers/until.js';

/** An app whose response never ends (a stream that stops giving), and a client that has its first bytes. */
async function stuckClient(): Promise<{ app: ReturnType<typeof Fastify>; client: Socket }> {
  const app = Fastify();
  app.get('/big', async (_req, reply) => {
    const body = new Readable({ read() {} });
    body.push('the first bytes, then nothing');
    return reply.send(body);
  });
  await app.listen({ host: '127.0.0.1', port: 0 });
  const { port } = app.server.address() as { port: number };
  const client = connect(port, '127.0.0.1');
  await new Promise<void>((r) => client.once('connect', () => r()));
  client.pause();
  client.write('GET /big HTTP/1.1\r\nHost: x\r\n\r\n');
  // the response is under way: its first bytes sit in the client's receive buffer
  await new Promise<void>((r) => client.once('readable', () => r()));
  return { app, client };
}

test('a response that never ends holds a plain close, not closeHttpApp: it ends after the grace', async (t) => {
  const plain = await stuckClient();
  t.is(await within(plain.app.close().then(() => 'closed'), 1500, 'still open'), 'still open', 'Fastify waits on the response under way');
  plain.client.destroy();
  await plain.app.close();

  const ours = await stuckClient();
  const started = Date.now();
  t.is(await within(closeHttpApp(ours.app, 200).then(() => 'closed'), 20_000, 'still open'), 'closed');
  t.log(`closed ${Date.now() - started} ms after the call, grace 200 ms`);
  t.false(ours.app.server.listening);
  ours.client.destroy();
});

test('closeHttpApp with nothing under way closes at once and leaves no timer behind', async (t) => {
  const app = Fastify();
  app.get('/', async () => 'ok');
  await app.listen({ host: '127.0.0.1', port: 0 });
  const { port } = app.server.address() as { port: number };
  t.is(await (await fetch(`http://127.0.0.1:${port}/`)).text(), 'ok');
  const before = process.getActiveResourcesInfo().filter((r) => r === 'Timeout').length;
  await closeHttpApp(app, 60_000);
  t.false(app.server.listening);
  t.true(process.getActiveResourcesInfo().filter((r) => r === 'Timeout').length <= before, 'the grace timer was cleared');
});

test('a response under way on a keep-alive connection ends the close when it ends, not at the grace', async (t) => {
  // Prometheus scrapes over keep-alive: the response ends within the grace, and its connection is then idle
  const app = Fastify();
  let arrived!: () => void;
  const seen = new Promise<void>((r) => {
    arrived = r;
  });
  app.get('/slow', async () => {
    arrived();
    await new Promise((r) => setTimeout(r, 300));
    return 'done';
  });
  await app.listen({ host: '127.0.0.1', port: 0 });
  const { port } = app.server.address() as { port: number };
  const agent = new Agent({ keepAlive: true });
  t.teardown(() => agent.destroy());
  const body = new Promise<string>((resolve, reject) => {
    get({ host: '127.0.0.1', port, path: '/slow', agent }, (res) => {
      let text = '';
      res.setEncoding('utf8');
      res.on('data', (d: string) => {
        text += d;
      });
      res.on('end', () => resolve(`${res.statusCode} ${text}`));
    }).on('error', reject);
  });
  await seen;
  const started = Date.now();
  const closed = closeHttpApp(app, 10_000).then(() => Date.now() - started);
  t.is(await body, '200 done', 'the response under way completes');
  const took = await within(closed, 20_000, Number.POSITIVE_INFINITY);
  t.log(`closed ${took} ms after the call, the response took 300 ms, grace 10 s`);
  t.true(took < 3000, `closed after ${took} ms`);
});
