import type { MetricDecl } from '../../../metrics/metric.js';
import { metric, MetricKind, Unit } from '../../../metrics/metric.js';

/** A /proc/meminfo field this sampler reports, and the gauge it becomes. */
export interface MeminfoField {
  /** the key as /proc/meminfo prints it, before the colon */
  readonly field: string;
  /** true when the kernel prints the value in kB (converted to bytes); false for a plain count */
  readonly kb: boolean;
  readonly metric: MetricDecl;
}

// [field, metric name, description]; every one a kB value reported in bytes
const KB_FIELDS: readonly (readonly [string, string, string])[] = [
  ['MemTotal', 'memory_total', 'Usable RAM: physical memory minus reserved memory and the kernel image'],
  ['MemFree', 'memory_free', 'Memory not used for anything'],
  ['MemAvailable', 'memory_available', 'Estimate of memory available for new workloads without swapping'],
  ['Buffers', 'memory_buffers', 'Temporary storage for raw disk blocks'],
  ['Cached', 'memory_cached', 'Page cache of files read from disk, excluding swap cache'],
  ['SwapCached', 'memory_swap_cached', 'Memory swapped out and back in that is still also in the swap file'],
  ['Active', 'memory_active', 'Memory used recently, not reclaimed unless absolutely necessary'],
  ['Inactive', 'memory_inactive', 'Memory used less recently, more eligible for reclaim'],
  ['Active(anon)', 'memory_active_anon', 'Active anonymous and shmem memory'],
  ['Inactive(anon)', 'memory_inactive_anon', 'Inactive anonymous and shmem memory, a reclaim candidate'],
  ['Active(file)', 'memory_active_file', 'Active page cache'],
  ['Inactive(file)', 'memory_inactive_file', 'Inactive page cache, a reclaim candidate'],
  ['Unevictable', 'memory_unevictable', 'Memory that cannot be paged out (mlocked, ramfs, ...)'],
  ['Mlocked', 'memory_mlocked', 'Memory locked with mlock()'],
  ['HighTotal', 'memory_high_total', 'Total highmem (32-bit kernels)'],
  ['HighFree', 'memory_high_free', 'Free highmem (32-bit kernels)'],
  ['LowTotal', 'memory_low_total', 'Total lowmem (32-bit kernels)'],
  ['LowFree', 'memory_low_free', 'Free lowmem (32-bit kernels)'],
  ['MmapCopy', 'memory_mmap_copy', 'Memory copied to map files (no-MMU kernels)'],
  ['SwapTotal', 'memory_swap_total', 'Swap space available'],
  ['SwapFree', 'memory_swap_free', 'Swap space not used'],
  ['Zswap', 'memory_zswap', 'Memory used by the zswap compressed cache'],
  ['Zswapped', 'memory_zswapped', 'Anonymous memory stored in zswap (uncompressed size)'],
  ['Dirty', 'memory_dirty', 'Memory waiting to be written back to disk'],
  ['Writeback', 'memory_writeback', 'Memory actively being written back to disk'],
  ['AnonPages', 'memory_anon_pages', 'Non-file-backed pages mapped into user page tables'],
  ['Mapped', 'memory_mapped', 'Files mapped into memory, such as libraries'],
  ['Shmem', 'memory_shmem', 'Shared memory and tmpfs'],
  ['KReclaimable', 'memory_kernel_reclaimable', 'Kernel allocations the kernel will reclaim under pressure (KReclaimable)'],
  ['Slab', 'memory_slab', 'In-kernel data structure caches'],
  ['SReclaimable', 'memory_slab_reclaimable', 'Reclaimable part of the slab, such as caches (SReclaimable)'],
  ['SUnreclaim', 'memory_slab_unreclaimable', 'Part of the slab that cannot be reclaimed (SUnreclaim)'],
  ['KernelStack', 'memory_kernel_stack', 'Memory used by kernel stacks of all tasks'],
  ['ShadowCallStack', 'memory_shadow_call_stack', 'Memory used by shadow call stacks (arm64)'],
  ['PageTables', 'memory_page_tables', 'Memory used by the lowest level of page tables'],
  ['SecPageTables', 'memory_secondary_page_tables', 'Secondary page tables, such as KVM and IOMMU page tables'],
  ['NFS_Unstable', 'memory_nfs_unstable', 'NFS pages sent to the server but not yet committed (always 0 since 5.9)'],
  ['Bounce', 'memory_bounce', 'Memory used for block device bounce buffers'],
  ['WritebackTmp', 'memory_writeback_tmp', 'Memory used by FUSE for temporary writeback buffers'],
  ['CommitLimit', 'memory_commit_limit', 'Memory that can be committed under strict overcommit (mode 2)'],
  ['Committed_AS', 'memory_committed_as', 'Memory currently allocated, even if not yet used (Committed_AS)'],
  ['VmallocTotal', 'memory_vmalloc_total', 'Size of the vmalloc virtual address space'],
  ['VmallocUsed', 'memory_vmalloc_used', 'Used part of the vmalloc address space'],
  ['VmallocChunk', 'memory_vmalloc_chunk', 'Largest free block of vmalloc space (0 since 4.4)'],
  ['Percpu', 'memory_percpu', 'Memory used by the percpu allocator'],
  ['HardwareCorrupted', 'memory_hardware_corrupted', 'Memory the kernel identified as corrupted'],
  ['AnonHugePages', 'memory_anon_hugepages', 'Anonymous memory backed by transparent huge pages'],
  ['ShmemHugePages', 'memory_shmem_hugepages', 'Shmem and tmpfs memory backed by huge pages'],
  ['ShmemPmdMapped', 'memory_shmem_pmd_mapped', 'Shmem memory mapped into user space with huge pages'],
  ['FileHugePages', 'memory_file_hugepages', 'Page cache backed by huge pages'],
  ['FilePmdMapped', 'memory_file_pmd_mapped', 'Page cache mapped into user space with huge pages'],
  ['CmaTotal', 'memory_cma_total', 'Memory reserved for the contiguous memory allocator'],
  ['CmaFree', 'memory_cma_free', 'Free memory in the CMA reserves'],
  ['Unaccepted', 'memory_unaccepted', 'Memory not yet accepted by the guest (confidential computing)'],
  ['Balloon', 'memory_balloon', 'Memory returned to the hypervisor by the balloon driver'],
  ['Hugepagesize', 'memory_hugepage_size', 'Size of the default huge page'],
  ['Hugetlb', 'memory_hugetlb', 'Memory consumed by huge pages of all sizes'],
  ['DirectMap4k', 'memory_direct_map_4k', 'Kernel direct map backed by 4 kB pages'],
  ['DirectMap4M', 'memory_direct_map_4m', 'Kernel direct map backed by 4 MB pages (32-bit x86)'],
  ['DirectMap2M', 'memory_direct_map_2m', 'Kernel direct map backed by 2 MB pages'],
  ['DirectMap1G', 'memory_direct_map_1g', 'Kernel direct map backed by 1 GB pages'],
];

