/* syscall_latency: time from sys_enter to sys_exit of each thread, one h2
 * histogram per syscall class. The start stamp and class live in a per-tid
 * array. Layout mirrored in src/samplers/syscall/latency/maps.ts. */
#include "common.h"
#include "counters.h"
#include "histogram.h"
#include "task.h"

#define CLASSES 16
#define MAX_SYSCALL 1024

struct start {
  u64 ts;
  u32 cls;
  u32 pad;
};

HISTOGRAM_MAP(latency, CLASSES);
ID_ARRAY(classes, u32, MAX_SYSCALL);
ID_ARRAY(started, struct start, MAX_PID);

SEC("tp_btf/sys_enter")
int BPF_PROG(sys_enter, struct pt_regs *regs, long id)
{
  u32 tid = (u32)bpf_get_current_pid_tgid();
  struct start *s = bpf_map_lookup_elem(&started, &tid);
  if (!s) return 0;
  u32 nr = (u32)id;
  u32 cls = 0;
  if (nr < MAX_SYSCALL) {
    u32 *c = bpf_map_lookup_elem(&classes, &nr);
    if (c && *c < CLASSES) cls = *c;
  }
  s->cls = cls;
  s->ts = bpf_ktime_get_ns();
  return 0;
}

SEC("tp_btf/sys_exit")
int BPF_PROG(sys_exit, struct pt_regs *regs, long ret)
{
  u32 tid = (u32)bpf_get_current_pid_tgid();
  struct start *s = bpf_map_lookup_elem(&started, &tid);
  if (!s || s->ts == 0) return 0;
  u64 now = bpf_ktime_get_ns();
  u64 began = s->ts;
  s->ts = 0;
  /* A new thread's first sys_exit (the return from clone) has no sys_enter of
   * its own: a stamp older than the thread was left by an exited one. */
  if (began < task_start_ns(bpf_get_current_task_btf())) return 0;
  if (now > began && s->cls < CLASSES) histogram_add(&latency, s->cls, now - began);
  return 0;
}
