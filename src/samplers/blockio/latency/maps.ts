import type { BpfLayout } from '../../kernel/layout.js';

/** Mirrors bpf/blockio/latency.bpf.c. */
export const LAYOUT = {
  object: 'blockio/latency',
  programs: [
    { name: 'block_rq_issue', event: 'block_rq_issue' },
    { name: 'block_rq_complete', event: 'block_rq_complete' },
  ],
  maps: {
    latency: { kind: 'histograms', count: 4 },
    issued_at: { kind: 'hash', keySize: 8, valueSize: 8, entries: 65_536 },
  },
} as const satisfies BpfLayout;

/** The ops, in the order of their histogram (REQ_OP_READ 0 .. REQ_OP_DISCARD 3). */
export const OPS = ['read', 'write', 'flush', 'discard'] as const;
