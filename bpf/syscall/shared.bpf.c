/* syscall_counts and syscall_latency in one object, so that a syscall runs
 * one sys_enter program however many of the two samplers are on:
 *
 *   sys_enter  looks the class up once; counts it per CPU and per cgroup
 *              while counts are on; stamps the thread's start while latency
 *              is on (every syscall of its class, or a random 1 in
 *              2^sample_shift[class])
 *   sys_exit   attached only while latency is on: one h2 histogram per class;
 *              a syscall timed as 1 in 2^shift is added 2^shift times
 *
 * Most syscalls are not timed once a class is sampled, and sys_exit must
 * learn that cheaply: `pending` counts the stamps standing per slot of the
 * thread's pt_regs address (one per kernel stack, so fixed for a thread's
 * life and a raw_tp argument, unlike the thread id, which takes a helper
 * call, ~5 ns here). sys_exit looks up the thread's stamp only when its
 * slot counts one. A stamp is counted when made and uncounted when its own
 * thread takes or drops it. What would leave a stamp standing for good is
 * not stamped: exit and exit_group (they never return), an execve of a
 * thread that is not its process's leader (it returns under the leader's
 * id) and 32-bit syscalls (their numbers are not the table's). A stamp left
 * otherwise by a thread that died with it (latency was turned off
 * meanwhile) is found by the next thread of its id and stays counted: that
 * slot's threads take the slower look from then on, and no stamp is missed.
 *
 * Timing costs two clock reads and a histogram add per syscall, nearly twice
 * what counting does; userspace raises sample_shift when more syscalls a
 * second of a class come than its budget (src/samplers/syscall/shared/sampling.ts),
 * so that a host doing millions a second pays for counting them and for
 * sys_exit's look at the thread's stamp, not for the clock reads, while rarer
 * classes are still timed one by one.
 *
 * Userspace (src/samplers/syscall/shared/) loads the object once for
 * whichever samplers are enabled, sets `g.enabled` (in .bss) and
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
  /* what was stamped, packed (META_*): the class, the sample_shift it was
   * timed under (it stands for 2^shift syscalls) and `epoch` (its low 23
   * bits: a stamp from before latency was last turned on, left while it was
   * off, is not taken) */
  u32 meta;
  /* the thread's xorshift32 state, which picks the syscalls timed while its
   * class is sampled (a helper call such as bpf_get_prandom_u32 costs more
   * than this on CPUs whose return-thunk mitigations make calls dear) */
  u32 rnd;
};

/* a `classes` entry: the class, UNTIMED for syscalls that never return,
 * EXEC for execve and execveat */
#define CLASS_MASK 255
#define UNTIMED 256
#define EXEC 512

/* thread_info.status while the thread is in a 32-bit (ia32) syscall, whose
 * numbers are not the table's: its exit would be stamped as a write */
#define TS_COMPAT 2

#define PENDING_SLOTS 65536

#define META_CLASS_MASK 15
#define META_SHIFT_AT 4
#define META_EPOCH_AT 9

/* Written by userspace through the .bss map: which samplers are on, the
 * latency epoch (raised each time latency is turned on) and each class's
 * sampling shift (0: every syscall of the class is timed; at most 20). */
struct globals {
  u32 enabled;
  u32 epoch;
  u8 sample_shift[CLASSES];
};
/* One struct, so that the compiler keeps this order in .bss (it reorders
 * separate globals as it likes: here it once put epoch last) and userspace's
 * offsets hold (src/samplers/syscall/shared/hub.ts). */
volatile struct globals g;

COUNTER_BANK(counters, BANK_WIDTH);
ID_ARRAY(classes, u32, MAX_SYSCALL);
/* cgroup css.id -> CGROUP_STRIPES copies of BANK_WIDTH class counters (the same classes) */
CGROUP_STRIPED_COUNTERS(cgroup_syscall, BANK_WIDTH);
CGROUP_SLOTS(cgroup_serial);
CGROUP_SLOTS(cgroup_inode);

HISTOGRAM_MAP(latency, CLASSES);
ID_ARRAY(started, struct start, MAX_PID);
/* stamps standing, by pending_slot() of the stamping thread's pt_regs */
ID_ARRAY(pending, u32, PENDING_SLOTS);

/* A slot per kernel stack: the pt_regs of a thread sit at the top of its
 * stack, whose low bits are the same for every thread. */
static __always_inline u32 pending_slot(u64 regs)
{
  return (u32)(((regs >> 12) * 0x9E3779B97F4A7C15ULL) >> 48);
}

