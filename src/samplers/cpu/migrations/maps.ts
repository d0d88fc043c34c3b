import type { BpfLayout } from '../../kernel/layout.js';

/** Mirrors bpf/cpu/migrations.bpf.c. */
export const LAYOUT = {
  object: 'cpu/migrations',
  programs: [{ name: 'sched_migrate_task', event: 'sched_migrate_task' }],
  maps: {
    counters: { kind: 'counters', width: 8 },
  },
} as const satisfies BpfLayout;

/** Slots of the per-CPU counter bank. */
export const MIGRATE_FROM = 0;
export const MIGRATE_TO = 1;
