import test from 'ava';
import { classOf, SYSCALL_CLASSES } from '../../src/samplers/syscall/classes.js';
import { count, KernelHarness, node, sumOf, window } from '../helpers/kernel.js';

let k: KernelHarness;
test.before(async () => {
  k = await KernelHarness.start(['syscall_counts', 'syscall_latency']);
});
test.after.always(async () => {
  await k?.stop();
});

const N = 200_000;
// process.ppid calls getppid(2) on every read
const GETPPID = `let s = 0; for (let i = 0; i < ${N}; i++) s += process.ppid; if (s === 0) process.exit(1);`;

test.serial('both syscall samplers load whole', (t) => {
  t.deepEqual(k.status('syscall_counts').status, { state: 'active' });
  t.deepEqual(k.status('syscall_latency').status, { state: 'active' });
});

test.serial(`${N} getppid calls from a child: syscall{op=query} and its latency count rise by at least ${N}`, async (t) => {
  t.is(SYSCALL_CLASSES[classOf('getppid')], 'query');
  const a = await k.read('syscall_counts');
  const la = await k.read('syscall_latency');
  await node(GETPPID);
  const b = await k.read('syscall_counts');
  const lb = await k.read('syscall_latency');
  const counted = sumOf(b, 'syscall', { op: 'query' }) - sumOf(a, 'syscall', { op: 'query' });
  const timed = count(window(la.get('syscall_latency{op=query}'), lb.get('syscall_latency{op=query}')));
  t.log(`query syscalls: ${counted} counted, ${timed} timed for ${N} getppid calls`);
  t.true(counted >= N);
  t.true(timed >= N);
  // and the other classes are there, with the child's own start-up in them
  t.true(sumOf(b, 'syscall', { op: 'memory' }) > sumOf(a, 'syscall', { op: 'memory' }));
  t.is([...b.keys()].filter((key) => key.startsWith('syscall{')).length, SYSCALL_CLASSES.length);
});
