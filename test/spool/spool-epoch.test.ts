/**
 * Spool epochs (spool-format.ts): a stream created again after the server
 * lost its store starts over at sequence 1; the spool keeps its frames in
 * spool sequences (the epoch's base + stream sequence), and a spool from
 * before epochs is still read.
 */
import test from 'ava';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Spool } from '../../src/spool/spool.js';
import { decodeRecord, encodeRecord, epochFor, SPOOL_MAGIC, streamSeqAfter, type EpochRecord, type FrameRecord, type SpoolHeader } from '../../src/spool/spool-format.js';

const HEADER: SpoolHeader = {
  v: 1, stream: 'REZOLUS', consumer: 'c', hosts: 'web01', intervalMs: 1000, output: '/x.parquet', startNs: '1', endNs: null, window: 'until stopped',
};
const OLD = '2026-01-01T00:00:00.123456789Z';
const NEW = '2026-01-01T00:05:00.987654321Z';

function frame(seq: number): Omit<FrameRecord, 't'> {
  return { seq, timeNs: BigInt(seq), subject: 'rezolus.metrics.web01.cpu', data: Buffer.from([seq % 256]) };
}

async function reopen(path: string): Promise<{ spool: Spool; seqs: number[] }> {
  const spool = Spool.open(path);
  if (spool === undefined) throw new Error('no spool');
  const seqs: number[] = [];
  await spool.replay((r) => void seqs.push(r.seq));
  return { spool, seqs };
}

test('an epoch record encodes and decodes', (t) => {
  const e: EpochRecord = { t: 'epoch', created: NEW, base: 2 ** 40 + 7 };
  const d = decodeRecord(Buffer.from(encodeRecord(e)), 0);
  t.deepEqual(typeof d === 'string' ? d : d.record, e);
});

test('the same creation time is the same stream; another one is a new epoch based after the spool', (t) => {
  const cur: EpochRecord = { t: 'epoch', created: OLD, base: 0 };
  t.deepEqual(epochFor(cur, 500, { created: OLD, lastSeq: 900 }), { epoch: cur, record: false, newStream: false });
  // a new stream, whether it has grown past the spool or not
  for (const lastSeq of [0, 40, 5000]) {
    t.deepEqual(epochFor(cur, 500, { created: NEW, lastSeq }), { epoch: { t: 'epoch', created: NEW, base: 500 }, record: true, newStream: true });
  }
  // a first start, and a spool from before epochs that is behind the stream: the same stream, recorded as base 0
  t.deepEqual(epochFor(undefined, 0, { created: OLD, lastSeq: 0 }), { epoch: { t: 'epoch', created: OLD, base: 0 }, record: true, newStream: false });
  t.deepEqual(epochFor(undefined, 500, { created: OLD, lastSeq: 700 }), { epoch: { t: 'epoch', created: OLD, base: 0 }, record: true, newStream: false });
  // a spool from before epochs ahead of the stream: the sequences started over
  t.deepEqual(epochFor(undefined, 500, { created: NEW, lastSeq: 30 }), { epoch: { t: 'epoch', created: NEW, base: 500 }, record: true, newStream: true });
  t.is(streamSeqAfter({ t: 'epoch', created: NEW, base: 500 }, 500), 0, 'nothing of the new stream held: start by time');
  t.is(streamSeqAfter({ t: 'epoch', created: NEW, base: 500 }, 523), 23);
  t.is(streamSeqAfter({ t: 'epoch', created: OLD, base: 0 }, 523), 523);
});

test('frames of two streams keep growing spool sequences, and a reopened spool knows the last epoch', async (t) => {
  const dir = mkdtempSync(join(tmpdir(), 'rezolus-spool-epoch-'));
  const path = join(dir, 'e.spool');
  const s = Spool.create(path, HEADER);
  s.beginEpoch({ t: 'epoch', created: OLD, base: 0 });
  for (let q = 1; q <= 10; q++) s.append(frame(q));
  s.sync();
  // the server lost its store: the new stream starts over at 1
  const next = epochFor(s.epoch, s.maxSeq, { created: NEW, lastSeq: 3 }).epoch;
  s.beginEpoch(next);
  for (let q = 1; q <= 3; q++) s.append(frame(next.base + q));
  s.sync();
  t.throws(() => s.beginEpoch({ t: 'epoch', created: 'x', base: 5 }), { instanceOf: RangeError }, 'an epoch must not go back');
  s.close();
  const { spool, seqs } = await reopen(path);
  t.deepEqual(seqs, [1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13]);
  t.deepEqual(spool.epoch, { t: 'epoch', created: NEW, base: 10 });
  t.is(spool.maxSeq, 13);
  t.is(streamSeqAfter(next, spool.maxSeq), 3, 'a restart resumes after stream sequence 3 of the new stream');
  spool.close();
  rmSync(dir, { recursive: true });
});

test('a spool from before epochs (no epoch record) is read as before: stream sequences, no epoch', async (t) => {
  const dir = mkdtempSync(join(tmpdir(), 'rezolus-spool-epoch-'));
  const path = join(dir, 'old.spool');
  const records = [encodeRecord({ t: 'header', header: HEADER }), ...[4, 5, 9].map((q) => encodeRecord({ t: 'frame', ...frame(q) }))];
  writeFileSync(path, Buffer.concat([SPOOL_MAGIC, ...records]));
  const { spool, seqs } = await reopen(path);
  t.deepEqual(seqs, [4, 5, 9]);
  t.is(spool.epoch, undefined);
  t.is(spool.maxSeq, 9);
  // the same stream still there: base 0, go on after 9
  const same = epochFor(spool.epoch, spool.maxSeq, { created: OLD, lastSeq: 20 });
  t.is(streamSeqAfter(same.epoch, spool.maxSeq), 9);
  spool.beginEpoch(same.epoch);
  spool.close();
  t.deepEqual((await reopen(path)).spool.epoch, { t: 'epoch', created: OLD, base: 0 });
  rmSync(dir, { recursive: true });
});
