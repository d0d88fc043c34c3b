import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import test from 'ava';
import { parseSchedstatMs, parseStatCpuMs, threadCpuMs } from '../../src/exporter/thread-cpu.js';

const FIXTURES = join(import.meta.dirname, '..', 'fixtures', 'thread-cpu');

test('schedstat: the first field is ns on CPU; zeros (no schedstat kept) and other text are not a figure', (t) => {
  t.is(parseSchedstatMs(readFileSync(join(FIXTURES, 'schedstat'), 'utf8')), 75.500773);
  t.is(parseSchedstatMs('0 0 1\n'), undefined);
  t.is(parseSchedstatMs(''), undefined);
  t.is(parseSchedstatMs('x 1 2'), undefined);
});

test('stat: utime + stime in clock ticks, after a name that may hold spaces and parentheses', (t) => {
  t.is(parseStatCpuMs(readFileSync(join(FIXTURES, 'stat'), 'utf8')), 60);
  t.is(parseStatCpuMs('1 (a) b) c) R 1 1 1 0 -1 0 0 0 0 0 7 3 0 0 20 0'), 100, 'utime 7 + stime 3 ticks');
  t.is(parseStatCpuMs('1 (node) R 1 2'), undefined, 'cut short');
  t.is(parseStatCpuMs('garbage'), undefined);
});

test('this thread: busy work shows, and a busy worker thread does not', async (t) => {
  const { Worker } = await import('node:worker_threads');
  const spin = new Worker('const end = Date.now() + 400; while (Date.now() < end);', { eval: true });
  const before = threadCpuMs();
  const process0 = process.cpuUsage();
  await new Promise((r) => setTimeout(r, 300));
  const idle = threadCpuMs() - before;
  const processMs = (process.cpuUsage(process0).user + process.cpuUsage(process0).system) / 1000;
  await new Promise<void>((r) => spin.once('exit', () => r()));
  t.true(idle < 100, `this thread used ${idle} ms while it slept`);
  t.true(processMs > idle, `the process used ${processMs} ms`);
  // busy until the process has used 100 ms of CPU (not of the clock: a busy machine gives less),
  // nearly all of it this thread's now that the worker is gone
  const start = threadCpuMs();
  const process1 = process.cpuUsage();
  const deadline = performance.now() + 20_000;
  let busyMs = 0;
  while (busyMs < 100 && performance.now() < deadline) {
    const u = process.cpuUsage(process1);
    busyMs = (u.user + u.system) / 1000;
  }
  const counted = threadCpuMs() - start;
  t.true(counted >= 0.5 * busyMs && busyMs >= 100, `${busyMs} ms of the process's CPU, ${counted} ms counted for this thread`);
});
