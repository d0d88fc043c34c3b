import type { BpfLayout } from '../../kernel/layout.js';

/** Mirrors bpf/network/traffic.bpf.c. */
export const LAYOUT = {
  object: 'network/traffic',
  programs: [
    { name: 'netif_receive_skb', event: 'netif_receive_skb' },
    { name: 'net_dev_start_xmit', event: 'net_dev_start_xmit' },
  ],
  maps: {
    counters: { kind: 'counters', width: 8 },
    size: { kind: 'histograms', count: 2 },
  },
} as const satisfies BpfLayout;

/** Slots of the per-CPU counter bank. */
export const RX_BYTES = 0;
export const RX_PACKETS = 1;
export const TX_BYTES = 2;
export const TX_PACKETS = 3;

/** Histograms of the `size` map. */
export const SIZE_RECEIVE = 0;
export const SIZE_TRANSMIT = 1;
