/* Counter banks: MAX_CPUS banks of `width` u64 in an mmapable array, width a
 * multiple of 8 so each CPU owns whole 64-byte cache lines and CPUs never
 * share one. Slot k of CPU c is entry c * width + k. */
#ifndef REZOLUS_COUNTERS_H
#define REZOLUS_COUNTERS_H

#define COUNTER_BANK(name, width)                \
  struct {                                       \
    __uint(type, BPF_MAP_TYPE_ARRAY);            \
    __uint(map_flags, BPF_F_MMAPABLE);           \
    __type(key, u32);                            \
    __type(value, u64);                          \
    __uint(max_entries, MAX_CPUS * (width));     \
  } name SEC(".maps")

/* Adds n to slot k of this CPU's bank. Only this CPU writes its bank, but
 * an interrupt on the same CPU may, so the add is atomic. */
static __always_inline void counter_add(void *map, u32 width, u32 k, u64 n)
{
  u32 idx = bpf_get_smp_processor_id() * width + k;
  u64 *c = bpf_map_lookup_elem(map, &idx);
  if (c) __sync_fetch_and_add(c, n);
}

/* Adds n to slot k of `cpu`'s bank, not the running CPU's: other CPUs may
 * write the same slot at the same time, so the add is atomic. */
static __always_inline void counter_add_on(void *map, u32 cpu, u32 width, u32 k, u64 n)
{
  if (cpu >= MAX_CPUS) return;
  u32 idx = cpu * width + k;
  u64 *c = bpf_map_lookup_elem(map, &idx);
  if (c) __sync_fetch_and_add(c, n);
}

/* A dense array indexed by a bounded integer id (pid, cpu, request slot). */
#define ID_ARRAY(name, value_type, n)            \
  struct {                                       \
    __uint(type, BPF_MAP_TYPE_ARRAY);            \
    __type(key, u32);                            \
    __type(value, value_type);                   \
    __uint(max_entries, (n));                    \
  } name SEC(".maps")

#endif
