import type { BpfLayout } from '../../kernel/layout.js';

/** Mirrors bpf/cpu/softirq.bpf.c. */
export const LAYOUT = {
  object: 'cpu/softirq',
  programs: [
    { name: 'softirq_entry', event: 'softirq_entry' },
    { name: 'softirq_exit', event: 'softirq_exit' },
  ],
  maps: {
    counters: { kind: 'counters', width: 24 },
    started_at: { kind: 'per-cpu', valueSize: 8 },
  },
} as const satisfies BpfLayout;

/** Softirq vectors 0..9 in kernel order (enum HI_SOFTIRQ..RCU_SOFTIRQ): the `kind` label. */
export const KINDS = ['hi', 'timer', 'net_tx', 'net_rx', 'block', 'irq_poll', 'tasklet', 'sched', 'hrtimer', 'rcu'] as const;

/** Bank slots: vector v counts in slot v, its nanoseconds in slot TIME_BASE + v. */
export const TIME_BASE = 12;
