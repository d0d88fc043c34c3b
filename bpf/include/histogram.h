/* h2 histograms (base-2 log-linear buckets), grouping power 3, max value
 * power 64: 496 buckets of u64 in an mmapable array, not sharded per CPU.
 * The index math is the one src/metrics/histogram.ts implements; a test runs
 * boundary values through both. Everything is 64-bit: a past bug elsewhere
 * put values >= 2^31 in the wrong bucket by shifting in 32 bits. */
#ifndef REZOLUS_HISTOGRAM_H
#define REZOLUS_HISTOGRAM_H

#define H2_GROUPING_POWER 3
#define H2_BUCKETS 496

/* A map of `n` histograms back to back: histogram k owns entries
 * [k * H2_BUCKETS, (k + 1) * H2_BUCKETS). */
#define HISTOGRAM_MAP(name, n)              \
  struct {                                  \
    __uint(type, BPF_MAP_TYPE_ARRAY);       \
    __uint(map_flags, BPF_F_MMAPABLE);      \
    __type(key, u32);                       \
    __type(value, u64);                     \
    __uint(max_entries, (n) * H2_BUCKETS);  \
  } name SEC(".maps")

/* floor(log2 v) for v > 0, without loops or a clz instruction. */
static __always_inline u32 h2_log2(u64 v)
{
  u32 r = 0;
  if (v >> 32) { v >>= 32; r += 32; }
  if (v >> 16) { v >>= 16; r += 16; }
  if (v >> 8) { v >>= 8; r += 8; }
  if (v >> 4) { v >>= 4; r += 4; }
  if (v >> 2) { v >>= 2; r += 2; }
  if (v >> 1) { r += 1; }
  return r;
}

/* The bucket of v: values below 2^(g+1) have a bucket each; above, each
 * power of two [2^p, 2^(p+1)) is split into 2^g buckets. */
static __always_inline u32 h2_index(u64 v)
{
  if (v < (1ULL << (H2_GROUPING_POWER + 1))) return (u32)v;
  u32 p = h2_log2(v);
  u64 offset = (v - (1ULL << p)) >> (p - H2_GROUPING_POWER);
  return (p - H2_GROUPING_POWER + 1) * (1U << H2_GROUPING_POWER) + (u32)offset;
}

/* Adds n observations of v to histogram k of the map (n > 1: one sampled
 * observation standing for n). */
static __always_inline void histogram_add_n(void *map, u32 k, u64 v, u64 n)
{
  u32 idx = k * H2_BUCKETS + h2_index(v);
  u64 *count = bpf_map_lookup_elem(map, &idx);
  if (count) __sync_fetch_and_add(count, n);
}

/* Adds one observation of v to histogram k of the map. */
static __always_inline void histogram_add(void *map, u32 k, u64 v)
{
  histogram_add_n(map, k, v, 1);
}

#endif
