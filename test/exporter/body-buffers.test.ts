import { connect, type Socket } from 'node:net';
import test from 'ava';
import { BodyBuffers } from '../../src/exporter/body-buffers.js';
import { buildExporterApp } from '../../src/exporter/app.js';
import { ExporterState } from '../../src/exporter/state.js';
import { silentLogger } from '../../src/log/logger.js';
import { emptySkipStats } from '../../src/sources/checks.js';
import { m, makeDescriptor, makeFrame } from '../helpers/frames.js';
import { until } from '../helpers/until.js';

test('memory is written again only after its last reader is done', (t) => {
  const b = new BodyBuffers();
  const first = b.take(1000);
  t.is(first.length, 1000);
  b.hold(first);
  b.hold(first);
  b.done(first);
  const second = b.take(1000);
  t.not(second.buffer, first.buffer, 'one reader left: new memory');
  b.done(first);
  const third = b.take(900);
  t.is(third.buffer, first.buffer, 'no reader left: the same memory');
  t.is(third.length, 900);
  t.is(b.reused, 1);
  // the spare is only used for a body it holds, and not one under half its size
  b.hold(third);
  b.done(third);
  t.not(b.take(2000).buffer, first.buffer, 'too small');
  b.hold(third);
  b.done(third);
  t.not(b.take(100).buffer, first.buffer, 'far too large');
});

test('memory taken is never handed out twice, and memory read again is no longer spare', (t) => {
  const b = new BodyBuffers();
  const a = b.take(1000);
  b.hold(a);
  b.done(a);
  t.is(b.take(1000).buffer, a.buffer, 'the spare');
  t.not(b.take(1000).buffer, a.buffer, 'taken twice without a done');
  b.hold(a);
  b.done(a); // spare now
  b.hold(a); // read again (the pacer serves it once more)
  t.not(b.take(1000).buffer, a.buffer, 'held again: not spare');
  b.done(a);
  t.is(b.take(1000).buffer, a.buffer);
});

test('a slow reply is sent whole while later renders are made: its memory is not written until it ends', async (t) => {
  // a body of several MiB, more than the socket takes at once
  const fleet = bigFleet(1500);
  const app = buildExporterApp({
    state: fleet.state, skipped: emptySkipStats(), intervalMs: 1000, forgetAfterMs: 600_000, render: {},
    pacing: { reuseFactor: 0 }, processMetrics: false, log: silentLogger(),
  });
  try {
    await app.listen({ host: '127.0.0.1', port: 0 });
    const { port } = app.server.address() as { port: number };
    const url = `http://127.0.0.1:${port}/metrics`;
    fleet.publish(111);
    // a client that reads the first chunk, then nothing until later renders are done
    const slow = await slowGet(port);
    // later renders, each with other figures, while the slow reply waits
    let fastBody = '';
    for (const value of [222, 333, 444]) {
      fleet.publish(value);
      fastBody = await (await fetch(url)).text();
      t.deepEqual(fleet.values(fastBody), [[String(value), fleet.lines]], `render of ${value}`);
    }
    t.true(fastBody.length > 4_000_000, `a body of ${fastBody.length} bytes`);
    t.deepEqual(fleet.values(await slow.rest()), [['111', fleet.lines]], 'the slow reply holds its own render only');
    // with no reply left, the next renders write into memory used before and stay right
    for (const value of [555, 666]) {
      fleet.publish(value);
      t.deepEqual(fleet.values(await (await fetch(url)).text()), [[String(value), fleet.lines]]);
    }
  } finally {
    await app.close();
  }
});

