import type { Sampler, SamplerContext, SamplerDefinition } from '../../types.js';
import { NO_LABELS } from '../../types.js';
import { openBpf } from '../../kernel/load.js';
import { LAYOUT, RETRANSMIT_SEGMENTS } from './maps.js';
import { METRICS, tcpRetransmit } from './metrics.js';

const NAME = 'tcp_retransmit';

export const tcpRetransmitSampler: SamplerDefinition = {
  name: NAME,
  description: 'TCP segments retransmitted (BPF, tp_btf tcp_retransmit_skb).',
  metrics: METRICS,
  kernel: true,
  layouts: [LAYOUT],
  async init(ctx: SamplerContext): Promise<Sampler> {
    const bpf = openBpf(LAYOUT, { sampler: NAME, log: ctx.log, ...(ctx.bpfEvents ? { events: ctx.bpfEvents } : {}) });
    const counters = bpf.counters('counters');
    return {
      name: NAME,
      metrics: METRICS,
      ...(bpf.degraded.length > 0 ? { degraded: bpf.degraded.join('; ') } : {}),
      async refresh() {
        return { points: [{ metric: tcpRetransmit, labels: NO_LABELS, value: counters.total(RETRANSMIT_SEGMENTS) }], skipped: 0 };
      },
      async close(): Promise<void> {
        bpf.close();
      },
    };
  },
};
