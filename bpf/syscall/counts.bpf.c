/* syscall_counts: syscalls by class, per CPU, from raw_syscalls sys_enter.
 * The class of each syscall number comes from a table userspace fills
 * before attach. Layout mirrored in src/samplers/syscall/counts/maps.ts. */
#include "common.h"
#include "counters.h"

#define BANK_WIDTH 16
#define MAX_SYSCALL 1024

COUNTER_BANK(counters, BANK_WIDTH);
ID_ARRAY(classes, u32, MAX_SYSCALL);

SEC("tp_btf/sys_enter")
int BPF_PROG(sys_enter, struct pt_regs *regs, long id)
{
  u32 nr = (u32)id;
  u32 cls = 0;
  if (nr < MAX_SYSCALL) {
    u32 *c = bpf_map_lookup_elem(&classes, &nr);
    if (c && *c < BANK_WIDTH) cls = *c;
  }
  counter_add(&counters, BANK_WIDTH, cls, 1);
  return 0;
}
