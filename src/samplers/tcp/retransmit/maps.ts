import type { BpfLayout } from '../../kernel/layout.js';

/** Mirrors bpf/tcp/retransmit.bpf.c. */
export const LAYOUT = {
  object: 'tcp/retransmit',
  programs: [{ name: 'tcp_retransmit_skb', event: 'tcp_retransmit_skb' }],
  maps: {
    counters: { kind: 'counters', width: 8 },
  },
} as const satisfies BpfLayout;

/** Slot of the per-CPU counter bank. */
export const RETRANSMIT_SEGMENTS = 0;
