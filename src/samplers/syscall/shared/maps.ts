import type { BpfLayout } from '../../kernel/layout.js';
import { CGROUP_STRIPES, MAX_CGROUPS } from '../../kernel/per-cgroup.js';
import { MAX_SYSCALL, SYSCALL_CLASSES } from '../classes.js';

/** The flags of `classes` entries beside the class (UNTIMED and EXEC in the C). */
export { EXEC, UNTIMED } from '../classes.js';

/** Bits of the object's `enabled` global (bpf/syscall/shared.bpf.c). */
export const COUNTS = 1;
export const LATENCY = 2;
/** Slots of the `pending` map (PENDING_SLOTS in bpf/syscall/shared.bpf.c). */
export const PENDING_SLOTS = 65536;

/**
 * Mirrors bpf/syscall/shared.bpf.c, the one object of syscall_counts and
 * syscall_latency: slot k of a CPU's bank and histogram k of `latency` are
 * class k. The globals `enabled` and `epoch` live in its .bss map.
 */
export const LAYOUT = {
  object: 'syscall/shared',
  programs: [
    { name: 'sys_enter', event: 'sys_enter', raw: true },
    { name: 'sys_exit', event: 'sys_exit', raw: true },
  ],
  maps: {
    counters: { kind: 'counters', width: 16 },
    classes: { kind: 'table', valueSize: 4, entries: MAX_SYSCALL },
    /** css.id of the task's cpu cgroup x CGROUP_STRIPES copies x 16 classes (4 MiB) */
    cgroup_syscall: { kind: 'packed', entries: MAX_CGROUPS * CGROUP_STRIPES * 16 },
    /** css.serial_nr of the cgroup that owns each slot */
    cgroup_serial: { kind: 'packed', entries: MAX_CGROUPS },
    /** kernfs id (directory inode) of the cgroup that owns each slot */
    cgroup_inode: { kind: 'packed', entries: MAX_CGROUPS },
    latency: { kind: 'histograms', count: SYSCALL_CLASSES.length },
    /** struct start { u64 ts; u32 meta (class, shift, epoch); u32 rnd; } per thread id */
    started: { kind: 'per-pid', valueSize: 16 },
    /** stamps standing per slot of the stamping thread's pt_regs address: sys_exit skips the thread's stamp when 0 */
    pending: { kind: 'table', valueSize: 4, entries: PENDING_SLOTS },
  },
} as const satisfies BpfLayout;
