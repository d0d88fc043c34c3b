import test from 'ava';
import { spawn } from 'node:child_process';
import { createSocket } from 'node:dgram';
import { createConnection, createServer, type AddressInfo, type Server, type Socket } from 'node:net';
import { setTimeout as sleep } from 'node:timers/promises';
import { reasonLabels } from '../../src/samplers/network/drops/sampler.js';
import { count, KernelHarness, num, sumOf, window } from '../helpers/kernel.js';

// The network and TCP BPF samplers against loopback traffic made by this
// process: every packet on lo is both transmitted and received.

const SAMPLERS = ['network_traffic', 'network_drops', 'tcp_connect_latency', 'tcp_packet_latency', 'tcp_receive', 'tcp_retransmit'];

let k: KernelHarness;
test.before(async () => {
  k = await KernelHarness.start(SAMPLERS);
});
test.after.always(async () => {
  await k?.stop();
});

function listen(server: Server): Promise<number> {
  return new Promise((resolve, reject) => {
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => resolve((server.address() as AddressInfo).port));
  });
}

function close(server: Server): Promise<void> {
  return new Promise((resolve) => server.close(() => resolve()));
}

/** A port on 127.0.0.1 that nothing listens on. */
async function closedPort(): Promise<number> {
  const s = createServer();
  const port = await listen(s);
  await close(s);
  return port;
}

/** Connects and closes; resolves true when the handshake completed, false when refused. */
function connectOnce(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const c = createConnection({ port, host: '127.0.0.1' });
    c.once('connect', () => {
      c.destroy();
      resolve(true);
    });
    c.once('error', () => resolve(false));
  });
}

const MiB = 1 << 20;

/** Sends `bytes` from a client to a server over loopback; resolves when the server has them all. */
async function transfer(bytes: number): Promise<void> {
  let received = 0;
  let done!: () => void;
  const all = new Promise<void>((resolve) => (done = resolve));
  const server = createServer((s: Socket) => {
    s.on('data', (d: Buffer) => {
      received += d.length;
      if (received >= bytes) done();
    });
    s.on('error', () => {});
  });
  const port = await listen(server);
  const c = createConnection({ port, host: '127.0.0.1' });
  const chunk = Buffer.alloc(64 * 1024, 7);
  for (let sent = 0; sent < bytes; sent += chunk.length) {
    if (!c.write(chunk)) await new Promise((resolve) => c.once('drain', resolve));
  }
  await all;
  c.destroy();
  await close(server);
}

test.serial('all six samplers load whole', (t) => {
  for (const name of SAMPLERS) t.deepEqual(k.status(name).status, { state: 'active' }, name);
});

test.serial('an 8 MiB loopback transfer: bytes, packets and sizes rise both ways; srtt and packet latency are sampled', async (t) => {
  const a = await k.read('network_traffic');
  const ra = await k.read('tcp_receive');
  const pa = await k.read('tcp_packet_latency');
  await transfer(8 * MiB);
  const b = await k.read('network_traffic');
  const rb = await k.read('tcp_receive');
  const pb = await k.read('tcp_packet_latency');

  const rxBytes = num(b.get('network_bytes{direction=receive}')) - num(a.get('network_bytes{direction=receive}'));
  const txBytes = num(b.get('network_bytes{direction=transmit}')) - num(a.get('network_bytes{direction=transmit}'));
  const rxPackets = num(b.get('network_packets{direction=receive}')) - num(a.get('network_packets{direction=receive}'));
  const txPackets = num(b.get('network_packets{direction=transmit}')) - num(a.get('network_packets{direction=transmit}'));
  const rxSizes = count(window(a.get('network_size{direction=receive}'), b.get('network_size{direction=receive}')));
  const txSizes = count(window(a.get('network_size{direction=transmit}'), b.get('network_size{direction=transmit}')));
  const srtt = count(window(ra.get('tcp_srtt'), rb.get('tcp_srtt')));
  const jitter = count(window(ra.get('tcp_jitter'), rb.get('tcp_jitter')));
  const waited = count(window(pa.get('tcp_packet_latency'), pb.get('tcp_packet_latency')));
  t.log(`8 MiB: rx ${rxBytes} B in ${rxPackets} skbs (${rxSizes} sizes), tx ${txBytes} B in ${txPackets} skbs (${txSizes} sizes)`);
  t.log(`srtt samples ${srtt}, jitter samples ${jitter}, packet latency samples ${waited}`);

  t.true(rxBytes >= 8 * MiB);
  t.true(txBytes >= 8 * MiB);
  // loopback skbs carry up to 64 KiB: at least 128 of them each way
  t.true(rxPackets >= 128);
  t.true(txPackets >= 128);
  // one size observation per packet (reads are not atomic: allow a little skew)
  t.true(rxSizes >= rxPackets * 0.9 && rxSizes <= rxPackets * 1.1 + 10);
  t.true(txSizes >= txPackets * 0.9 && txSizes <= txPackets * 1.1 + 10);
  // the receiver's data segments and the sender's ACKs both reach tcp_rcv_established
  t.true(srtt >= 64);
  t.true(Math.abs(jitter - srtt) <= 5, 'srtt and jitter are recorded by the same program');
  t.true(waited >= 1);
});

