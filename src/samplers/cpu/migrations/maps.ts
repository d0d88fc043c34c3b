import type { BpfLayout } from '../../kernel/layout.js';
import { MAX_CGROUPS } from '../../kernel/per-cgroup.js';

/** Mirrors bpf/cpu/migrations.bpf.c. */
export const LAYOUT = {
  object: 'cpu/migrations',
  programs: [{ name: 'sched_migrate_task', event: 'sched_migrate_task' }],
  maps: {
    counters: { kind: 'counters', width: 8 },
    /** migrations per cgroup slot (bpf/include/cgroup.h) */
    cgroup_migrations: { kind: 'packed', entries: MAX_CGROUPS },
    cgroup_serial: { kind: 'packed', entries: MAX_CGROUPS },
    cgroup_inode: { kind: 'packed', entries: MAX_CGROUPS },
  },
} as const satisfies BpfLayout;

/** Slots of the per-CPU counter bank. */
export const MIGRATE_FROM = 0;
export const MIGRATE_TO = 1;
