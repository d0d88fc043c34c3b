import type { Reading, SamplerDefinition } from '../../types.js';
import { NO_LABELS } from '../../types.js';
import { defineBpfSampler } from '../../kernel/define.js';
import { LAYOUT } from './maps.js';
import { METRICS, tcpPacketLatency } from './metrics.js';

const NAME = 'tcp_packet_latency';

export const tcpPacketLatencySampler: SamplerDefinition = defineBpfSampler({
  name: NAME,
  description: 'Time received TCP data waits until the application reads it (BPF, tp_btf tcp_probe, tcp_rcv_space_adjust, tcp_destroy_sock).',
  metrics: METRICS,
  layout: LAYOUT,
  reader(bpf) {
    const latency = bpf.histogram('packet_latency');
    return (): Reading => {
      return { points: [{ metric: tcpPacketLatency, labels: NO_LABELS, value: latency.read() }], skipped: 0 };
    };
  },
});
