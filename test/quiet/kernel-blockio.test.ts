import test from 'ava';
import { execFileSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import type { SparseHistogram } from '../../src/metrics/histogram.js';
import { valueToIndex } from '../../src/metrics/histogram.js';
import { count, KernelHarness, run, sumOf, window } from '../helpers/kernel.js';

// blockio_requests and blockio_latency against the real disk: O_DIRECT
// requests of known sizes on the root file system (ext4 on /dev/vda) must show
// up in the counters and histograms. Other I/O (the journal, other tests)
// only adds, so every check is a lower bound.

const N4K = 40;
const N64K = 20;

let k: KernelHarness;
let dir: string;
test.before(async () => {
  dir = mkdtempSync('/var/tmp/rezolus-blockio-');
  k = await KernelHarness.start(['blockio_requests', 'blockio_latency']);
});
test.after.always(async () => {
  await k?.stop();
  if (dir) rmSync(dir, { recursive: true, force: true });
});

/** Events of the bucket that holds `value`. */
function inBucket(h: SparseHistogram, value: number): number {
  const i = h.index.indexOf(valueToIndex(value));
  return i < 0 ? 0 : (h.count[i] as number);
}

test.serial('both samplers load whole and publish every series', async (t) => {
  t.deepEqual(k.status('blockio_requests').status, { state: 'active' });
  t.deepEqual(k.status('blockio_latency').status, { state: 'active' });
  const r = await k.read('blockio_requests');
  for (const op of ['read', 'write', 'flush', 'discard']) {
    for (const m of ['blockio_operations', 'blockio_bytes', 'blockio_size', 'blockio_requeues']) t.true(r.has(`${m}{op=${op}}`), `${m}{op=${op}}`);
  }
  t.is([...r.keys()].filter((key) => key.startsWith('blockio_errors{')).length, 28, '4 ops x 7 error kinds');
  t.true(r.has('blockio_errors{op=write,error=timeout}'));
  const l = await k.read('blockio_latency');
  t.deepEqual([...l.keys()].sort(), ['blockio_latency{op=discard}', 'blockio_latency{op=flush}', 'blockio_latency{op=read}', 'blockio_latency{op=write}']);
});

test.serial(`O_DIRECT writes of ${N4K} x 4 KiB and ${N64K} x 64 KiB: sizes, bytes, operations and latency`, async (t) => {
  // One file per size, allocated up front in one extent: a direct write that
  // crossed an extent boundary would go out as two requests.
  const small = join(dir, 'direct-4k');
  const large = join(dir, 'direct-64k');
  await run('fallocate', ['-l', String(N4K * 4096), small]);
  await run('fallocate', ['-l', String(N64K * 65536), large]);
  await run('sync', ['-f', small]);
  const a = await k.read('blockio_requests');
  const la = await k.read('blockio_latency');
  await run('dd', ['if=/dev/zero', `of=${small}`, 'bs=4096', `count=${N4K}`, 'oflag=direct', 'conv=fsync,notrunc', 'status=none']);
  await run('dd', ['if=/dev/zero', `of=${large}`, 'bs=65536', `count=${N64K}`, 'oflag=direct', 'conv=fsync,notrunc', 'status=none']);
  const b = await k.read('blockio_requests');
  const lb = await k.read('blockio_latency');

  const size = window(a.get('blockio_size{op=write}'), b.get('blockio_size{op=write}'));
  const at4k = inBucket(size, 4096);
  const at64k = inBucket(size, 65536);
  t.log(`write size: ${at4k} in the 4 KiB bucket, ${at64k} in the 64 KiB bucket, ${count(size)} in all`);
  t.true(at4k >= N4K, `4 KiB bucket ${at4k} >= ${N4K}`);
  t.true(at64k >= N64K, `64 KiB bucket ${at64k} >= ${N64K}`);

  const written = N4K * 4096 + N64K * 65536;
  const bytes = sumOf(b, 'blockio_bytes', { op: 'write' }) - sumOf(a, 'blockio_bytes', { op: 'write' });
  const ops = sumOf(b, 'blockio_operations', { op: 'write' }) - sumOf(a, 'blockio_operations', { op: 'write' });
  t.log(`write bytes +${bytes} (wrote ${written}), write operations +${ops}`);
  t.true(bytes >= written);
  t.true(ops >= N4K + N64K);

  const latency = window(la.get('blockio_latency{op=write}'), lb.get('blockio_latency{op=write}'));
  t.log(`write latency: ${count(latency)} requests`);
  t.true(count(latency) >= N4K + N64K);
  t.is(sumOf(b, 'blockio_errors') - sumOf(a, 'blockio_errors'), 0, 'no errors on a healthy disk');

  // vda has a write-back cache: each dd's fsync ends in a cache flush request
  if (readFileSync('/sys/block/vda/queue/write_cache', 'utf8').trim() === 'write back') {
    const flushes = sumOf(b, 'blockio_operations', { op: 'flush' }) - sumOf(a, 'blockio_operations', { op: 'flush' });
    const flushLatency = window(la.get('blockio_latency{op=flush}'), lb.get('blockio_latency{op=flush}'));
    t.log(`flushes +${flushes}, flush latency count ${count(flushLatency)}`);
    t.true(flushes >= 2);
    t.true(count(flushLatency) >= 2);
    const flushSize = window(a.get('blockio_size{op=flush}'), b.get('blockio_size{op=flush}'));
    t.is(count(flushSize), 0, 'zero-byte flushes are not in blockio_size');
  }
});

test.serial(`O_DIRECT reads of ${N4K} x 4 KiB: read operations, bytes, size and latency`, async (t) => {
  const file = join(dir, 'read');
  await run('dd', ['if=/dev/zero', `of=${file}`, 'bs=4096', `count=${N4K}`, 'conv=fsync', 'status=none']);
  const a = await k.read('blockio_requests');
  const la = await k.read('blockio_latency');
  await run('dd', [`if=${file}`, 'of=/dev/null', 'bs=4096', `count=${N4K}`, 'iflag=direct', 'status=none']);
  const b = await k.read('blockio_requests');
  const lb = await k.read('blockio_latency');
  const reads = sumOf(b, 'blockio_operations', { op: 'read' }) - sumOf(a, 'blockio_operations', { op: 'read' });
  const bytes = sumOf(b, 'blockio_bytes', { op: 'read' }) - sumOf(a, 'blockio_bytes', { op: 'read' });
  const size = window(a.get('blockio_size{op=read}'), b.get('blockio_size{op=read}'));
  const latency = window(la.get('blockio_latency{op=read}'), lb.get('blockio_latency{op=read}'));
  t.log(`reads +${reads}, bytes +${bytes}, 4 KiB bucket ${inBucket(size, 4096)}, latency count ${count(latency)}`);
  t.true(reads >= N4K);
  t.true(bytes >= N4K * 4096);
  t.true(inBucket(size, 4096) >= N4K);
  t.true(count(latency) >= N4K);
});

test.serial('writes a loop device cannot complete (immutable backing file) count as blockio_errors{op=write,error=io}', async (t) => {
  const backing = join(dir, 'loop.img');
  await run('truncate', ['-s', '8M', backing]);
  const loop = execFileSync('losetup', ['-f', '--show', backing], { encoding: 'utf8' }).trim();
  const TRIES = 3;
  try {
    // the loop driver's write to the backing file fails with EPERM: the request completes with BLK_STS_IOERR
    await run('chattr', ['+i', backing]);
    const a = await k.read('blockio_requests');
    for (let i = 0; i < TRIES; i++) await t.throwsAsync(run('dd', ['if=/dev/zero', `of=${loop}`, 'bs=4096', 'count=1', 'oflag=direct', 'status=none']));
    const b = await k.read('blockio_requests');
    const io = sumOf(b, 'blockio_errors', { op: 'write', error: 'io' }) - sumOf(a, 'blockio_errors', { op: 'write', error: 'io' });
    const other = sumOf(b, 'blockio_errors') - sumOf(a, 'blockio_errors') - io;
    t.log(`write io errors +${io}, other errors +${other}`);
    t.true(io >= TRIES);
  } finally {
    await run('chattr', ['-i', backing]).catch(() => undefined);
    execFileSync('losetup', ['-d', loop]);
  }
});
