import type { Reading, SamplerDefinition } from '../../types.js';
import { NO_LABELS } from '../../types.js';
import { defineBpfSampler } from '../../kernel/define.js';
import { CONNECT_FAILED, LAYOUT } from './maps.js';
import { METRICS, tcpConnectFailed, tcpConnectLatency } from './metrics.js';

const NAME = 'tcp_connect_latency';

export const tcpConnectLatencySampler: SamplerDefinition = defineBpfSampler({
  name: NAME,
  description: 'TCP active-open handshake latency and failed connects (BPF, tp_btf inet_sock_set_state).',
  metrics: METRICS,
  layout: LAYOUT,
  reader(bpf) {
    const latency = bpf.histogram('connect_latency');
    const counters = bpf.counters('counters');
    return (): Reading => {
      return {
        points: [
          { metric: tcpConnectLatency, labels: NO_LABELS, value: latency.read() },
          { metric: tcpConnectFailed, labels: NO_LABELS, value: counters.total(CONNECT_FAILED) },
        ],
        skipped: 0,
      };
    };
  },
});
