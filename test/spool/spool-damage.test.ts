import test from 'ava';
import { appendFileSync, mkdtempSync, readFileSync, rmSync, statSync, truncateSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Spool } from '../../src/spool/spool.js';
import { encodeRecord, SPOOL_MAGIC, type SpoolHeader } from '../../src/spool/spool-format.js';

const HEADER: SpoolHeader = {
  v: 1, stream: 'REZOLUS', consumer: 'c', hosts: 'web01', intervalMs: 1000, output: '/x.parquet', startNs: '1', endNs: null, window: 'until stopped',
};
const FRAMES = [1, 2, 3, 4].map((seq) => ({ seq, timeNs: BigInt(seq), subject: 's.a', data: Buffer.from(`frame ${seq}`) }));

/** a spool of FRAMES, and the byte offset of each frame record */
function make(): { dir: string; path: string; offsets: number[] } {
  const dir = mkdtempSync(join(tmpdir(), 'rezolus-spool-damage-'));
  const path = join(dir, 's.spool');
  const s = Spool.create(path, HEADER);
  for (const f of FRAMES) s.append(f);
  s.sync();
  s.close();
  let at = SPOOL_MAGIC.length + encodeRecord({ t: 'header', header: HEADER }).byteLength;
  const offsets = FRAMES.map((f) => {
    const here = at;
    at += encodeRecord({ t: 'frame', ...f }).byteLength;
    return here;
  });
  return { dir, path, offsets };
}

async function replay(path: string): Promise<{ seqs: number[]; cut: Awaited<ReturnType<Spool['replay']>>; spool: Spool }> {
  const spool = Spool.open(path);
  if (spool === undefined) throw new Error('no spool');
  const seqs: number[] = [];
  const cut = await spool.replay((r) => void seqs.push(r.seq));
  return { seqs, cut, spool };
}

function flip(path: string, offset: number): void {
  const b = readFileSync(path);
  b.writeUInt8(b.readUInt8(offset) ^ 0xff, offset);
  writeFileSync(path, b);
}

test('a record with a bad checksum followed by good ones is refused in one line naming the file and the byte offset, and the spool is left as it was', async (t) => {
  const { dir, path, offsets } = make();
  const second = offsets[1] as number;
  flip(path, second + 12); // inside the body of frame 2
  const size = statSync(path).size;
  const spool = Spool.open(path);
  if (spool === undefined) throw new Error('no spool');
  const error = await t.throwsAsync(spool.replay(() => undefined), { message: new RegExp(`^${path.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')} is damaged at byte ${second} of ${size} `) });
  t.false(error?.message.includes('\n'), 'one line');
  t.regex(error?.message ?? '', new RegExp(`truncate -s ${second}\\) to keep the 1 frames before it`));
  t.is(statSync(path).size, size, 'nothing cut');
  spool.close();
  rmSync(dir, { recursive: true });
});

test('a length that cannot be a record, with data after it, is refused too', async (t) => {
  const { dir, path, offsets } = make();
  const b = readFileSync(path);
  b.writeUInt32LE(0xffffffff, offsets[2] as number);
  writeFileSync(path, b);
  const spool = Spool.open(path);
  if (spool === undefined) throw new Error('no spool');
  await t.throwsAsync(spool.replay(() => undefined), { message: new RegExp(`is damaged at byte ${offsets[2]} `) });
  spool.close();
  rmSync(dir, { recursive: true });
});

test('torn tails are cut and reported: a last record past the end, a bad last record, a bad record before a torn one, zeros after the last record', async (t) => {
  // the last record runs past the end of the file
  let { dir, path, offsets } = make();
  let size = statSync(path).size;
  truncateSync(path, size - 3);
  let r = await replay(path);
  t.deepEqual(r.seqs, [1, 2, 3]);
  t.deepEqual(r.cut, { offset: offsets[3], bytes: size - 3 - (offsets[3] as number), reason: 'short' });
  t.is(statSync(path).size, offsets[3] as number);
  // and appending goes on after the last whole record
  r.spool.append({ seq: 9, timeNs: 9n, subject: 's.a', data: Buffer.from('nine') });
  r.spool.sync();
  r.spool.close();
  r = await replay(path);
  t.deepEqual(r.seqs, [1, 2, 3, 9]);
  t.is(r.cut, undefined);
  r.spool.close();
  rmSync(dir, { recursive: true });

  // the last record fails its checksum
  ({ dir, path, offsets } = make());
  size = statSync(path).size;
  flip(path, size - 1);
  r = await replay(path);
  t.deepEqual(r.seqs, [1, 2, 3]);
  t.deepEqual(r.cut, { offset: offsets[3], bytes: size - (offsets[3] as number), reason: 'bad' });
  r.spool.close();
  rmSync(dir, { recursive: true });

  // a bad record followed only by a record that runs past the end (a crash in the middle of the last write)
  ({ dir, path, offsets } = make());
  size = statSync(path).size;
  flip(path, (offsets[2] as number) + 12);
  truncateSync(path, size - 2);
  r = await replay(path);
  t.deepEqual(r.seqs, [1, 2]);
  t.is(r.cut?.offset, offsets[2]);
  r.spool.close();
  rmSync(dir, { recursive: true });

  // zeros after the last record (the size reached the disk, the data did not)
  ({ dir, path, offsets } = make());
  size = statSync(path).size;
  appendFileSync(path, Buffer.alloc(4096));
  r = await replay(path);
  t.deepEqual(r.seqs, [1, 2, 3, 4]);
  t.deepEqual(r.cut, { offset: size, bytes: 4096, reason: 'bad' });
  t.is(statSync(path).size, size);
  r.spool.close();
  rmSync(dir, { recursive: true });
});
