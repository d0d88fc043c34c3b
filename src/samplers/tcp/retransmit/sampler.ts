import type { Reading, SamplerDefinition } from '../../types.js';
import { NO_LABELS } from '../../types.js';
import { defineBpfSampler } from '../../kernel/define.js';
import { LAYOUT, RETRANSMIT_SEGMENTS } from './maps.js';
import { METRICS, tcpRetransmit } from './metrics.js';

const NAME = 'tcp_retransmit';

export const tcpRetransmitSampler: SamplerDefinition = defineBpfSampler({
  name: NAME,
  description: 'TCP segments retransmitted (BPF, tp_btf tcp_retransmit_skb).',
  metrics: METRICS,
  layout: LAYOUT,
  reader(bpf) {
    const counters = bpf.counters('counters');
    return (): Reading => {
      return { points: [{ metric: tcpRetransmit, labels: NO_LABELS, value: counters.total(RETRANSMIT_SEGMENTS) }], skipped: 0 };
    };
  },
});
