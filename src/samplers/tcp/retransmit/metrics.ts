import { metric, MetricKind, Unit } from '../../../metrics/metric.js';

export const tcpRetransmit = metric({
  name: 'tcp_retransmit',
  kind: MetricKind.Counter,
  unit: Unit.Packets,
  labels: [],
  description:
    'TCP segments retransmitted (timeouts, fast and SYN retransmits; failed attempts not counted); BPF on tp_btf tcp_retransmit_skb.',
});

export const METRICS = [tcpRetransmit] as const;
