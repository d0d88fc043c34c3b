import test from 'ava';
import { bpfObjectPath, loadNative } from '../../src/native/index.js';

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
