/* filesystem_latency: latency of the file system operations that have an
 * enter/exit tracepoint pair: ext4 fsync, unlink, truncate and fallocate,
 * and xfs truncation (xfs_itruncate_extents: truncate, inode inactivation
 * and trimming of speculative preallocation past EOF). Read, write and open have no such tracepoints
 * (they need kprobes or fentry), so they are not measured. tp_btf hooks
 * only. Layout mirrored in src/samplers/filesystem/latency/maps.ts. */
#include "common.h"
#include "counters.h"
#include "histogram.h"

/* Histogram slots, in the order of the sampler's label table. */
#define EXT4_FSYNC 0
#define EXT4_UNLINK 1
#define EXT4_TRUNCATE 2
#define EXT4_FALLOCATE 3
#define XFS_TRUNCATE 4
#define SLOTS 5

HISTOGRAM_MAP(latency, SLOTS);

/* The operation a thread is in: when it began (ns, 0 = none) and which
 * one. An operation that starts inside another (an inode evicted, and so
 * truncated, under an unlink) replaces the outer stamp; the outer exit then
 * finds another slot and records nothing, so nesting loses a sample rather
 * than mixing two. */
struct started {
  u64 at;
  u32 slot;
  u32 pad;
};

/* Keyed by thread id; userspace sizes it to pid_max. */
ID_ARRAY(started_at, struct started, MAX_PID);

static __always_inline u32 current_tid(void)
{
  return (u32)bpf_get_current_pid_tgid();
}

static __always_inline int enter(u32 slot)
{
  u32 tid = current_tid();
  struct started *s = bpf_map_lookup_elem(&started_at, &tid);
  if (!s) return 0;
  s->slot = slot;
  s->at = bpf_ktime_get_ns();
  return 0;
}

static __always_inline int leave(u32 slot)
{
  u32 tid = current_tid();
  struct started *s = bpf_map_lookup_elem(&started_at, &tid);
  if (!s) return 0;
  u64 at = s->at;
  if (!at || s->slot != slot) return 0;
  s->at = 0;
  u64 now = bpf_ktime_get_ns();
  if (now > at) histogram_add(&latency, slot, now - at);
  return 0;
}

SEC("tp_btf/ext4_sync_file_enter")
int BPF_PROG(ext4_sync_file_enter, struct file *file, int datasync)
{
  return enter(EXT4_FSYNC);
}

SEC("tp_btf/ext4_sync_file_exit")
int BPF_PROG(ext4_sync_file_exit, struct inode *inode, int ret)
{
  return leave(EXT4_FSYNC);
}

SEC("tp_btf/ext4_unlink_enter")
int BPF_PROG(ext4_unlink_enter, struct inode *parent, struct dentry *dentry)
{
  return enter(EXT4_UNLINK);
}

SEC("tp_btf/ext4_unlink_exit")
int BPF_PROG(ext4_unlink_exit, struct dentry *dentry, int ret)
{
  return leave(EXT4_UNLINK);
}

SEC("tp_btf/ext4_truncate_enter")
int BPF_PROG(ext4_truncate_enter, struct inode *inode)
{
  return enter(EXT4_TRUNCATE);
}

SEC("tp_btf/ext4_truncate_exit")
int BPF_PROG(ext4_truncate_exit, struct inode *inode)
{
  return leave(EXT4_TRUNCATE);
}

SEC("tp_btf/ext4_fallocate_enter")
int BPF_PROG(ext4_fallocate_enter, struct inode *inode, loff_t offset, loff_t len, int mode)
{
  return enter(EXT4_FALLOCATE);
}

SEC("tp_btf/ext4_fallocate_exit")
int BPF_PROG(ext4_fallocate_exit, struct inode *inode, loff_t pos, unsigned int max_blocks, int ret)
{
  return leave(EXT4_FALLOCATE);
}

/* xfs types are left opaque: vmlinux.h lacks them where xfs is a module. */
SEC("tp_btf/xfs_itruncate_extents_start")
int BPF_PROG(xfs_itruncate_extents_start, void *ip, s64 new_size)
{
  return enter(XFS_TRUNCATE);
}

SEC("tp_btf/xfs_itruncate_extents_end")
int BPF_PROG(xfs_itruncate_extents_end, void *ip, s64 new_size)
{
  return leave(XFS_TRUNCATE);
}
