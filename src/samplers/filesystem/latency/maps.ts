import type { BpfLayout } from '../../kernel/layout.js';

/** Mirrors bpf/filesystem/latency.bpf.c. */
export const LAYOUT = {
  object: 'filesystem/latency',
  programs: [
    { name: 'ext4_sync_file_enter', event: 'ext4_sync_file_enter', module: 'ext4' },
    { name: 'ext4_sync_file_exit', event: 'ext4_sync_file_exit', module: 'ext4' },
    { name: 'ext4_unlink_enter', event: 'ext4_unlink_enter', module: 'ext4' },
    { name: 'ext4_unlink_exit', event: 'ext4_unlink_exit', module: 'ext4' },
    { name: 'ext4_truncate_enter', event: 'ext4_truncate_enter', module: 'ext4' },
    { name: 'ext4_truncate_exit', event: 'ext4_truncate_exit', module: 'ext4' },
    { name: 'ext4_fallocate_enter', event: 'ext4_fallocate_enter', module: 'ext4' },
    { name: 'ext4_fallocate_exit', event: 'ext4_fallocate_exit', module: 'ext4' },
    { name: 'xfs_itruncate_extents_start', event: 'xfs_itruncate_extents_start', module: 'xfs' },
    { name: 'xfs_itruncate_extents_end', event: 'xfs_itruncate_extents_end', module: 'xfs' },
  ],
  maps: {
    latency: { kind: 'histograms', count: 5 },
    /** { u64 at; u32 slot; u32 pad } per thread id */
    started_at: { kind: 'per-pid', valueSize: 16 },
  },
} as const satisfies BpfLayout;

/** The histograms in slot order, each with the two programs that bracket it. */
export const SLOTS = [
  { fs: 'ext4', op: 'fsync', programs: ['ext4_sync_file_enter', 'ext4_sync_file_exit'] },
  { fs: 'ext4', op: 'unlink', programs: ['ext4_unlink_enter', 'ext4_unlink_exit'] },
  { fs: 'ext4', op: 'truncate', programs: ['ext4_truncate_enter', 'ext4_truncate_exit'] },
  { fs: 'ext4', op: 'fallocate', programs: ['ext4_fallocate_enter', 'ext4_fallocate_exit'] },
  { fs: 'xfs', op: 'truncate', programs: ['xfs_itruncate_extents_start', 'xfs_itruncate_extents_end'] },
] as const;
