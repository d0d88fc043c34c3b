/* Test object: `good` loads; `bad` dereferences a map value without the
 * null check the verifier requires, so the verifier rejects it. Tests use it
 * to show that one rejected program leaves the others running. */
#include "common.h"
#include "counters.h"

#define BANK_WIDTH 8

COUNTER_BANK(counters, BANK_WIDTH);

SEC("tp_btf/sched_switch")
int BPF_PROG(good)
{
  counter_add(&counters, BANK_WIDTH, 0, 1);
  return 0;
}

SEC("tp_btf/sched_switch")
int BPF_PROG(bad)
{
  u32 idx = 1;
  u64 *c = bpf_map_lookup_elem(&counters, &idx);
  *c += 1; /* no null check: rejected */
  return 0;
}
