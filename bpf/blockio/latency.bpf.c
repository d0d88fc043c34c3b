/* blockio_latency: block request latency from issue to the driver until
 * completion, as one h2 histogram per op (read, write, flush, discard).
 * tp_btf hooks only. Layout mirrored in src/samplers/blockio/latency/maps.ts. */
#include "common.h"
#include "histogram.h"

#define OPS 4
#define REQ_OP_BITS_MASK 0xff
/* In-flight requests tracked at once (Rezolus's size); beyond it a request
 * goes unmeasured. */
#define MAX_IN_FLIGHT 65536

HISTOGRAM_MAP(latency, OPS);

/* Issue time (ns) keyed by the request pointer: a pointer key, so a hash. */
struct {
  __uint(type, BPF_MAP_TYPE_HASH);
  __type(key, u64);
  __type(value, u64);
  __uint(max_entries, MAX_IN_FLIGHT);
} issued_at SEC(".maps");

SEC("tp_btf/block_rq_issue")
int BPF_PROG(block_rq_issue, struct request *rq)
{
  u64 key = (u64)rq;
  u64 now = bpf_ktime_get_ns();
  /* A requeued request is issued again: the latest issue wins. */
  bpf_map_update_elem(&issued_at, &key, &now, BPF_ANY);
  return 0;
}

SEC("tp_btf/block_rq_complete")
int BPF_PROG(block_rq_complete, struct request *rq, blk_status_t error, unsigned int nr_bytes)
{
  u64 key = (u64)rq;
  u64 *began = bpf_map_lookup_elem(&issued_at, &key);
  if (!began) return 0;
  u64 start = *began;
  bpf_map_delete_elem(&issued_at, &key);
  u32 op = rq->cmd_flags & REQ_OP_BITS_MASK;
  u64 now = bpf_ktime_get_ns();
  if (op < OPS && now > start) histogram_add(&latency, op, now - start);
  return 0;
}
