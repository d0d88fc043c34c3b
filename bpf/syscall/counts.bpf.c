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
struct {
  __uint(type, BPF_MAP_TYPE_ARRAY);
  __uint(map_flags, BPF_F_MMAPABLE);
  __type(key, u32);
  __type(value, u64);
  __uint(max_entries, MAX_CGROUPS * BANK_WIDTH);
} cgroup_syscall SEC(".maps");
CGROUP_SLOTS(cgroup_serial);
CGROUP_SLOTS(cgroup_inode);

static __always_inline void cgroup_count(u32 cls)
{
  bool fresh;
  int id = cgroup_slot(bpf_get_current_task_btf(), &cgroup_serial, &cgroup_inode, &fresh);
  if (id < 0) return;
  u32 base = (u32)id * BANK_WIDTH;
  if (fresh) {
    for (u32 k = 0; k < BANK_WIDTH; k++) {
      u32 idx = base + k;
      u64 *c = bpf_map_lookup_elem(&cgroup_syscall, &idx);
      if (c) *c = 0;
    }
  }
  u32 idx = base + cls;
  u64 *c = bpf_map_lookup_elem(&cgroup_syscall, &idx);
  if (c) __sync_fetch_and_add(c, 1);
}

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
  cgroup_count(cls);
  return 0;
}
