import test from 'ava';
import { setTimeout as sleep } from 'node:timers/promises';
import { count, KernelHarness, num, window } from '../helpers/kernel.js';

// Serial: the BPF objects a process loads are registered by sampler name (what
// rezolus_bpf reads), so two agents of one process must not overlap.
//
// One program of scheduler_runqueue is pointed at a tracepoint this kernel
// does not have: the sampler runs degraded and says which program, its other
// programs still work, and the other samplers (BPF and procfs) are untouched.

test.serial('a program that cannot attach leaves its sampler degraded and everything else working', async (t) => {
  const k = await KernelHarness.start(['scheduler_runqueue', 'syscall_counts', 'cpu_usage'], {
    bpfEvents: { sched_wakeup_new: 'sched_wakeup_new_missing' },
  });
  try {
    const st = k.status('scheduler_runqueue').status;
    t.is(st.state, 'degraded');
    t.regex(st.state === 'degraded' ? st.reason : '', /^sched_wakeup_new: no tracepoint sched_wakeup_new_missing on this kernel$/);
    t.deepEqual(k.status('syscall_counts').status, { state: 'active' });
    t.deepEqual(k.status('cpu_usage').status, { state: 'active' });
    const a = await k.read('scheduler_runqueue');
    await sleep(300);
    const b = await k.read('scheduler_runqueue');
    t.true(count(window(a.get('scheduler_runqueue_latency'), b.get('scheduler_runqueue_latency'))) > 0, 'wakeups are still measured');
    t.is(k.status('scheduler_runqueue').status.state, 'degraded', 'a good refresh does not hide the degradation');
    const cpu = await k.read('cpu_usage');
    t.true(num(cpu.get('cpu_usage{state=user,id=0}')) > 0);
    t.true((await k.read('syscall_counts')).size > 0);
  } finally {
    await k.stop();
  }
});

test.serial('a sampler whose every program is missing is unsupported, with the reason', async (t) => {
  const k = await KernelHarness.start(['syscall_counts'], { bpfEvents: { sys_enter: 'sys_enter_missing' } });
  try {
    t.deepEqual(k.status('syscall_counts').status, {
      state: 'unsupported',
      reason: 'none of its tracepoints exist here: sys_enter: no tracepoint sys_enter_missing on this kernel',
    });
  } finally {
    await k.stop();
  }
});

test.serial('without root every BPF sampler is unsupported with one clear reason, and the procfs samplers run', async (t) => {
  const helpers = new URL('../helpers/kernel.ts', import.meta.url).pathname;
  const registry = new URL('../../src/samplers/registry.ts', import.meta.url).pathname;
  const script = `
    const { KernelHarness } = await import(${JSON.stringify(helpers)});
    const { SAMPLERS } = await import(${JSON.stringify(registry)});
    const k = await KernelHarness.start([...SAMPLERS.filter((s) => s.kernel).map((s) => s.name), 'cpu_usage']);
    const values = await k.read('cpu_usage');
    process.stdout.write(JSON.stringify({ status: k.agent.status().filter((s) => s.status.state !== 'disabled').map((s) => [s.name, s.status]), cpuSeries: values.size }));
    await k.stop();
  `;
  const { spawnSync } = await import('node:child_process');
  const r = spawnSync(process.execPath, ['--import', 'tsx', '--input-type=module', '-e', script], { uid: 65534, gid: 65534, encoding: 'utf8', timeout: 60_000 });
  t.is(r.status, 0, r.stderr);
  const out = JSON.parse(r.stdout) as { status: [string, { state: string; reason?: string }][]; cpuSeries: number };
  const byName = new Map(out.status);
  t.deepEqual(byName.get('cpu_usage'), { state: 'active' });
  t.true(out.cpuSeries > 0);
  for (const name of ['scheduler_runqueue', 'syscall_counts', 'syscall_latency']) {
    t.deepEqual(byName.get(name), { state: 'unsupported', reason: 'needs root to load BPF programs' }, name);
  }
  for (const [name, s] of out.status) if (name !== 'cpu_usage') t.not(s.state, 'active', `${name} runs as an unprivileged user?`);
});

test.serial('rezolus_bpf without bpf_stats lists every attached program, and its figures hold still while the kernel does not count', async (t) => {
  const k = await KernelHarness.start(['rezolus_bpf', 'scheduler_runqueue', 'syscall_counts']);
  try {
    const a = await k.read('rezolus_bpf');
    await sleep(200);
    const b = await k.read('rezolus_bpf');
    const keys = [...b.keys()].filter((key) => key.startsWith('rezolus_bpf_run_count{'));
    t.deepEqual(keys.sort(), [
      'rezolus_bpf_run_count{sampler=scheduler_runqueue,program=sched_switch}',
      'rezolus_bpf_run_count{sampler=scheduler_runqueue,program=sched_wakeup_new}',
      'rezolus_bpf_run_count{sampler=scheduler_runqueue,program=sched_wakeup}',
      'rezolus_bpf_run_count{sampler=syscall_counts,program=sys_enter}',
    ]);
    const { readFileSync } = await import('node:fs');
    if (readFileSync('/proc/sys/kernel/bpf_stats_enabled', 'utf8').trim() === '0') {
      t.deepEqual([...b.entries()], [...a.entries()], 'nothing counts, so nothing moves');
    } else {
      t.log('kernel.bpf_stats_enabled is on here: the figures may move');
    }
  } finally {
    await k.stop();
  }
});

test.serial('a program the verifier rejects is left out and named; the rest of its object loads and counts', async (t) => {
  const { openBpf } = await import('../../src/samplers/kernel/load.js');
  const { silentLogger } = await import('../../src/log/logger.js');
  const bpf = openBpf(
    {
      object: 'test/reject',
      programs: [
        { name: 'good', event: 'sched_switch' },
        { name: 'bad', event: 'sched_switch' },
      ],
      maps: { counters: { kind: 'counters', width: 8 } },
    },
    { sampler: 'test_reject', log: silentLogger() },
  );
  try {
    t.deepEqual(bpf.attached, ['good']);
    t.is(bpf.degraded.length, 1);
    t.regex(bpf.degraded[0] ?? '', /^bad: load .*reject\.bpf\.o: EACCES \(.*invalid mem access/);
    const counters = bpf.counters('counters');
    await sleep(100);
    t.true(Number(counters.total(0)) > 0, 'the good program counts switches');
    t.is(counters.total(1), 0);
  } finally {
    bpf.close();
  }
});

test.serial('of two variants of a tracepoint program, only the one for this kernel\'s arguments attaches', async (t) => {
  const { loadNative } = await import('../../src/native/index.js');
  const k = await KernelHarness.start(['tcp_retransmit']);
  try {
    t.deepEqual(k.status('tcp_retransmit').status, { state: 'active' });
    const args = loadNative().btfTracepointArgs('tcp_retransmit_skb');
    const { loadedObjects } = await import('../../src/samplers/kernel/loaded.js');
    const object = loadedObjects().find(([name]) => name === 'tcp_retransmit')?.[1];
    const attached = object?.programs().filter((p) => p.attached).map((p) => p.name);
    t.deepEqual(attached, [args === 3 ? 'tcp_retransmit_skb' : 'tcp_retransmit_skb_v1']);
  } finally {
    await k.stop();
  }
});
