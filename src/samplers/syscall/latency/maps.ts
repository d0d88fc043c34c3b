import type { BpfLayout } from '../../kernel/layout.js';
import { MAX_SYSCALL, SYSCALL_CLASSES } from '../classes.js';

/** Mirrors bpf/syscall/latency.bpf.c: histogram k of `latency` is class k. */
export const LAYOUT = {
  object: 'syscall/latency',
  programs: [
    { name: 'sys_enter', event: 'sys_enter' },
    { name: 'sys_exit', event: 'sys_exit' },
  ],
  maps: {
    latency: { kind: 'histograms', count: SYSCALL_CLASSES.length },
    classes: { kind: 'table', valueSize: 4, entries: MAX_SYSCALL },
    /** struct start { u64 ts; u32 cls; u32 pad; } per thread id */
    started: { kind: 'per-pid', valueSize: 16 },
  },
} as const satisfies BpfLayout;
