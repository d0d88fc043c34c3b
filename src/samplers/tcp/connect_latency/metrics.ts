import { metric, MetricKind, Unit } from '../../../metrics/metric.js';

export const tcpConnectLatency = metric({
  name: 'tcp_connect_latency',
  kind: MetricKind.Histogram,
  unit: Unit.Nanoseconds,
  labels: [],
  description:
    'Time for active TCP opens to complete the handshake, from entering SYN_SENT to ESTABLISHED; BPF on tp_btf inet_sock_set_state.',
});

export const tcpConnectFailed = metric({
  name: 'tcp_connect_failed',
  kind: MetricKind.Counter,
  unit: Unit.Events,
  labels: [],
  description:
    'Active TCP opens that failed: SYN_SENT to CLOSE (reset, timeout or error); BPF on tp_btf inet_sock_set_state.',
});

export const METRICS = [tcpConnectLatency, tcpConnectFailed] as const;
