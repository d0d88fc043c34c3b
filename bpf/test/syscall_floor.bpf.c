/* Bench program (test/bench/kernel.ts, part 1): the least an enter/exit pair
 * on raw_syscalls can cost on this machine, to set the syscall samplers'
 * figures against. `enter_empty`/`exit_empty` do nothing; `enter_clock`/
 * `exit_clock` read bpf_ktime_get_ns once each, as any latency measurement
 * must, and keep it in this CPU's slot (no cache line shared between CPUs). */
#include "common.h"
#include "counters.h"

COUNTER_BANK(sink, 8);

SEC("tp_btf/sys_enter")
int BPF_PROG(enter_empty, struct pt_regs *regs, long id)
{
  return 0;
}

SEC("tp_btf/sys_exit")
int BPF_PROG(exit_empty, struct pt_regs *regs, long ret)
{
  return 0;
}

static __always_inline void keep(u64 v)
{
  u32 idx = bpf_get_smp_processor_id() * 8;
  u64 *c = bpf_map_lookup_elem(&sink, &idx);
  if (c) *c = v;
}

SEC("tp_btf/sys_enter")
int BPF_PROG(enter_clock, struct pt_regs *regs, long id)
{
  keep(bpf_ktime_get_ns());
  return 0;
}

SEC("tp_btf/sys_exit")
int BPF_PROG(exit_clock, struct pt_regs *regs, long ret)
{
  keep(bpf_ktime_get_ns());
  return 0;
}
