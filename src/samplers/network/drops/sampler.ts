import type { Labels, Point, Reading, SamplerDefinition } from '../../types.js';
import { NO_LABELS } from '../../types.js';
import { defineBpfSampler } from '../../kernel/define.js';
import { DROP_TOTAL, FIRST_REASON, LAYOUT, OTHER_REASON } from './maps.js';
import { METRICS, networkDrop, networkDropReason } from './metrics.js';

const NAME = 'network_drops';
const PREFIX = 'SKB_DROP_REASON_';
/** enum members that are bounds or masks, not reasons */
const NOT_REASONS = new Set(['SKB_DROP_REASON_MAX', 'SKB_DROP_REASON_SUBSYS_MASK']);

/** One frozen `{ reason }` label per bank slot, named from the kernel's skb_drop_reason enum. */
export function reasonLabels(members: Readonly<Record<string, number>> | null): readonly Labels[] {
  const names = new Map<number, string>();
  for (const [name, value] of Object.entries(members ?? {})) {
    if (!name.startsWith(PREFIX) || NOT_REASONS.has(name)) continue;
    if (value < FIRST_REASON || value >= OTHER_REASON || names.has(value)) continue;
    names.set(value, name.slice(PREFIX.length).toLowerCase());
  }
  return Array.from({ length: OTHER_REASON + 1 }, (_, r) =>
    Object.freeze({ reason: r === OTHER_REASON ? 'other' : (names.get(r) ?? `unknown_${r}`) }),
  );
}

export const networkDropsSampler: SamplerDefinition = defineBpfSampler({
  name: NAME,
  description: 'Packets dropped by the kernel, in total and by skb_drop_reason (BPF, tp_btf kfree_skb).',
  metrics: METRICS,
  layout: LAYOUT,
  reader(bpf) {
    const drops = bpf.counters('drops');
    const labels = reasonLabels(bpf.native.btfEnum('skb_drop_reason'));
    // Reasons that have counted a drop, ascending: published from then on, so
    // the series layout only grows, and only when a new reason first shows.
    const seen: number[] = [];
    const isSeen = new Uint8Array(OTHER_REASON + 1);
    return (): Reading => {
      const points: Point[] = [{ metric: networkDrop, labels: NO_LABELS, value: drops.total(DROP_TOTAL) }];
      let grew = false;
      // the reasons with a drop on some CPU, by one scan of the bank rather than a total per reason
      for (const r of drops.touched()) {
        if (r < FIRST_REASON || r > OTHER_REASON || isSeen[r] === 1) continue;
        isSeen[r] = 1;
        seen.push(r);
        grew = true;
      }
      if (grew) seen.sort((a, b) => a - b);
      for (const r of seen) points.push({ metric: networkDropReason, labels: labels[r]!, value: drops.total(r) });
      return { points, skipped: 0 };
    };
  },
});
