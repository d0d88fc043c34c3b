/* Test program: runs h2_index from histogram.h over the values userspace
 * puts in `input` and writes the indexes to `output`, so a test can compare
 * the BPF math with src/metrics/histogram.ts value by value. Never attached;
 * run with BPF_PROG_TEST_RUN. */
#include "common.h"
#include "counters.h"
#include "histogram.h"

#define BATCH 1024

ID_ARRAY(input, u64, BATCH);
ID_ARRAY(output, u32, BATCH);

SEC("raw_tp")
int h2_batch(void *ctx)
{
  for (u32 i = 0; i < BATCH; i++) {
    u32 key = i;
    u64 *v = bpf_map_lookup_elem(&input, &key);
    u32 *out = bpf_map_lookup_elem(&output, &key);
    if (!v || !out) return 1;
    *out = h2_index(*v);
  }
  return 0;
}
