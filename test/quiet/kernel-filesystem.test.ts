import test from 'ava';
import { mkdtempSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import { count, KernelHarness, node, run, window } from '../helpers/kernel.js';

// filesystem_latency against the root file system (ext4 on /dev/vda): a
// child process runs N fsyncs, N unlinks, N truncates of files with blocks
// and N fallocates; each must show in the matching histogram. Other activity
// only adds, so every check is a lower bound.

const N = 50;
const NFALLOCATE = 10;

let k: KernelHarness;
let dir: string;
test.before(async () => {
  dir = mkdtempSync('/var/tmp/rezolus-fs-');
  await run('findmnt', ['-n', '-t', 'ext4', '-T', dir]); // the test measures ext4: fail early if /var/tmp is not
  k = await KernelHarness.start(['filesystem_latency']);
});
test.after.always(async () => {
  await k?.stop();
  if (dir) rmSync(dir, { recursive: true, force: true });
});

test.serial('filesystem_latency loads whole and publishes ext4 and xfs series, and no read/write/open', async (t) => {
  t.deepEqual(k.status('filesystem_latency').status, { state: 'active' });
  const r = await k.read('filesystem_latency');
  t.deepEqual([...r.keys()].sort(), [
    'filesystem_latency{fs=ext4,op=fallocate}',
    'filesystem_latency{fs=ext4,op=fsync}',
    'filesystem_latency{fs=ext4,op=truncate}',
    'filesystem_latency{fs=ext4,op=unlink}',
    'filesystem_latency{fs=xfs,op=truncate}',
  ]);
});

const WORK = `
const fs = require('node:fs');
const [dir, n] = [process.argv[1], Number(process.argv[2])];
const data = Buffer.alloc(8192, 1);
const fd = fs.openSync(dir + '/sync', 'w');
for (let i = 0; i < n; i++) { fs.writeSync(fd, data, 0, data.length, 0); fs.fsyncSync(fd); }
fs.closeSync(fd);
for (let i = 0; i < n; i++) fs.writeFileSync(dir + '/u' + i, 'x');
for (let i = 0; i < n; i++) fs.unlinkSync(dir + '/u' + i);
const tfd = fs.openSync(dir + '/trunc', 'w');
for (let i = 0; i < n; i++) { fs.writeSync(tfd, data, 0, data.length, 0); fs.fdatasyncSync(tfd); fs.ftruncateSync(tfd, 0); }
fs.closeSync(tfd);
`;

test.serial(`${N} fsyncs, unlinks and truncates and ${NFALLOCATE} fallocates on ext4 show in their histograms`, async (t) => {
  const a = await k.read('filesystem_latency');
  await node(WORK, [dir, String(N)]);
  for (let i = 0; i < NFALLOCATE; i++) await run('fallocate', ['-l', '1MiB', join(dir, `f${i}`)]);
  const b = await k.read('filesystem_latency');
  const got = (op: string): number => count(window(a.get(`filesystem_latency{fs=ext4,op=${op}}`), b.get(`filesystem_latency{fs=ext4,op=${op}}`)));
  const fsync = got('fsync');
  const unlink = got('unlink');
  const truncate = got('truncate');
  const fallocate = got('fallocate');
  t.log(`ext4: fsync ${fsync}, unlink ${unlink}, truncate ${truncate}, fallocate ${fallocate}`);
  t.true(fsync >= N, `fsync ${fsync} >= ${N}`);
  t.true(unlink >= N, `unlink ${unlink} >= ${N}`);
  t.true(truncate >= N, `truncate ${truncate} >= ${N}`);
  t.true(fallocate >= NFALLOCATE, `fallocate ${fallocate} >= ${NFALLOCATE}`);
});
