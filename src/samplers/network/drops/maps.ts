import type { BpfLayout } from '../../kernel/layout.js';

/** Mirrors bpf/network/drops.bpf.c. */
export const LAYOUT = {
  object: 'network/drops',
  programs: [{ name: 'kfree_skb', event: 'kfree_skb' }],
  maps: {
    drops: { kind: 'counters', width: 256 },
  },
} as const satisfies BpfLayout;

/** Slot 0 of a CPU's bank: every drop. */
export const DROP_TOTAL = 0;
/** Slots FIRST_REASON..OTHER_REASON-1: skb_drop_reason values (0 and 1 are not drops). */
export const FIRST_REASON = 2;
/** Reasons of other subsystems, or past the bank. */
export const OTHER_REASON = 255;
