import { metric, MetricKind, Unit } from '../../../metrics/metric.js';

export const networkDrop = metric({
  name: 'network_drop',
  kind: MetricKind.Counter,
  unit: Unit.Packets,
  labels: [],
  description:
    'Packets the kernel dropped, for any skb_drop_reason (consumed packets are not drops); BPF on tp_btf kfree_skb.',
});

export const networkDropReason = metric({
  name: 'network_drop_reason',
  kind: MetricKind.Counter,
  unit: Unit.Packets,
  labels: ['reason'],
  description:
    'Packets the kernel dropped, by reason: the skb_drop_reason member without SKB_DROP_REASON_, lower case ' +
    '(names from the kernel BTF; other = reasons of other subsystems); a reason appears once it has counted a drop; ' +
    'BPF on tp_btf kfree_skb.',
});

export const METRICS = [networkDrop, networkDropReason] as const;
