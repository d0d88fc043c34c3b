import { connect } from 'node:net';
import test from 'ava';
import { BodyBuffers } from '../../src/exporter/body-buffers.js';
import { buildExporterApp } from '../../src/exporter/app.js';
import { ExporterState } from '../../src/exporter/state.js';
import { silentLogger } from '../../src/log/logger.js';
import { emptySkipStats } from '../../src/sources/checks.js';
import { m, makeDescriptor, makeFrame } from '../helpers/frames.js';

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

test('a slow reply is sent whole while later renders are made: its memory is not written until it ends', async (t) => {
  // a body of several MiB, more than the socket takes at once
  const series: [string, string[]][] = [];
  for (let i = 0; i < 60; i++) series.push(['network_device_bytes', [`eth${i}`, 'receive']]);
  const net = makeDescriptor('network_interfaces', { network_device_bytes: m('counter', 'bytes', ['device', 'direction'], 'Bytes') }, series);
  const hosts = 1500;
  const state = new ExporterState({ intervalNs: 1_000_000_000n });
  const app = buildExporterApp({
    state, skipped: emptySkipStats(), intervalMs: 1000, forgetAfterMs: 600_000, render: {},
    pacing: { reuseFactor: 0 }, processMetrics: false, log: silentLogger(),
  });
  let seq = 0;
  /** every series of every host at `value` */
  const publish = (value: number): void => {
    seq++;
    const endNs = BigInt(Date.now()) * 1_000_000n;
    for (let h = 0; h < hosts; h++) {
      state.ingest(makeFrame({ host: `h${h}`, descriptor: net, seq, instance: 3, endNs, values: series.map(() => value) }));
    }
  };
  const valuesIn = (body: string): Map<string, number> => {
    const counts = new Map<string, number>();
    for (const line of body.split('\n')) {
      if (!line.startsWith('network_device_bytes_total{')) continue;
      const v = line.slice(line.lastIndexOf(' ') + 1);
      counts.set(v, (counts.get(v) ?? 0) + 1);
    }
    return counts;
  };
  try {
    await app.listen({ host: '127.0.0.1', port: 0 });
    const { port } = app.server.address() as { port: number };
    const url = `http://127.0.0.1:${port}/metrics`;
    publish(111);
    // a client that reads the first chunk, then nothing until later renders are done
    const slow = connect(port, '127.0.0.1');
    const chunks: Buffer[] = [];
    const firstChunk = new Promise<void>((resolve) => {
      slow.once('data', (c: Buffer) => {
        chunks.push(c);
        slow.pause();
        resolve();
      });
    });
    const ended = new Promise<void>((resolve) => slow.on('end', resolve));
    slow.write(`GET /metrics HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n`);
    await firstChunk;
    // later renders, each with other figures, while the slow reply waits
    let fastBody = '';
    for (const value of [222, 333, 444]) {
      publish(value);
      fastBody = await (await fetch(url)).text();
      t.deepEqual([...valuesIn(fastBody)], [[String(value), hosts * series.length]], `render of ${value}`);
    }
    t.true(fastBody.length > 4_000_000, `a body of ${fastBody.length} bytes`);
    slow.on('data', (c: Buffer) => chunks.push(c));
    slow.resume();
    await ended;
    const raw = Buffer.concat(chunks).toString('latin1');
    const body = raw.slice(raw.indexOf('\r\n\r\n') + 4);
    t.deepEqual([...valuesIn(body)], [['111', hosts * series.length]], 'the slow reply holds its own render only');
    // with no reply left, the next renders write into memory used before and stay right
    for (const value of [555, 666]) {
      publish(value);
      t.deepEqual([...valuesIn(await (await fetch(url)).text())], [[String(value), hosts * series.length]]);
    }
  } finally {
    await app.close();
  }
});
