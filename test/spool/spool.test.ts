import test from 'ava';
import { appendFileSync, mkdtempSync, readFileSync, rmSync, statSync, truncateSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Spool } from '../../src/spool/spool.js';
import type { FrameRecord, SpoolHeader } from '../../src/spool/spool-format.js';
import { lockFile, processStartTime } from '../../src/files/lock.js';

const HEADER: SpoolHeader = {
  v: 1, stream: 'REZOLUS', consumer: 'c', hosts: 'web01', intervalMs: 1000, output: '/x.parquet', startNs: '1', endNs: null, window: 'until stopped',
};

function tmp(): string {
  return mkdtempSync(join(tmpdir(), 'rezolus-spool-test-'));
}

async function readAll(path: string): Promise<{ spool: Spool; frames: FrameRecord[] }> {
  const spool = Spool.open(path);
  if (spool === undefined) throw new Error('no spool');
  const frames: FrameRecord[] = [];
  await spool.replay((r) => void frames.push(r));
  return { spool, frames };
}

test('frames appended and synced come back in order with their sequence, time, subject and bytes', async (t) => {
  const dir = tmp();
  const path = join(dir, 'a.spool');
  const s = Spool.create(path, HEADER);
  for (let i = 1; i <= 1000; i++) s.append({ seq: i * 2, timeNs: 1_700_000_000_000_000_000n + BigInt(i), subject: `rezolus.metrics.web01.s${i % 3}`, data: Buffer.alloc(i % 50, i) });
  s.sync();
  s.close();
  const { spool, frames } = await readAll(path);
  t.deepEqual(spool.header, HEADER);
  t.is(frames.length, 1000);
  t.is(spool.maxSeq, 2000);
  t.is(frames[9]?.seq, 20);
  t.is(frames[9]?.timeNs, 1_700_000_000_000_000_010n);
  t.is(frames[9]?.subject, 'rezolus.metrics.web01.s1');
  t.deepEqual([...(frames[9]?.data ?? [])], new Array<number>(10).fill(10));
  spool.close();
  rmSync(dir, { recursive: true });
});

test('a torn last record (a kill during an append) is cut off, and appending goes on after the last whole one', async (t) => {
  const dir = tmp();
  const path = join(dir, 'b.spool');
  const s = Spool.create(path, HEADER);
  s.append({ seq: 1, timeNs: 1n, subject: 's.a', data: Buffer.from('one') });
  s.append({ seq: 2, timeNs: 2n, subject: 's.a', data: Buffer.from('two') });
  s.sync();
  s.close();
  const whole = statSync(path).size;
  // half a record, then a record with a bad checksum
  truncateSync(path, whole - 4);
  let { spool, frames } = await readAll(path);
  t.deepEqual(frames.map((f) => f.seq), [1]);
  t.is(spool.maxSeq, 1);
  spool.append({ seq: 3, timeNs: 3n, subject: 's.a', data: Buffer.from('three') });
  spool.sync();
  spool.close();
  const bytes = readFileSync(path);
  bytes.writeUInt8(bytes.readUInt8(bytes.length - 1) ^ 0xff, bytes.length - 1);
  writeFileSync(path, bytes);
  appendFileSync(path, Buffer.from([1, 2, 3]));
  ({ spool, frames } = await readAll(path));
  t.deepEqual(frames.map((f) => f.seq), [1], 'a record with a bad checksum ends the spool');
  spool.close();
  rmSync(dir, { recursive: true });
});

test('done is remembered; a file that is not a spool is refused', async (t) => {
  const dir = tmp();
  const path = join(dir, 'c.spool');
  const s = Spool.create(path, HEADER);
  s.append({ seq: 7, timeNs: 1n, subject: 's.a', data: Buffer.from('x') });
  s.markDone();
  s.close();
  const { spool } = await readAll(path);
  t.true(spool.done);
  spool.remove();
  t.is(Spool.open(path), undefined);
  writeFileSync(path, 'PAR1 not a spool');
  t.throws(() => Spool.open(path), { message: /is not a rezolus spool/ });
  rmSync(dir, { recursive: true });
});

test('a lock held by a live process is refused; one left by a dead process is taken over', (t) => {
  const dir = tmp();
  const path = join(dir, 'd.spool');
  writeFileSync(`${path}.lock`, '1\n'); // PID 1 is alive
  t.throws(() => lockFile(path), { message: /in use by another recorder \(pid 1/ });
  writeFileSync(`${path}.lock`, '999999999\n');
  const release = lockFile(path);
  t.is(readFileSync(`${path}.lock`, 'utf8'), `${process.pid} ${processStartTime(process.pid)}\n`, 'pid and start time (a reused pid is not taken for the owner)');
  release();
  rmSync(dir, { recursive: true });
});
