/* syscall_counts: syscalls by class, per CPU and per cgroup, from
 * raw_syscalls sys_enter. The class of each syscall number comes from a table
 * userspace fills before attach. Layout mirrored in
 * src/samplers/syscall/counts/maps.ts. */
#include "common.h"
#include "counters.h"
#include "cgroup.h"

#define BANK_WIDTH 16
#define MAX_SYSCALL 1024

COUNTER_BANK(counters, BANK_WIDTH);
ID_ARRAY(classes, u32, MAX_SYSCALL);

/* cgroup css.id -> BANK_WIDTH class counters (the same classes) */
CGROUP_COUNTERS(cgroup_syscall, BANK_WIDTH);
CGROUP_SLOTS(cgroup_serial);
CGROUP_SLOTS(cgroup_inode);

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
  cgroup_add(bpf_get_current_task_btf(), &cgroup_syscall, BANK_WIDTH, cls, 1, &cgroup_serial, &cgroup_inode);
  return 0;
}
