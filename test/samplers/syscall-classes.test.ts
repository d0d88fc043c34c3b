import test from 'ava';
import { classTable, EXEC, SYSCALL_CLASSES, UNTIMED } from '../../src/samplers/syscall/classes.js';
import { X86_64_SYSCALLS } from '../../src/samplers/syscall/x86_64.js';

const cls = (entry: number): string | undefined => SYSCALL_CLASSES[entry & 255];

test('the lookup table gives each syscall number its class; exit and exit_group, which never return, are also UNTIMED, execve and execveat EXEC', (t) => {
  const table = classTable();
  t.is(cls(table[X86_64_SYSCALLS.getppid!]!), 'query');
  t.is(cls(table[X86_64_SYSCALLS.read!]!), 'read');
  for (const name of ['exit', 'exit_group']) {
    const entry = table[X86_64_SYSCALLS[name]!]!;
    t.is(cls(entry), 'process', name);
    t.is(entry & UNTIMED, UNTIMED, `${name} is not stamped: it never returns, and its stamp would outlive the thread`);
  }
  const untimed = [...table.entries()].filter(([, v]) => (v & UNTIMED) !== 0).map(([nr]) => nr).sort((a, b) => a - b);
  t.deepEqual(untimed, [X86_64_SYSCALLS.exit!, X86_64_SYSCALLS.exit_group!].sort((a, b) => a - b), 'nothing else');
  const execs = [...table.entries()].filter(([, v]) => (v & EXEC) !== 0).map(([nr]) => nr).sort((a, b) => a - b);
  t.deepEqual(execs, [X86_64_SYSCALLS.execve!, X86_64_SYSCALLS.execveat!].sort((a, b) => a - b), 'EXEC: execve and execveat');
  t.is(cls(table[X86_64_SYSCALLS.execve!]!), 'process');
  t.true(table.every((v) => (v & 255) < SYSCALL_CLASSES.length));
});
