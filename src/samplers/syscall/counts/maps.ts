import type { BpfLayout } from '../../kernel/layout.js';
import { MAX_CGROUPS } from '../../kernel/per-cgroup.js';
import { MAX_SYSCALL } from '../classes.js';

/** Mirrors bpf/syscall/counts.bpf.c: slot k of a CPU's bank counts class k. */
export const LAYOUT = {
  object: 'syscall/counts',
  programs: [{ name: 'sys_enter', event: 'sys_enter' }],
  maps: {
    counters: { kind: 'counters', width: 16 },
    classes: { kind: 'table', valueSize: 4, entries: MAX_SYSCALL },
    /** css.id of the task's cpu cgroup x 16 classes */
    cgroup_syscall: { kind: 'packed', entries: MAX_CGROUPS * 16 },
    /** css.serial_nr of the cgroup that owns each slot */
    cgroup_serial: { kind: 'packed', entries: MAX_CGROUPS },
    /** kernfs id (directory inode) of the cgroup that owns each slot */
    cgroup_inode: { kind: 'packed', entries: MAX_CGROUPS },
  },
} as const satisfies BpfLayout;
