/* cpu_softirq: softirqs handled per CPU and kind (vector 0..9: hi, timer,
 * net_tx, net_rx, block, irq_poll, tasklet, sched, hrtimer, rcu), and the
 * time spent in them. softirq_entry stamps the CPU's start; softirq_exit
 * counts one and adds the time since. Softirqs do not nest on one CPU, so one
 * stamp per CPU is enough. tp_btf hooks only. Layout mirrored in
 * src/samplers/cpu/softirq/maps.ts. */
#include "common.h"
#include "counters.h"

#define NR_KINDS 10
/* slots 0..9: count per vector; 12..21: nanoseconds per vector */
#define BANK_WIDTH 24
#define TIME_BASE 12

COUNTER_BANK(counters, BANK_WIDTH);

/* Per-CPU start of the running softirq (ns); userspace sizes it to the possible CPUs. 0 = none. */
ID_ARRAY(started_at, u64, MAX_CPUS);

SEC("tp_btf/softirq_entry")
int BPF_PROG(softirq_entry, unsigned int vec_nr)
{
  u32 cpu = bpf_get_smp_processor_id();
  u64 *ts = bpf_map_lookup_elem(&started_at, &cpu);
  if (ts) *ts = bpf_ktime_get_ns();
  return 0;
}

SEC("tp_btf/softirq_exit")
int BPF_PROG(softirq_exit, unsigned int vec_nr)
{
  if (vec_nr >= NR_KINDS) return 0;
  u64 now = bpf_ktime_get_ns();
  u32 cpu = bpf_get_smp_processor_id();
  counter_add(&counters, BANK_WIDTH, vec_nr, 1);
  u64 *ts = bpf_map_lookup_elem(&started_at, &cpu);
  if (!ts) return 0;
  u64 began = *ts;
  *ts = 0;
  if (began && now > began) counter_add(&counters, BANK_WIDTH, TIME_BASE + vec_nr, now - began);
  return 0;
}
