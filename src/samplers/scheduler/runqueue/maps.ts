import type { BpfLayout } from '../../kernel/layout.js';
import { MAX_CGROUPS } from '../../kernel/per-cgroup.js';

/** Mirrors bpf/scheduler/runqueue.bpf.c. */
export const LAYOUT = {
  object: 'scheduler/runqueue',
  programs: [
    { name: 'sched_wakeup', event: 'sched_wakeup' },
    { name: 'sched_wakeup_new', event: 'sched_wakeup_new' },
    { name: 'sched_switch', event: 'sched_switch' },
  ],
  maps: {
    runqueue_latency: { kind: 'histograms', count: 1 },
    running: { kind: 'histograms', count: 1 },
    offcpu: { kind: 'histograms', count: 1 },
    counters: { kind: 'counters', width: 8 },
    enqueued_at: { kind: 'per-pid', valueSize: 8 },
    oncpu_at: { kind: 'per-pid', valueSize: 8 },
    offcpu_at: { kind: 'per-pid', valueSize: 8 },
    /** summed runqueue wait per cgroup slot (bpf/include/cgroup.h) */
    cgroup_runqueue_wait: { kind: 'packed', entries: MAX_CGROUPS },
    cgroup_serial: { kind: 'packed', entries: MAX_CGROUPS },
    cgroup_inode: { kind: 'packed', entries: MAX_CGROUPS },
  },
} as const satisfies BpfLayout;

/** Slots of the per-CPU counter bank. */
export const CS_INVOLUNTARY = 0;
export const CS_VOLUNTARY = 1;
export const RUNQUEUE_WAIT = 2;
