/* tcp_retransmit: TCP segments retransmitted, per CPU. tp_btf
 * tcp_retransmit_skb fires after every retransmit attempt with its error
 * (since 6.13; older kernels fire on success only and have no err argument,
 * which then reads as 0); only successful ones count, by the skb's segment
 * count (a retransmitted skb may carry several MSS-sized segments). Layout
 * mirrored in src/samplers/tcp/retransmit/maps.ts. */
#include "common.h"
#include "counters.h"

#define BANK_WIDTH 8
#define RETRANSMIT_SEGMENTS 0

COUNTER_BANK(counters, BANK_WIDTH);

SEC("tp_btf/tcp_retransmit_skb")
int BPF_PROG(tcp_retransmit_skb, const struct sock *sk, const struct sk_buff *skb, int err)
{
  if (err) return 0;
  struct tcp_skb_cb *cb = (void *)skb->cb;
  u64 segs = BPF_CORE_READ(cb, tcp_gso_segs);
  counter_add(&counters, BANK_WIDTH, RETRANSMIT_SEGMENTS, segs > 0 ? segs : 1);
  return 0;
}