// [field, metric name, description]; plain counts of default-size huge pages
const PAGE_FIELDS: readonly (readonly [string, string, string])[] = [
  ['HugePages_Total', 'memory_hugepages_pool', 'Size of the pool of default-size huge pages'],
  ['HugePages_Free', 'memory_hugepages_free', 'Huge pages in the pool not yet allocated'],
  ['HugePages_Rsvd', 'memory_hugepages_reserved', 'Huge pages committed for allocation but not yet allocated'],
  ['HugePages_Surp', 'memory_hugepages_surplus', 'Huge pages in the pool above the persistent pool size'],
];

const declare = (kb: boolean) =>
  ([field, name, text]: readonly [string, string, string]): MeminfoField => ({
    field,
    kb,
    metric: metric({
      name,
      kind: MetricKind.Gauge,
      unit: kb ? Unit.Bytes : Unit.Pages,
      labels: [],
      description: `${text}; /proc/meminfo ${field}${kb ? ' (kB x 1024)' : ''}.`,
    }),
  });

/** Every /proc/meminfo field the sampler knows; other fields are ignored. */
export const MEMINFO_FIELDS: readonly MeminfoField[] = Object.freeze([
  ...KB_FIELDS.map(declare(true)),
  ...PAGE_FIELDS.map(declare(false)),
]);

const declOf = (field: string): MetricDecl => {
  const found = MEMINFO_FIELDS.find((f) => f.field === field);
  if (found === undefined) throw new Error(`meminfo field ${field} is not declared`);
  return found.metric;
};

/** The five gauges Rezolus itself reports, by name. */
export const memoryTotal = declOf('MemTotal');
export const memoryFree = declOf('MemFree');
export const memoryAvailable = declOf('MemAvailable');
export const memoryBuffers = declOf('Buffers');
export const memoryCached = declOf('Cached');

export const METRICS: readonly MetricDecl[] = Object.freeze(MEMINFO_FIELDS.map((f) => f.metric));
