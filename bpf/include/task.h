/* Task helpers: reads that CO-RE relocates for this kernel. They take the
 * BTF-typed task pointers of tp_btf arguments and bpf_get_current_task_btf(),
 * which the verifier lets programs read directly, without a probe-read helper
 * call per field. */
#ifndef REZOLUS_TASK_H
#define REZOLUS_TASK_H

#define TASK_RUNNING 0

/* The task state as the scheduler saw it (`__state` since 5.14, `state` before). */
struct task_struct___pre514 {
  long state;
} __attribute__((preserve_access_index));

static __always_inline unsigned int task_state(struct task_struct *t)
{
  if (bpf_core_field_exists(t->__state)) return t->__state;
  struct task_struct___pre514 *old = (void *)t;
  return (unsigned int)BPF_CORE_READ(old, state);
}

/* When the task was created, in the clock of bpf_ktime_get_ns (monotonic
 * ns). A per-thread stamp older than this was left by an earlier thread with
 * the same id (one that exited in the middle of what was stamped): it must
 * not be taken for this thread's. */
static __always_inline u64 task_start_ns(struct task_struct *t)
{
  return t->start_time;
}

#endif
