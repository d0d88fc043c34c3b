import type { BpfLayout } from '../../kernel/layout.js';
import { MAX_SYSCALL } from '../classes.js';

/** Mirrors bpf/syscall/counts.bpf.c: slot k of a CPU's bank counts class k. */
export const LAYOUT = {
  object: 'syscall/counts',
  programs: [{ name: 'sys_enter', event: 'sys_enter' }],
  maps: {
    counters: { kind: 'counters', width: 16 },
    classes: { kind: 'table', valueSize: 4, entries: MAX_SYSCALL },
  },
} as const satisfies BpfLayout;
