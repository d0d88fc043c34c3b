/* scheduler_runqueue: runqueue latency (wakeup -> on CPU), running time
 * slices and off-CPU time as h2 histograms, plus per-CPU context switches by
 * kind and the summed runqueue wait. tp_btf hooks only. Layout mirrored in
 * src/samplers/scheduler/runqueue/maps.ts. */
#include "common.h"
#include "counters.h"
#include "histogram.h"
#include "task.h"
#include "cgroup.h"

#define BANK_WIDTH 8
#define CS_INVOLUNTARY 0
#define CS_VOLUNTARY 1
#define RUNQUEUE_WAIT 2

HISTOGRAM_MAP(runqueue_latency, 1);
HISTOGRAM_MAP(running, 1);
HISTOGRAM_MAP(offcpu, 1);
COUNTER_BANK(counters, BANK_WIDTH);
/* summed runqueue wait (ns) per cgroup of the task that waited */
CGROUP_COUNTERS(cgroup_runqueue_wait, 1);
CGROUP_SLOTS(cgroup_serial);
CGROUP_SLOTS(cgroup_inode);

/* Per-pid timestamps (ns); userspace sizes them to pid_max. 0 = not set. */
ID_ARRAY(enqueued_at, u64, MAX_PID);
ID_ARRAY(oncpu_at, u64, MAX_PID);
ID_ARRAY(offcpu_at, u64, MAX_PID);

static __always_inline void stamp(void *map, u32 pid, u64 now)
{
  u64 *ts = bpf_map_lookup_elem(map, &pid);
  if (ts) *ts = now;
}

/* Returns and clears the stamp of task t; 0 when there was none, or when it
 * is older than t itself (left by an exited thread whose id t reuses). */
static __always_inline u64 take(void *map, u32 pid, struct task_struct *t)
{
  u64 *ts = bpf_map_lookup_elem(map, &pid);
  if (!ts) return 0;
  u64 v = *ts;
  if (!v) return 0;
  *ts = 0;
  return v >= task_start_ns(t) ? v : 0;
}

static __always_inline int on_wakeup(struct task_struct *p)
{
  u32 pid = p->pid;
  if (pid) stamp(&enqueued_at, pid, bpf_ktime_get_ns());
  return 0;
}

SEC("tp_btf/sched_wakeup")
int BPF_PROG(sched_wakeup, struct task_struct *p)
{
  return on_wakeup(p);
}

SEC("tp_btf/sched_wakeup_new")
int BPF_PROG(sched_wakeup_new, struct task_struct *p)
{
  return on_wakeup(p);
}

SEC("tp_btf/sched_switch")
int BPF_PROG(sched_switch, bool preempt, struct task_struct *prev, struct task_struct *next)
{
  u64 now = bpf_ktime_get_ns();
  u32 prev_pid = prev->pid;
  u32 next_pid = next->pid;

  if (prev_pid) {
    u64 began = take(&oncpu_at, prev_pid, prev);
    if (preempt || task_state(prev) == TASK_RUNNING) {
      /* preempted (also between setting a sleep state and calling schedule(),
       * when the state is no longer RUNNING) or yielded while runnable: back
       * on the runqueue, and its slice ended */
      counter_add(&counters, BANK_WIDTH, CS_INVOLUNTARY, 1);
      stamp(&enqueued_at, prev_pid, now);
      if (began && now > began) histogram_add(&running, 0, now - began);
    } else {
      /* blocked, slept or exited: off CPU until it runs again */
      counter_add(&counters, BANK_WIDTH, CS_VOLUNTARY, 1);
      stamp(&offcpu_at, prev_pid, now);
    }
  } else {
    counter_add(&counters, BANK_WIDTH, CS_VOLUNTARY, 1);
  }

  if (next_pid) {
    u64 wait = 0;
    u64 queued = take(&enqueued_at, next_pid, next);
    if (queued && now > queued) {
      wait = now - queued;
      histogram_add(&runqueue_latency, 0, wait);
      counter_add(&counters, BANK_WIDTH, RUNQUEUE_WAIT, wait);
      cgroup_add(next, &cgroup_runqueue_wait, 1, 0, wait, &cgroup_serial, &cgroup_inode);
    }
    u64 left = take(&offcpu_at, next_pid, next);
    if (left && now > left && now - left >= wait) histogram_add(&offcpu, 0, now - left - wait);
    stamp(&oncpu_at, next_pid, now);
  }
  return 0;
}
