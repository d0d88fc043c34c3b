/* Per-cgroup counters: the cgroup of a task is its cpu controller's css (the
 * scheduler's task group: a v1 cpu hierarchy, or v2 with the cpu controller
 * on), indexed by css.id, which the kernel keeps small and reuses. A slot
 * belongs to the cgroup whose css.serial_nr it last saw: a new cgroup under a
 * reused id zeroes its counters first and records its kernfs node id (the
 * inode of its directory), by which userspace finds its path. */
#ifndef REZOLUS_CGROUP_H
#define REZOLUS_CGROUP_H

#define MAX_CGROUPS 4096

/* ID_ARRAY-shaped mmapable arrays: serial numbers and kernfs ids by css.id */
#define CGROUP_SLOTS(name)                       \
  struct {                                       \
    __uint(type, BPF_MAP_TYPE_ARRAY);            \
    __uint(map_flags, BPF_F_MMAPABLE);           \
    __type(key, u32);                            \
    __type(value, u64);                          \
    __uint(max_entries, MAX_CGROUPS);            \
  } name SEC(".maps")

/* The css.id of the task's cpu cgroup, or -1 past MAX_CGROUPS. Sets *fresh
 * when the slot last belonged to another cgroup (or to none): the caller then
 * zeroes that slot's counters. Two CPUs seeing a new cgroup at once both
 * zero them: harmless, the counts lost are the few events in between. */
static __always_inline int cgroup_slot(struct task_struct *t, void *serials, void *inodes, bool *fresh)
{
  *fresh = false;
  /* direct loads from BTF pointers: no probe-read call per field on this hot path */
  struct task_group *tg = t->sched_task_group;
  if (!tg) return -1;
  /* With sched_autogroup (a session's tasks in a group of their own, for
   * fairness between terminals) a task of the root cgroup has an autogroup's
   * task group: not a cgroup, its css zeroed. Its cgroup is its parent, the
   * root task group. */
  if (!tg->css.cgroup) {
    tg = tg->parent;
    if (!tg) return -1;
  }
  int id = tg->css.id;
  if (id < 0 || id >= MAX_CGROUPS) return -1;
  u32 key = id;
  u64 *serial = bpf_map_lookup_elem(serials, &key);
  if (!serial) return -1;
  u64 sn = tg->css.serial_nr;
  if (*serial != sn) {
    u64 *inode = bpf_map_lookup_elem(inodes, &key);
    if (!inode) return -1;
    *fresh = true;
    *inode = BPF_CORE_READ(tg, css.cgroup, kn, id);
    *serial = sn;
  }
  return id;
}

/* `width` u64 counters per cgroup slot */
#define CGROUP_COUNTERS(name, width)             \
  struct {                                       \
    __uint(type, BPF_MAP_TYPE_ARRAY);            \
    __uint(map_flags, BPF_F_MMAPABLE);           \
    __type(key, u32);                            \
    __type(value, u64);                          \
    __uint(max_entries, MAX_CGROUPS * (width));  \
  } name SEC(".maps")

/* Counters that CPUs add to at a high rate (a syscall each) are kept in
 * CGROUP_STRIPES copies per slot, CPU c adding to copy c % CGROUP_STRIPES:
 * with one copy, every CPU running the same cgroup's syscalls took the
 * cache line holding its counters in turn (2.1-2.8x the counting cost with
 * two CPUs here). Copy s of slot id starts at (id * CGROUP_STRIPES + s) *
 * width; with width a multiple of 8 each copy owns whole cache lines. The
 * reader sums the copies. */
#define CGROUP_STRIPES 8
#define CGROUP_STRIPED_COUNTERS(name, width) CGROUP_COUNTERS(name, CGROUP_STRIPES * (width))

/* Adds n to counter k of task t's cgroup slot (of this CPU's copy when the
 * slot has `copies` > 1), zeroing the slot's counters, every copy, first
 * when a new cgroup claims it. */
static __always_inline void cgroup_add_copies(struct task_struct *t, void *counters, u32 width, u32 copies, u32 k, u64 n, void *serials, void *inodes)
{
  bool fresh;
  int id = cgroup_slot(t, serials, inodes, &fresh);
  if (id < 0) return;
  u32 base = (u32)id * copies * width;
  if (fresh) {
    for (u32 j = 0; j < copies * width; j++) {
      u32 idx = base + j;
      u64 *c = bpf_map_lookup_elem(counters, &idx);
      if (c) *c = 0;
    }
  }
  u32 copy = copies > 1 ? bpf_get_smp_processor_id() % copies : 0;
  u32 idx = base + copy * width + k;
  u64 *c = bpf_map_lookup_elem(counters, &idx);
  if (c) __sync_fetch_and_add(c, n);
}

/* Adds n to counter k of task t's cgroup slot of a CGROUP_COUNTERS map. */
static __always_inline void cgroup_add(struct task_struct *t, void *counters, u32 width, u32 k, u64 n, void *serials, void *inodes)
{
  cgroup_add_copies(t, counters, width, 1, k, n, serials, inodes);
}

/* Adds n to counter k of this CPU's copy of task t's cgroup slot of a CGROUP_STRIPED_COUNTERS map. */
static __always_inline void cgroup_add_striped(struct task_struct *t, void *counters, u32 width, u32 k, u64 n, void *serials, void *inodes)
{
  cgroup_add_copies(t, counters, width, CGROUP_STRIPES, k, n, serials, inodes);
}

#endif
