import { metric, MetricKind, Unit } from '../../../metrics/metric.js';

export const tcpPacketLatency = metric({
  name: 'tcp_packet_latency',
  kind: MetricKind.Histogram,
  unit: Unit.Nanoseconds,
  labels: [],
  description:
    'Time received TCP data waited for the application: from the oldest unread segment with payload (tp_btf tcp_probe) ' +
    'to the next read of the socket (tp_btf tcp_rcv_space_adjust); BPF.',
});

export const METRICS = [tcpPacketLatency] as const;
