import { metric, MetricKind, Unit } from '../../../metrics/metric.js';

export const networkBytes = metric({
  name: 'network_bytes',
  kind: MetricKind.Counter,
  unit: Unit.Bytes,
  labels: ['direction'],
  description:
    'Bytes received (direction=receive) and transmitted (direction=transmit) by every network device, loopback included, ' +
    'as skb lengths; BPF on tp_btf netif_receive_skb and net_dev_start_xmit.',
});

export const networkPackets = metric({
  name: 'network_packets',
  kind: MetricKind.Counter,
  unit: Unit.Packets,
  labels: ['direction'],
  description:
    'Packets received and transmitted by every network device, counted as skbs: a GRO-merged or GSO skb counts once; ' +
    'BPF on tp_btf netif_receive_skb and net_dev_start_xmit.',
});

export const networkSize = metric({
  name: 'network_size',
  kind: MetricKind.Histogram,
  unit: Unit.Bytes,
  labels: ['direction'],
  description: 'Distribution of received and transmitted skb lengths; BPF on tp_btf netif_receive_skb and net_dev_start_xmit.',
});

export const METRICS = [networkBytes, networkPackets, networkSize] as const;
