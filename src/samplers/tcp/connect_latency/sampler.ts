import type { Sampler, SamplerContext, SamplerDefinition } from '../../types.js';
import { NO_LABELS } from '../../types.js';
import { openBpf } from '../../kernel/load.js';
import { CONNECT_FAILED, LAYOUT } from './maps.js';
import { METRICS, tcpConnectFailed, tcpConnectLatency } from './metrics.js';

const NAME = 'tcp_connect_latency';

export const tcpConnectLatencySampler: SamplerDefinition = {
  name: NAME,
  description: 'TCP active-open handshake latency and failed connects (BPF, tp_btf inet_sock_set_state).',
  metrics: METRICS,
  kernel: true,
  layouts: [LAYOUT],
  async init(ctx: SamplerContext): Promise<Sampler> {
    const bpf = openBpf(LAYOUT, { sampler: NAME, log: ctx.log, ...(ctx.bpfEvents ? { events: ctx.bpfEvents } : {}) });
    const latency = bpf.histogram('connect_latency');
    const counters = bpf.counters('counters');
    return {
      name: NAME,
      metrics: METRICS,
      ...(bpf.degraded.length > 0 ? { degraded: bpf.degraded.join('; ') } : {}),
      async refresh() {
        return {
          points: [
            { metric: tcpConnectLatency, labels: NO_LABELS, value: latency.read() },
            { metric: tcpConnectFailed, labels: NO_LABELS, value: counters.total(CONNECT_FAILED) },
          ],
          skipped: 0,
        };
      },
      async close(): Promise<void> {
        bpf.close();
      },
    };
  },
};
