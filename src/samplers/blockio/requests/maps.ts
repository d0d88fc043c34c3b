import type { BpfLayout } from '../../kernel/layout.js';

/** Mirrors bpf/blockio/requests.bpf.c. */
export const LAYOUT = {
  object: 'blockio/requests',
  programs: [
    { name: 'block_rq_complete', event: 'block_rq_complete' },
    { name: 'block_rq_requeue', event: 'block_rq_requeue' },
  ],
  maps: {
    size: { kind: 'histograms', count: 4 },
    counters: { kind: 'counters', width: 40 },
  },
} as const satisfies BpfLayout;

/** The ops, in the order of their index (REQ_OP_READ 0 .. REQ_OP_DISCARD 3). */
export const OPS = ['read', 'write', 'flush', 'discard'] as const;

/** The error kinds, in the order of their index in the C. */
export const ERROR_KINDS = ['io', 'timeout', 'nospc', 'target', 'protection', 'unsupported', 'other'] as const;

/** Slots of the per-CPU counter bank: each block holds one slot per op. */
export const OPERATIONS = 0;
export const BYTES = 4;
export const REQUEUES = 8;
/** errors of op o and kind e at ERRORS + o * ERROR_KINDS.length + e */
export const ERRORS = 12;