test.serial('20 connects to a listener and 5 to a closed port: connect latency counts 20, failures 5, drops no_socket 5', async (t) => {
  const server = createServer((s) => s.destroy());
  const open = await listen(server);
  const closed = await closedPort();
  const a = await k.read('tcp_connect_latency');
  const da = await k.read('network_drops');
  let ok = 0;
  let refused = 0;
  for (let i = 0; i < 20; i++) if (await connectOnce(open)) ok++;
  for (let i = 0; i < 5; i++) if (!(await connectOnce(closed))) refused++;
  await close(server);
  const b = await k.read('tcp_connect_latency');
  const db = await k.read('network_drops');

  const connects = count(window(a.get('tcp_connect_latency'), b.get('tcp_connect_latency')));
  const failed = num(b.get('tcp_connect_failed')) - num(a.get('tcp_connect_failed'));
  const drops = num(db.get('network_drop')) - num(da.get('network_drop'));
  const noSocket = num(db.get('network_drop_reason{reason=no_socket}')) - sumOf(da, 'network_drop_reason', { reason: 'no_socket' });
  t.log(`${ok} connected, ${refused} refused: ${connects} connect latencies, ${failed} failed, ${drops} drops (${noSocket} no_socket)`);
  const reasons = [...db.keys()].filter((key) => key.startsWith('network_drop_reason{'));
  t.log(reasons.map((key) => `${key.slice(20, -1)} +${num(db.get(key)) - num(da.get(key) ?? 0)}`).join(', '));
  t.is(ok, 20);
  t.is(refused, 5);
  t.true(connects >= 20);
  t.true(failed >= 5);
  // each refused SYN is freed with SKB_DROP_REASON_NO_SOCKET after the RST is sent
  t.true(noSocket >= 5);
  t.true(drops >= noSocket);
});

test.serial('100 UDP datagrams to a closed port: network_drop and reason no_socket rise by at least 100', async (t) => {
  const port = await closedPort();
  const a = await k.read('network_drops');
  const sock = createSocket('udp4');
  for (let i = 0; i < 100; i++) {
    await new Promise<void>((resolve, reject) => sock.send(Buffer.from('x'), port, '127.0.0.1', (e) => (e ? reject(e) : resolve())));
  }
  await sleep(50);
  sock.close();
  const b = await k.read('network_drops');
  const drops = num(b.get('network_drop')) - num(a.get('network_drop'));
  const noSocket = num(b.get('network_drop_reason{reason=no_socket}')) - sumOf(a, 'network_drop_reason', { reason: 'no_socket' });
  t.log(`100 datagrams to a closed port: ${drops} drops, ${noSocket} no_socket`);
  t.true(noSocket >= 100);
  t.true(drops >= 100);
  // only reasons that have counted appear, and their sum is the total (up to the skew of two reads)
  const reasons = [...b.keys()].filter((key) => key.startsWith('network_drop_reason{'));
  t.true(reasons.every((key) => num(b.get(key)) > 0));
  t.true(Math.abs(sumOf(b, 'network_drop_reason') - num(b.get('network_drop'))) <= 10);
});

test('reason labels come from the kernel enum, lower case, without prefix; slot 255 is other', (t) => {
  const labels = reasonLabels({ SKB_NOT_DROPPED_YET: 0, SKB_CONSUMED: 1, SKB_DROP_REASON_NO_SOCKET: 3, SKB_DROP_REASON_MAX: 128 });
  t.is(labels.length, 256);
  t.deepEqual(labels[3], { reason: 'no_socket' });
  t.deepEqual(labels[4], { reason: 'unknown_4' });
  t.deepEqual(labels[128], { reason: 'unknown_128' });
  t.deepEqual(labels[255], { reason: 'other' });
  t.true(Object.isFrozen(labels[3]));
});

/**
 * A child process that listens with backlog 1 (Node takes 0 as its default, 511) and never
 * accepts: its event loop is blocked until the test kills it. (A child that blocked for a fixed
 * time left a busy machine's test too little of it: CI once saw fewer than 3 retransmissions.)
 */
function deafListener(): Promise<{ port: number; kill: () => Promise<void> }> {
  const script =
    `const s = require('net').createServer().listen({ port: 0, host: '127.0.0.1', backlog: 1 }, () => {` +
    ` process.stdout.write(s.address().port + '\\n', () => { Atomics.wait(new Int32Array(new SharedArrayBuffer(4)), 0, 0, 60000); process.exit(0); }); });`;
  const child = spawn(process.execPath, ['-e', script], { stdio: ['ignore', 'pipe', 'inherit'] });
  const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
  const kill = async (): Promise<void> => {
    child.kill('SIGKILL');
    await exited;
  };
  return new Promise((resolve, reject) => {
    let out = '';
    child.stdout.on('data', (d: Buffer) => {
      out += d.toString();
      if (out.includes('\n')) resolve({ port: Number.parseInt(out, 10), kill });
    });
    child.once('error', reject);
  });
}

test.serial('SYNs to a listener whose accept queue is full are dropped and retransmitted: tcp_retransmit rises', async (t) => {
  const { port, kill } = await deafListener();
  t.teardown(kill);
  const a = await k.read('tcp_retransmit');
  // two connections fill the accept queue of backlog 1; the SYNs of the other three are dropped
  // for as long as nobody accepts, and each is sent again after the initial RTO of 1 s
  const clients = Array.from({ length: 5 }, () => {
    const c = createConnection({ port, host: '127.0.0.1' });
    c.on('error', () => {});
    return c;
  });
  const started = Date.now();
  let retransmits = 0;
  for (let waited = 0; retransmits < 3 && waited < 10_000; waited = Date.now() - started) {
    await sleep(250);
    const b = await k.read('tcp_retransmit');
    retransmits = num(b.get('tcp_retransmit')) - num(a.get('tcp_retransmit'));
  }
  for (const c of clients) c.destroy();
  await kill();
  t.log(`retransmitted segments while 3 SYNs waited on a full accept queue: ${retransmits} after ${Date.now() - started} ms`);
  t.true(retransmits >= 3, `${retransmits} retransmissions in ${Date.now() - started} ms`);
});
