/* tcp_connect_latency: time from an active open (the socket enters SYN_SENT)
 * until the handshake completes (SYN_SENT -> ESTABLISHED), as an h2
 * histogram in ns, and the active opens that failed (SYN_SENT -> CLOSE: a
 * RST, a timeout or an error). tp_btf inet_sock_set_state only (upstream
 * uses kprobes on tcp_v4/v6_connect and tcp_rcv_state_process): every exit
 * from SYN_SENT passes through it, so the stamp is always taken back and no
 * destroy hook is needed. Layout mirrored in src/samplers/tcp/connect_latency/maps.ts. */
#include "common.h"
#include "counters.h"
#include "histogram.h"

#define BANK_WIDTH 8
#define CONNECT_FAILED 0

#define STATE_ESTABLISHED 1
#define STATE_SYN_SENT 2
#define STATE_CLOSE 7
#define PROTO_TCP 6

HISTOGRAM_MAP(connect_latency, 1);
COUNTER_BANK(counters, BANK_WIDTH);

/* struct sock * -> ns when it entered SYN_SENT; a full map loses samples only */
struct {
  __uint(type, BPF_MAP_TYPE_HASH);
  __type(key, u64);
  __type(value, u64);
  __uint(max_entries, 10240);
} connect_start SEC(".maps");

SEC("tp_btf/inet_sock_set_state")
int BPF_PROG(inet_sock_set_state, const struct sock *sk, const int oldstate, const int newstate)
{
  if (sk->sk_protocol != PROTO_TCP) return 0;
  u64 key = (u64)sk;
  if (newstate == STATE_SYN_SENT) {
    u64 now = bpf_ktime_get_ns();
    bpf_map_update_elem(&connect_start, &key, &now, BPF_ANY);
    return 0;
  }
  if (oldstate != STATE_SYN_SENT) return 0;
  u64 *start = bpf_map_lookup_elem(&connect_start, &key);
  if (!start) return 0; /* opened before the sampler loaded */
  u64 began = *start;
  bpf_map_delete_elem(&connect_start, &key);
  if (newstate == STATE_ESTABLISHED) {
    u64 now = bpf_ktime_get_ns();
    if (now > began) histogram_add(&connect_latency, 0, now - began);
  } else if (newstate == STATE_CLOSE) {
    counter_add(&counters, BANK_WIDTH, CONNECT_FAILED, 1);
  }
  return 0;
}
