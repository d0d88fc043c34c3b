import type { BpfLayout } from '../../kernel/layout.js';

/** Mirrors bpf/tcp/retransmit.bpf.c. */
export const LAYOUT = {
  object: 'tcp/retransmit',
  programs: [
    // one per version of the tracepoint's arguments: the loader picks the one this kernel has
    { name: 'tcp_retransmit_skb', event: 'tcp_retransmit_skb', args: 3 },
    { name: 'tcp_retransmit_skb_v1', event: 'tcp_retransmit_skb', args: 2 },
  ],
  maps: {
    counters: { kind: 'counters', width: 8 },
  },
} as const satisfies BpfLayout;

/** Slot of the per-CPU counter bank. */
export const RETRANSMIT_SEGMENTS = 0;
