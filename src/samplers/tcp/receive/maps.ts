import type { BpfLayout } from '../../kernel/layout.js';

/** Mirrors bpf/tcp/receive.bpf.c. */
export const LAYOUT = {
  object: 'tcp/receive',
  programs: [{ name: 'tcp_probe', event: 'tcp_probe' }],
  maps: {
    srtt: { kind: 'histograms', count: 1 },
    jitter: { kind: 'histograms', count: 1 },
  },
} as const satisfies BpfLayout;
