/* tcp_packet_latency: how long received TCP data waits before the
 * application reads it: from the first unread segment with payload
 * (tp_btf tcp_probe, at the top of tcp_rcv_established) to the next read of
 * that socket (tp_btf tcp_rcv_space_adjust, called from tcp_recvmsg), as an
 * h2 histogram in ns. The stamp is keyed by struct sock * in a hash; a read
 * takes it back, and tcp_destroy_sock drops the stamp of a socket closed with
 * unread data. Layout mirrored in src/samplers/tcp/packet_latency/maps.ts. */
#include "common.h"
#include "histogram.h"

HISTOGRAM_MAP(packet_latency, 1);

/* struct sock * -> ns when its oldest unread segment arrived */
struct {
  __uint(type, BPF_MAP_TYPE_HASH);
  __type(key, u64);
  __type(value, u64);
  __uint(max_entries, 16384);
} arrived SEC(".maps");

SEC("tp_btf/tcp_probe")
int BPF_PROG(tcp_probe, struct sock *sk, const struct sk_buff *skb)
{
  /* skb->data is the TCP header here: payload = len - header length */
  const struct tcphdr *th = (const struct tcphdr *)BPF_CORE_READ(skb, data);
  u32 doff = BPF_CORE_READ_BITFIELD_PROBED(th, doff);
  u32 len = BPF_CORE_READ(skb, len);
  if (len <= doff * 4) return 0;
  u64 key = (u64)sk;
  u64 now = bpf_ktime_get_ns();
  /* keep the oldest stamp: the wait of the data that waited longest */
  bpf_map_update_elem(&arrived, &key, &now, BPF_NOEXIST);
  return 0;
}

SEC("tp_btf/tcp_rcv_space_adjust")
int BPF_PROG(tcp_rcv_space_adjust, struct sock *sk)
{
  u64 key = (u64)sk;
  u64 *at = bpf_map_lookup_elem(&arrived, &key);
  if (!at) return 0;
  u64 began = *at;
  bpf_map_delete_elem(&arrived, &key);
  u64 now = bpf_ktime_get_ns();
  if (now > began) histogram_add(&packet_latency, 0, now - began);
  return 0;
}

SEC("tp_btf/tcp_destroy_sock")
int BPF_PROG(tcp_destroy_sock, struct sock *sk)
{
  u64 key = (u64)sk;
  bpf_map_delete_elem(&arrived, &key);
  return 0;
}
