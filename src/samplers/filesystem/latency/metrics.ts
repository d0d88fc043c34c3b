import { metric, MetricKind, Unit } from '../../../metrics/metric.js';

export const filesystemLatency = metric({
  name: 'filesystem_latency',
  kind: MetricKind.Histogram,
  unit: Unit.Nanoseconds,
  labels: ['fs', 'op'],
  description:
    'Latency of file system operations, measured per thread between the enter and exit tracepoints the file system has: ' +
    'fs=ext4 op=fsync (ext4_sync_file_enter/exit), unlink (ext4_unlink_enter/exit), truncate (ext4_truncate_enter/exit, ' +
    'also run when an unlinked inode is evicted) and fallocate (ext4_fallocate_enter/exit, allocating modes only); ' +
    'fs=xfs op=truncate (xfs_itruncate_extents_start/end: truncate, inode inactivation and trimming of preallocation ' +
    'past EOF). BPF on tp_btf. Read, write and open are not measured: neither ext4 nor xfs has enter/exit tracepoints ' +
    'for them, and timing them needs kprobes or fentry.',
});

export const METRICS = [filesystemLatency] as const;
