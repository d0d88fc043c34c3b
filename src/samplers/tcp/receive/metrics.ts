import { metric, MetricKind, Unit } from '../../../metrics/metric.js';

export const tcpSrtt = metric({
  name: 'tcp_srtt',
  kind: MetricKind.Histogram,
  unit: Unit.Nanoseconds,
  labels: [],
  description:
    'Smoothed round-trip time of TCP connections (tcp_sock srtt_us / 8), sampled on every segment received while established; ' +
    'BPF on tp_btf tcp_probe.',
});

export const tcpJitter = metric({
  name: 'tcp_jitter',
  kind: MetricKind.Histogram,
  unit: Unit.Nanoseconds,
  labels: [],
  description:
    'Mean deviation of the round-trip time of TCP connections (tcp_sock mdev_us / 4), sampled on every segment received ' +
    'while established; BPF on tp_btf tcp_probe.',
});

export const METRICS = [tcpSrtt, tcpJitter] as const;
