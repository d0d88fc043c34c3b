/* network_drops: packets the kernel freed as dropped (tp_btf kfree_skb; a
 * consumed skb goes to the consume_skb tracepoint instead), counted per CPU
 * by drop reason. Slot r of a CPU's bank counts reason r of the core
 * skb_drop_reason enum for 2 <= r < OTHER_REASON; reasons of other
 * subsystems (high 16 bits set) or past the bank land in OTHER_REASON.
 * Slots 0 (SKB_NOT_DROPPED_YET) and 1 (SKB_CONSUMED) are never drop reasons:
 * slot 0 holds the total of every drop, slot 1 stays unused. Layout mirrored
 * in src/samplers/network/drops/maps.ts. */
#include "common.h"
#include "counters.h"

#define BANK_WIDTH 256
#define DROP_TOTAL 0
#define FIRST_REASON 2
#define OTHER_REASON 255

COUNTER_BANK(drops, BANK_WIDTH);

SEC("tp_btf/kfree_skb")
int BPF_PROG(kfree_skb, struct sk_buff *skb, void *location, enum skb_drop_reason reason, struct sock *rx_sk)
{
  u32 r = (u32)reason;
  if (r < FIRST_REASON) return 0; /* not dropped yet / consumed: not drops */
  if (r > OTHER_REASON) r = OTHER_REASON;
  counter_add(&drops, BANK_WIDTH, DROP_TOTAL, 1);
  counter_add(&drops, BANK_WIDTH, r, 1);
  return 0;
}
