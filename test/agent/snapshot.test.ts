/**
 * The agent's HTTP snapshot with `?since`: the frames published after an
 * earlier snapshot, older first, at most RECENT_FRAMES per sampler, before
 * each sampler's newest; without it, the newest frame of every sampler (as
 * before). A poll that comes late loses no frame (issue 18).
 */
import test from 'ava';
import { unpack } from 'msgpackr';
import type { AddressInfo } from 'node:net';
import { RECENT_FRAMES, serveSnapshot, SnapshotSink } from '../../src/agent/snapshot.js';
import type { FrameSink } from '../../src/agent/agent.js';
import { decodeFrame } from '../../src/frame/codec.js';
import { silentLogger } from '../../src/log/logger.js';
import { DESCRIPTOR, frameOf } from '../sources/frames.js';

function sink(): SnapshotSink {
  const next: FrameSink = {
    publishFrame: () => undefined,
    putDescriptor: () => undefined,
    stats: { published: 0, dropped: 0, retries: 0, buffered: 0, bufferedBytes: 0 },
  };
  const s = new SnapshotSink(next);
  s.putDescriptor(DESCRIPTOR.hash, DESCRIPTOR.json);
  return s;
}

function publish(s: SnapshotSink, host: string, seq: number): void {
  const f = frameOf(host, seq);
  s.publishFrame(f.subject, f.data, 'x.', seq);
}

const seqs = (frames: readonly Uint8Array[]): string[] => frames.map((f) => `${decodeFrame(f).host}:${decodeFrame(f).seq}`);

test('without since: the newest frame of every sampler', (t) => {
  const s = sink();
  for (let i = 1; i <= 3; i++) {
    publish(s, 'h1', i);
    publish(s, 'h2', i);
  }
  t.deepEqual(seqs(s.snapshot().frames), ['h1:3', 'h2:3']);
});

test('since an earlier snapshot: the frames published after it, older first, then the newest; at most RECENT_FRAMES', (t) => {
  const s = sink();
  publish(s, 'h1', 1);
  const first = s.snapshot();
  t.deepEqual(seqs(first.frames), ['h1:1']);
  publish(s, 'h1', 2);
  publish(s, 'h1', 3);
  publish(s, 'h2', 1);
  const second = s.snapshot(first.at);
  t.deepEqual(seqs(second.frames), ['h1:2', 'h1:3', 'h2:1']);
  t.true(second.at > first.at);
  // nothing new: the newest of each, once
  t.deepEqual(seqs(s.snapshot(second.at).frames), ['h1:3', 'h2:1']);
  // a poll very late: the last RECENT_FRAMES
  for (let i = 4; i <= 20; i++) publish(s, 'h1', i);
  t.deepEqual(seqs(s.snapshot(second.at).frames).filter((x) => x.startsWith('h1')), Array.from({ length: RECENT_FRAMES }, (_, i) => `h1:${21 - RECENT_FRAMES + i}`));
  t.is(s.snapshot(second.at).descriptors[DESCRIPTOR.hash], DESCRIPTOR.json, 'with the descriptor its frames use');
});

test('over HTTP: /metrics/binary?since=<at> and a since that is not a number (the newest only)', async (t) => {
  const s = sink();
  publish(s, 'h1', 1);
  const server = await serveSnapshot(s, 'h1', { host: '127.0.0.1', port: 0 }, silentLogger());
  try {
    const base = `http://127.0.0.1:${(server.address() as AddressInfo).port}/metrics/binary`;
    const get = async (q: string): Promise<{ at: bigint; frames: Uint8Array[] }> => unpack(new Uint8Array(await (await fetch(`${base}${q}`)).arrayBuffer())) as { at: bigint; frames: Uint8Array[] };
    const first = await get('');
    t.is(typeof first.at, 'bigint');
    publish(s, 'h1', 2);
    publish(s, 'h1', 3);
    t.deepEqual(seqs((await get(`?since=${first.at}`)).frames), ['h1:2', 'h1:3']);
    t.deepEqual(seqs((await get('?since=yesterday')).frames), ['h1:3']);
  } finally {
    server.close();
  }
});
