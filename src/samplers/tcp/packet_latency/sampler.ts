import type { Sampler, SamplerContext, SamplerDefinition } from '../../types.js';
import { NO_LABELS } from '../../types.js';
import { openBpf } from '../../kernel/load.js';
import { LAYOUT } from './maps.js';
import { METRICS, tcpPacketLatency } from './metrics.js';

const NAME = 'tcp_packet_latency';

export const tcpPacketLatencySampler: SamplerDefinition = {
  name: NAME,
  description: 'Time received TCP data waits until the application reads it (BPF, tp_btf tcp_probe, tcp_rcv_space_adjust, tcp_destroy_sock).',
  metrics: METRICS,
  kernel: true,
  layouts: [LAYOUT],
  async init(ctx: SamplerContext): Promise<Sampler> {
    const bpf = openBpf(LAYOUT, { sampler: NAME, log: ctx.log, ...(ctx.bpfEvents ? { events: ctx.bpfEvents } : {}) });
    const latency = bpf.histogram('packet_latency');
    return {
      name: NAME,
      metrics: METRICS,
      ...(bpf.degraded.length > 0 ? { degraded: bpf.degraded.join('; ') } : {}),
      async refresh() {
        return { points: [{ metric: tcpPacketLatency, labels: NO_LABELS, value: latency.read() }], skipped: 0 };
      },
      async close(): Promise<void> {
        bpf.close();
      },
    };
  },
};