/** A state of `hosts` hosts × 60 counters, each at the value last published: bodies of several MiB. */
function bigFleet(hosts: number) {
  const series: [string, string[]][] = [];
  for (let i = 0; i < 60; i++) series.push(['network_device_bytes', [`eth${i}`, 'receive']]);
  const net = makeDescriptor('network_interfaces', { network_device_bytes: m('counter', 'bytes', ['device', 'direction'], 'Bytes') }, series);
  const state = new ExporterState({ intervalNs: 1_000_000_000n });
  let seq = 0;
  const publish = (value: number): void => {
    seq++;
    const endNs = BigInt(Date.now()) * 1_000_000n;
    for (let h = 0; h < hosts; h++) state.ingest(makeFrame({ host: `h${h}`, descriptor: net, seq, instance: 3, endNs, values: series.map(() => value) }));
  };
  /** value → sample lines with it */
  const values = (body: string): [string, number][] => {
    const counts = new Map<string, number>();
    for (const line of body.split('\n')) {
      if (!line.startsWith('network_device_bytes_total{')) continue;
      const value = line.slice(line.lastIndexOf(' ') + 1);
      counts.set(value, (counts.get(value) ?? 0) + 1);
    }
    return [...counts];
  };
  return { state, publish, values, lines: hosts * series.length };
}

/** A fleet of `hosts` with one frame each, and the exporter app of it without render pacing, its bodies in `bodies`. */
function unpacedFleet(hosts: number): { bodies: BodyBuffers; app: ReturnType<typeof buildExporterApp> } {
  const fleet = bigFleet(hosts);
  fleet.publish(7);
  const bodies = new BodyBuffers();
  const app = buildExporterApp({
    state: fleet.state, skipped: emptySkipStats(), intervalMs: 1000, forgetAfterMs: 600_000, render: {},
    pacing: { reuseFactor: 0 }, bodies, processMetrics: false, log: silentLogger(),
  });
  return { bodies, app };
}

/** One pipelined GET /metrics request on a kept-alive connection. */
const GET = 'GET /metrics HTTP/1.1\r\nHost: x\r\n\r\n';

/** Starts `app` on a free loopback port and opens a connection to it. */
async function listenAndConnect(app: ReturnType<typeof buildExporterApp>): Promise<Socket> {
  await app.listen({ host: '127.0.0.1', port: 0 });
  const { port } = app.server.address() as { port: number };
  const socket = connect(port, '127.0.0.1');
  await new Promise<void>((resolve, reject) => {
    socket.once('connect', () => resolve());
    socket.once('error', reject);
  });
  return socket;
}

/** A GET read up to its first chunk, then paused: `rest()` reads the remainder and gives the body. */
async function slowGet(port: number): Promise<{ rest: () => Promise<string> }> {
  const socket = connect(port, '127.0.0.1');
  const chunks: Buffer[] = [];
  await new Promise<void>((resolve) => {
    socket.once('data', (c: Buffer) => {
      chunks.push(c);
      socket.pause();
      resolve();
    });
    socket.write('GET /metrics HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n');
  });
  return {
    rest: async () => {
      const ended = new Promise<void>((resolve) => socket.on('end', resolve));
      socket.on('data', (c: Buffer) => chunks.push(c));
      socket.resume();
      await ended;
      const raw = Buffer.concat(chunks).toString('latin1');
      return raw.slice(raw.indexOf('\r\n\r\n') + 4);
    },
  };
}

test('a body the pacer serves again to a slow reply keeps its memory while a later render is made', async (t) => {
  const fleet = bigFleet(1500);
  let clock = 0;
  const bodies = new BodyBuffers();
  const app = buildExporterApp({
    state: fleet.state, skipped: emptySkipStats(), intervalMs: 1000, forgetAfterMs: 600_000, render: {},
    // every render counts as slow; the clock moves 1 ms a reading (a render takes 1 ms, so the next
    // scrape in the same instant is in its window) and when the test moves it
    pacing: { floorMs: 0, reuseFactor: 2, clock: () => clock++ }, bodies, processMetrics: false, log: silentLogger(),
  });
  try {
    await app.listen({ host: '127.0.0.1', port: 0 });
    const { port } = app.server.address() as { port: number };
    const url = `http://127.0.0.1:${port}/metrics`;
    // renders in memory used before, so that a spare exists
    for (const value of [1, 2, 3]) {
      fleet.publish(value);
      clock += 1000;
      t.deepEqual(fleet.values(await (await fetch(url)).text()), [[String(value), fleet.lines]]);
    }
    t.true(bodies.reused > 0, `renders into memory used before: ${bodies.reused}`);
    fleet.publish(100);
    clock += 1000;
    t.deepEqual(fleet.values(await (await fetch(url)).text()), [['100', fleet.lines]], 'render of 100, read whole');
    fleet.publish(200);
    const slow = await slowGet(port); // the same instant: the body of 100 again
    clock += 1000; // past the window: the next scrape renders 200
    t.deepEqual(fleet.values(await (await fetch(url)).text()), [['200', fleet.lines]]);
    fleet.publish(300);
    clock += 1000;
    t.deepEqual(fleet.values(await (await fetch(url)).text()), [['300', fleet.lines]]);
    t.deepEqual(fleet.values(await slow.rest()), [['100', fleet.lines]], 'the slow reply holds the body of 100 only');
  } finally {
    await app.close();
  }
});

