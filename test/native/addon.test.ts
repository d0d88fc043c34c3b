import test from 'ava';
import { spawnSync } from 'node:child_process';
import { bpfObjectPath, loadMallocAddon, loadNative, MALLOC_ADDON_PATH } from '../../src/native/index.js';

// The addon's failures are JS errors whose code is the errno name and whose
// message says what failed. Nothing here loads a program into the kernel.

const native = loadNative();

test('opening a missing object file fails with ENOENT naming the file', (t) => {
  const err = t.throws(() => new native.BpfObject('/nonexistent/x.bpf.o'));
  t.is((err as NodeJS.ErrnoException).code, 'ENOENT');
  t.regex(err?.message ?? '', /^open \/nonexistent\/x\.bpf\.o: ENOENT/);
});

test('programs, maps and the calls that need a loaded object fail with the errno and what failed', (t) => {
  const object = new native.BpfObject(bpfObjectPath('scheduler/runqueue'));
  try {
    t.deepEqual(object.programs().map((p) => [p.name, p.section, p.autoload, p.attached]), [
      ['sched_wakeup', 'tp_btf/sched_wakeup', true, false],
      ['sched_wakeup_new', 'tp_btf/sched_wakeup_new', true, false],
      ['sched_switch', 'tp_btf/sched_switch', true, false],
    ]);
    const attach = t.throws(() => object.attach('sched_switch'));
    t.is((attach as NodeJS.ErrnoException).code, 'EBADF');
    t.is(attach?.message, 'attach tp_btf/sched_switch (program sched_switch is not loaded): EBADF');
    const missing = t.throws(() => object.attach('no_such_program'));
    t.is((missing as NodeJS.ErrnoException).code, 'ENOENT');
    const mmap = t.throws(() => object.mmap('enqueued_at'));
    t.is((mmap as NodeJS.ErrnoException).code, 'EINVAL');
    t.regex(mmap?.message ?? '', /^mmap enqueued_at \(not an mmapable array\): EINVAL$/);
    const notLoaded = t.throws(() => object.mmap('runqueue_latency'));
    t.is((notLoaded as NodeJS.ErrnoException).code, 'EBADF');
  } finally {
    object.close();
  }
  const closed = t.throws(() => object.programs());
  t.is((closed as NodeJS.ErrnoException).code, 'EBADF');
});

test('perf_event_open of an event type the kernel lacks fails with the errno; a software event reads as a group', (t) => {
  const PERF_TYPE_SOFTWARE = 1;
  const fd = native.perfOpen(PERF_TYPE_SOFTWARE, 3, 0);
  try {
    const out = new BigUint64Array(4);
    t.is(native.perfRead(Int32Array.from([fd]), out, 4), 0);
    t.is(out[0], 1n, 'a group of one');
    t.true(out[1]! > 0n, 'time enabled');
  } finally {
    native.closeFd(fd);
  }
  const bad = t.throws(() => native.perfOpen(99, 0, 0));
  t.is((bad as NodeJS.ErrnoException).code, 'ENOENT');
  t.regex(bad?.message ?? '', /^perf_event_open type 99 config 0 cpu 0: ENOENT$/);
  t.is(native.perfRead(Int32Array.from([-1]), new BigUint64Array(4), 4), 1, 'a failed read is counted, not thrown');
});

test('the kernel BTF answers type and enum lookups', (t) => {
  t.true(native.btfHasType('btf_trace_sched_switch', 'typedef'));
  t.false(native.btfHasType('btf_trace_no_such_event', 'typedef'));
  t.false(native.btfHasType('btf_trace_sched_switch', 'typedef', 'no_such_module'));
  const reasons = native.btfEnum('skb_drop_reason');
  t.is(reasons?.SKB_DROP_REASON_NOT_SPECIFIED, 2);
  t.is(native.btfEnum('no_such_enum'), null);
  native.releaseBtf();
  t.true(native.btfHasType('btf_trace_sched_switch', 'typedef'), 'loaded again after a release');
  native.releaseBtf();
  t.is(native.libbpfVersion, '1.1');
});

/**
 * glibc's arenas besides the main one in a fresh node after four worker
 * threads allocated at once, with mallocArenaMax(`limit`) set first or not:
 * each is a mapping of HEAP_MAX_SIZE (64 MiB) at an address aligned to it,
 * read and write for its used part, no access for the rest.
 */
function arenasAfterWorkers(limit: number | undefined): { set: boolean | null; before: number; after: number } {
  const script = `
    const { Worker } = require('node:worker_threads');
    const { readFileSync } = require('node:fs');
    const addon = require(${JSON.stringify(MALLOC_ADDON_PATH)});
    const set = ${limit === undefined ? 'null' : `addon.mallocArenaMax(${limit})`};
    const HEAP = 64n << 20n;
    function arenas() {
      const maps = readFileSync('/proc/self/maps', 'utf8').trim().split('\\n').map((l) => {
        const [range, perms, , , , path] = l.split(/\\s+/);
        const [a, b] = range.split('-').map((x) => BigInt('0x' + x));
        return { a, b, perms, path };
      });
      let n = 0;
      maps.forEach((m, i) => {
        if (m.perms !== 'rw-p' || m.path || m.a % HEAP !== 0n) return;
        const next = maps[i + 1];
        const end = next !== undefined && next.perms === '---p' && next.a === m.b && !next.path ? next.b : m.b;
        if (end - m.a === HEAP) n++;
      });
      return n;
    }
    const before = arenas();
    const work = "const { parentPort } = require('node:worker_threads'); const keep = []; for (let i = 0; i < 2000; i++) { keep.push(Buffer.alloc(4096 + (i % 7) * 1024)); if (keep.length > 100) keep.shift(); JSON.parse(JSON.stringify({ i, s: 'x'.repeat(i % 300) })); } parentPort.postMessage(0);";
    Promise.all([0, 1, 2, 3].map(() => new Promise((done) => { const w = new Worker(work, { eval: true }); w.once('message', () => w.terminate().then(done)); })))
      .then(() => process.stdout.write(JSON.stringify({ set, before, after: arenas() })));
  `;
  const env = { ...process.env };
  delete env.MALLOC_ARENA_MAX;
  const r = spawnSync(process.execPath, ['-e', script], { encoding: 'utf8', env });
  if (r.status !== 0) throw new Error(`node exited ${r.status}: ${r.stderr}`);
  return JSON.parse(r.stdout) as { set: boolean | null; before: number; after: number };
}

test('the malloc addon\'s mallocArenaMax(1) keeps threads that start allocating from making malloc arenas of their own; without it they do', (t) => {
  const free = arenasAfterWorkers(undefined);
  t.true(free.after >= free.before + 2, `without a limit: ${free.before} arenas, then ${free.after}`);
  const limited = arenasAfterWorkers(1);
  t.is(limited.set, true);
  t.is(limited.after, limited.before, `with one: ${limited.before} arenas, then ${limited.after}`);
  t.is(loadMallocAddon().mallocArenaMax(0), false, 'a limit below one is refused');
});
