/* syscall_counts and syscall_latency in one object, so that a syscall runs
 * one sys_enter program however many of the two samplers are on:
 *
 *   sys_enter  looks the class up once; counts it per CPU and per cgroup
 *              while counts are on; stamps the thread's start while latency
 *              is on
 *   sys_exit   attached only while latency is on: one h2 histogram per class
 *
 * Userspace (src/samplers/syscall/shared/) loads the object once for
 * whichever samplers are enabled, sets `enabled` (a global in .bss) and
 * attaches sys_exit only for latency. Layout mirrored in
 * src/samplers/syscall/shared/maps.ts. */
#include "common.h"
#include "counters.h"
#include "cgroup.h"
#include "histogram.h"
#include "task.h"

#define BANK_WIDTH 16
#define CLASSES 16
#define MAX_SYSCALL 1024

/* bits of `enabled` */
#define COUNTS 1
#define LATENCY 2

struct start {
  u64 ts;
  u32 cls;
  /* `epoch` when stamped: a stamp from before latency was last turned on
   * (left while it was off) is not taken */
  u32 epoch;
};

/* Written by userspace through the .bss map: which samplers are on, and the
 * latency epoch (raised each time latency is turned on). */
volatile u32 enabled;
volatile u32 epoch;

COUNTER_BANK(counters, BANK_WIDTH);
ID_ARRAY(classes, u32, MAX_SYSCALL);
/* cgroup css.id -> BANK_WIDTH class counters (the same classes) */
CGROUP_COUNTERS(cgroup_syscall, BANK_WIDTH);
CGROUP_SLOTS(cgroup_serial);
CGROUP_SLOTS(cgroup_inode);

HISTOGRAM_MAP(latency, CLASSES);
ID_ARRAY(started, struct start, MAX_PID);

SEC("tp_btf/sys_enter")
int BPF_PROG(sys_enter, struct pt_regs *regs, long id)
{
  u32 on = enabled;
  u32 nr = (u32)id;
  u32 cls = 0;
  if (nr < MAX_SYSCALL) {
    u32 *c = bpf_map_lookup_elem(&classes, &nr);
    if (c && *c < CLASSES) cls = *c;
  }
  struct task_struct *t = bpf_get_current_task_btf();
  if (on & COUNTS) {
    counter_add(&counters, BANK_WIDTH, cls, 1);
    cgroup_add(t, &cgroup_syscall, BANK_WIDTH, cls, 1, &cgroup_serial, &cgroup_inode);
  }
  if (on & LATENCY) {
    u32 tid = t->pid;
    struct start *s = bpf_map_lookup_elem(&started, &tid);
    if (s) {
      s->cls = cls;
      s->epoch = epoch;
      s->ts = bpf_ktime_get_ns();
    }
  }
  return 0;
}

SEC("tp_btf/sys_exit")
int BPF_PROG(sys_exit, struct pt_regs *regs, long ret)
{
  struct task_struct *t = bpf_get_current_task_btf();
  u32 tid = t->pid;
  struct start *s = bpf_map_lookup_elem(&started, &tid);
  if (!s) return 0;
  u64 began = s->ts;
  if (began == 0) return 0;
  u64 now = bpf_ktime_get_ns();
  s->ts = 0;
  /* A new thread's first sys_exit (the return from clone) has no sys_enter of
   * its own: a stamp older than the thread was left by an exited one. */
  if (began < task_start_ns(t) || s->epoch != epoch) return 0;
  u32 cls = s->cls;
  if (now > began && cls < CLASSES) histogram_add(&latency, cls, now - began);
  return 0;
}