test('replies queued on a pipelining connection that goes away let their bodies go', async (t) => {
  const { bodies, app } = unpacedFleet(1000);
  try {
    const socket = await listenAndConnect(app);
    await new Promise<void>((resolve) => {
      socket.once('data', () => {
        socket.pause();
        resolve();
      });
      socket.write(GET.repeat(3));
    });
    // the three renders are made while the first reply is still being sent
    await until(() => bodies.held >= 3, 10_000);
    t.is(bodies.held, 3, 'three replies hold their bodies');
    socket.destroy();
    await until(() => bodies.held === 0, 10_000);
    t.is(bodies.held, 0, 'none is held once the connection is gone');
  } finally {
    await app.close();
  }
});

test('many replies pipelined on one connection: one close listener on its socket, no listener warning, every body let go', async (t) => {
  const { bodies, app } = unpacedFleet(20);
  const warnings: string[] = [];
  const onWarning = (w: Error): void => void warnings.push(`${w.name}: ${w.message}`);
  process.on('warning', onWarning);
  try {
    const socket = await listenAndConnect(app);
    let text = '';
    const listeners: number[] = [];
    app.server.on('request', (req) => listeners.push(req.socket.listenerCount('close')));
    await new Promise<void>((resolve, reject) => {
      socket.on('data', (d: Buffer) => {
        text += d.toString('latin1');
        if ((text.match(/^HTTP\/1\.1 200/gm) ?? []).length === 15 && text.endsWith('\n')) resolve();
      });
      socket.on('error', reject);
      socket.write(GET.repeat(15));
    });
    t.is((text.match(/^HTTP\/1\.1 200/gm) ?? []).length, 15);
    socket.destroy();
    await until(() => bodies.held === 0, 10_000);
    t.is(bodies.held, 0, 'every body let go');
    await new Promise((r) => setTimeout(r, 50));
    t.deepEqual(warnings.filter((w) => w.includes('MaxListeners')), []);
    t.true(Math.max(...listeners) - Math.min(...listeners) <= 1, `close listeners on the socket as requests came: ${listeners.join(' ')}`);
  } finally {
    process.off('warning', onWarning);
    await app.close();
  }
});

test('replies queued on a pipelining connection that closed before they were sent hold no body', async (t) => {
  const { bodies, app } = unpacedFleet(20);
  // each request waits: the client is gone before any reply is sent
  app.addHook('preHandler', async () => {
    await new Promise((r) => setTimeout(r, 300));
  });
  let sent = 0;
  app.addHook('onSend', async () => {
    sent++;
  });
  try {
    const socket = await listenAndConnect(app);
    socket.write(GET.repeat(5));
    await new Promise((r) => setTimeout(r, 100));
    socket.destroy();
    // the replies are rendered and sent into the closed connection
    await until(() => sent >= 4, 10_000);
    t.true(sent >= 4, `replies sent after the close: ${sent}`);
    await new Promise((r) => setTimeout(r, 100));
    t.is(bodies.held, 0, 'no body held for a connection that is gone');
  } finally {
    await app.close();
  }
});
