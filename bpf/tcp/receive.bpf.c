/* tcp_receive: the smoothed RTT and its mean deviation of TCP connections,
 * sampled on every segment received in ESTABLISHED state, as h2 histograms in
 * ns. tp_btf tcp_probe, which fires at the top of tcp_rcv_established, the
 * function upstream kprobes. srtt_us holds 8x the RTT and mdev_us 4x the
 * deviation, both in us. Layout mirrored in src/samplers/tcp/receive/maps.ts. */
#include "common.h"
#include "histogram.h"

HISTOGRAM_MAP(srtt, 1);
HISTOGRAM_MAP(jitter, 1);

SEC("tp_btf/tcp_probe")
int BPF_PROG(tcp_probe, struct sock *sk, const struct sk_buff *skb)
{
  struct tcp_sock *tp = (struct tcp_sock *)sk;
  u64 srtt_us = BPF_CORE_READ(tp, srtt_us) >> 3;
  u64 mdev_us = BPF_CORE_READ(tp, mdev_us) >> 2;
  histogram_add(&srtt, 0, srtt_us * 1000);
  histogram_add(&jitter, 0, mdev_us * 1000);
  return 0;
}