static __always_inline void pending_add(u64 regs, u32 n)
{
  u32 slot = pending_slot(regs);
  u32 *p = bpf_map_lookup_elem(&pending, &slot);
  if (p) __sync_fetch_and_add(p, n);
}

/* raw_tp, not tp_btf: the pt_regs address is an integer argument here, which
 * pending_slot() may hash (the verifier forbids arithmetic on a BTF pointer). */
SEC("raw_tp/sys_enter")
int sys_enter(struct bpf_raw_tracepoint_args *ctx)
{
  u32 on = g.enabled;
  u32 nr = (u32)ctx->args[1];
  u32 cls = 0;
  u32 flags = 0;
  if (nr < MAX_SYSCALL) {
    u32 *c = bpf_map_lookup_elem(&classes, &nr);
    if (c && (*c & CLASS_MASK) < CLASSES) {
      cls = *c & CLASS_MASK;
      flags = *c;
    }
  }
  struct task_struct *t = bpf_get_current_task_btf();
  if (on & COUNTS) {
    counter_add(&counters, BANK_WIDTH, cls, 1);
    cgroup_add_striped(t, &cgroup_syscall, BANK_WIDTH, cls, 1, &cgroup_serial, &cgroup_inode);
  }
  if (on & LATENCY) {
    u32 tid = t->pid;
    struct start *s = bpf_map_lookup_elem(&started, &tid);
    if (s) {
      u32 shift = g.sample_shift[cls] & 31;
      bool timed = shift == 0;
      if (!timed) {
        u32 x = s->rnd;
        if (x == 0) x = tid * 2654435761U | 1;
        x ^= x << 13;
        x ^= x >> 17;
        x ^= x << 5;
        s->rnd = x;
        /* the top bits: a xorshift's best */
        timed = (x >> (32 - shift)) == 0;
      }
      /* Not stamped (looked at only for a syscall drawn): what never
       * returns; an execve of a thread that is not its process's leader (it
       * returns with the leader's id and start time, its stamp would stand
       * under its old id for good); a 32-bit syscall (its number means
       * another syscall here). */
      if (timed && ((flags & UNTIMED) || ((flags & EXEC) && t->pid != t->tgid) ||
                    (bpf_core_field_exists(t->thread_info.status) && (t->thread_info.status & TS_COMPAT))))
        timed = false;
      u64 prev = s->ts;
      if (timed) {
        s->meta = cls | shift << META_SHIFT_AT | g.epoch << META_EPOCH_AT;
        s->ts = bpf_ktime_get_ns();
        /* a stamp standing is this thread's (counted in its slot already)
         * unless it is older than the thread: then a dead thread of this id
         * left it, and its count stays in that thread's slot */
        if (prev == 0 || prev < task_start_ns(t)) pending_add(ctx->args[0], 1);
      } else if (prev) {
        /* not timed: no stamp of an earlier syscall may stand for this one */
        s->ts = 0;
        if (prev >= task_start_ns(t)) pending_add(ctx->args[0], -1);
      }
    }
  }
  return 0;
}

SEC("raw_tp/sys_exit")
int sys_exit(struct bpf_raw_tracepoint_args *ctx)
{
  /* no stamp counted in this thread's slot: none of its own stands */
  u32 slot = pending_slot(ctx->args[0]);
  u32 *p = bpf_map_lookup_elem(&pending, &slot);
  if (!p || *p == 0) return 0;
  struct task_struct *t = bpf_get_current_task_btf();
  u32 tid = t->pid;
  struct start *s = bpf_map_lookup_elem(&started, &tid);
  if (!s) return 0;
  u64 began = s->ts;
  if (began == 0) return 0;
  u64 now = bpf_ktime_get_ns();
  s->ts = 0;
  /* A new thread's first sys_exit (the return from clone) has no sys_enter of
   * its own: a stamp older than the thread was left by an exited one (and
   * stays counted in that one's slot). */
  if (began < task_start_ns(t)) return 0;
  __sync_fetch_and_add(p, -1);
  u32 meta = s->meta;
  if (meta >> META_EPOCH_AT != (g.epoch << META_EPOCH_AT) >> META_EPOCH_AT) return 0;
  u32 cls = meta & META_CLASS_MASK;
  u32 shift = (meta >> META_SHIFT_AT) & 31;
  if (now > began) histogram_add_n(&latency, cls, now - began, 1ULL << shift);
  return 0;
}
