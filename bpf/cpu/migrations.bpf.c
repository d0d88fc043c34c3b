/* cpu_migrations: task migrations between CPUs, counted per CPU in both
 * directions: `from` on the CPU the task leaves, `to` on the one it joins.
 * tp_btf sched_migrate_task fires in set_task_cpu() before the task's cpu
 * field changes, so task_cpu(p) is still the source. Layout mirrored in
 * src/samplers/cpu/migrations/maps.ts. */
#include "common.h"
#include "counters.h"
#include "cgroup.h"

#define BANK_WIDTH 8
#define MIGRATE_FROM 0
#define MIGRATE_TO 1

COUNTER_BANK(counters, BANK_WIDTH);
/* migrations per cgroup of the migrating task */
CGROUP_COUNTERS(cgroup_migrations, 1);
CGROUP_SLOTS(cgroup_serial);
CGROUP_SLOTS(cgroup_inode);

/* Kernels without THREAD_INFO_IN_TASK keep the cpu in task_struct itself. */
struct task_struct___cpu {
  unsigned int cpu;
} __attribute__((preserve_access_index));

static __always_inline u32 task_cpu_of(struct task_struct *p)
{
  if (bpf_core_field_exists(p->thread_info.cpu)) return BPF_CORE_READ(p, thread_info.cpu);
  struct task_struct___cpu *old = (void *)p;
  return BPF_CORE_READ(old, cpu);
}

SEC("tp_btf/sched_migrate_task")
int BPF_PROG(sched_migrate_task, struct task_struct *p, int dest_cpu)
{
  u32 from = task_cpu_of(p);
  u32 to = (u32)dest_cpu;
  if (from == to) return 0;
  counter_add_on(&counters, from, BANK_WIDTH, MIGRATE_FROM, 1);
  counter_add_on(&counters, to, BANK_WIDTH, MIGRATE_TO, 1);
  cgroup_add(p, &cgroup_migrations, 1, 0, 1, &cgroup_serial, &cgroup_inode);
  return 0;
}
