/* tcp_retransmit: TCP segments retransmitted, per CPU, by the skb's segment
 * count (a retransmitted skb may carry several MSS-sized segments). tp_btf
 * tcp_retransmit_skb changed in 6.13: it fires after every attempt and
 * passes its error as a third argument (only err == 0 counts); before, it
 * fired on success only, with two arguments. A tp_btf program may not read
 * an argument the tracepoint lacks, so there is one program per version and
 * the loader picks the one this kernel's prototype matches. Layout mirrored
 * in src/samplers/tcp/retransmit/maps.ts. */
#include "common.h"
#include "counters.h"

#define BANK_WIDTH 8
#define RETRANSMIT_SEGMENTS 0

COUNTER_BANK(counters, BANK_WIDTH);

static __always_inline void count_segments(const struct sk_buff *skb)
{
  struct tcp_skb_cb *cb = (void *)skb->cb;
  u64 segs = BPF_CORE_READ(cb, tcp_gso_segs);
  counter_add(&counters, BANK_WIDTH, RETRANSMIT_SEGMENTS, segs > 0 ? segs : 1);
}

/* 6.13 and later: every attempt, with its error */
SEC("tp_btf/tcp_retransmit_skb")
int BPF_PROG(tcp_retransmit_skb, const struct sock *sk, const struct sk_buff *skb, int err)
{
  if (!err) count_segments(skb);
  return 0;
}

/* before 6.13: successful retransmits only */
SEC("tp_btf/tcp_retransmit_skb")
int BPF_PROG(tcp_retransmit_skb_v1, const struct sock *sk, const struct sk_buff *skb)
{
  count_segments(skb);
  return 0;
}
