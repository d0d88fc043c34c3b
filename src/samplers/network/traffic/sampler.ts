import type { Labels, Reading, SamplerDefinition } from '../../types.js';
import { defineBpfSampler } from '../../kernel/define.js';
import { LAYOUT, RX_BYTES, RX_PACKETS, SIZE_RECEIVE, SIZE_TRANSMIT, TX_BYTES, TX_PACKETS } from './maps.js';
import { METRICS, networkBytes, networkPackets, networkSize } from './metrics.js';

const NAME = 'network_traffic';
const RECEIVE: Labels = Object.freeze({ direction: 'receive' });
const TRANSMIT: Labels = Object.freeze({ direction: 'transmit' });

export const networkTrafficSampler: SamplerDefinition = defineBpfSampler({
  name: NAME,
  description: 'Bytes, packets and skb sizes received and transmitted by all network devices (BPF, tp_btf netif_receive_skb, net_dev_start_xmit).',
  metrics: METRICS,
  layout: LAYOUT,
  reader(bpf) {
    const counters = bpf.counters('counters');
    const rxSize = bpf.histogram('size', SIZE_RECEIVE);
    const txSize = bpf.histogram('size', SIZE_TRANSMIT);
    return (): Reading => {
      return {
        points: [
          { metric: networkBytes, labels: RECEIVE, value: counters.total(RX_BYTES) },
          { metric: networkBytes, labels: TRANSMIT, value: counters.total(TX_BYTES) },
          { metric: networkPackets, labels: RECEIVE, value: counters.total(RX_PACKETS) },
          { metric: networkPackets, labels: TRANSMIT, value: counters.total(TX_PACKETS) },
          { metric: networkSize, labels: RECEIVE, value: rxSize.read() },
          { metric: networkSize, labels: TRANSMIT, value: txSize.read() },
        ],
        skipped: 0,
      };
    };
  },
});
