import type { BpfLayout } from '../../kernel/layout.js';

/** Mirrors bpf/tcp/connect_latency.bpf.c. */
export const LAYOUT = {
  object: 'tcp/connect_latency',
  programs: [{ name: 'inet_sock_set_state', event: 'inet_sock_set_state' }],
  maps: {
    connect_latency: { kind: 'histograms', count: 1 },
    counters: { kind: 'counters', width: 8 },
    connect_start: { kind: 'hash', keySize: 8, valueSize: 8, entries: 10240 },
  },
} as const satisfies BpfLayout;

/** Slot of the per-CPU counter bank. */
export const CONNECT_FAILED = 0;
