import type { BpfLayout } from '../../kernel/layout.js';

/** Mirrors bpf/tcp/packet_latency.bpf.c. */
export const LAYOUT = {
  object: 'tcp/packet_latency',
  programs: [
    { name: 'tcp_probe', event: 'tcp_probe' },
    { name: 'tcp_rcv_space_adjust', event: 'tcp_rcv_space_adjust' },
    { name: 'tcp_destroy_sock', event: 'tcp_destroy_sock' },
  ],
  maps: {
    packet_latency: { kind: 'histograms', count: 1 },
    arrived: { kind: 'hash', keySize: 8, valueSize: 8, entries: 16384 },
  },
} as const satisfies BpfLayout;
