import type { MetricDecl } from '../../../metrics/metric.js';
import { metric, MetricKind, Unit } from '../../../metrics/metric.js';

const counter = (name: string, unit: Unit, description: string): MetricDecl =>
  metric({ name, kind: MetricKind.Counter, unit, labels: [], description });

// NUMA allocation outcomes (Rezolus names); the kernel counts them in pages
export const memoryNumaHit = counter(
  'memory_numa_hit',
  Unit.Pages,
  'Pages allocated on the node the allocation intended; /proc/vmstat numa_hit.',
);
export const memoryNumaMiss = counter(
  'memory_numa_miss',
  Unit.Pages,
  'Pages allocated on this node although another node was intended; /proc/vmstat numa_miss.',
);
export const memoryNumaForeign = counter(
  'memory_numa_foreign',
  Unit.Pages,
  'Pages intended for this node but allocated on another; /proc/vmstat numa_foreign.',
);
export const memoryNumaInterleave = counter(
  'memory_numa_interleave',
  Unit.Pages,
  'Interleave-policy pages allocated on the intended node; /proc/vmstat numa_interleave.',
);
export const memoryNumaLocal = counter(
  'memory_numa_local',
  Unit.Pages,
  'Pages allocated on the node of the allocating CPU; /proc/vmstat numa_local.',
);
export const memoryNumaOther = counter(
  'memory_numa_other',
  Unit.Pages,
  'Pages allocated on a node other than that of the allocating CPU; /proc/vmstat numa_other.',
);

// faults
export const memoryPageFaults = counter(
  'memory_page_faults',
  Unit.Events,
  'Page faults, minor and major; /proc/vmstat pgfault.',
);
export const memoryMajorPageFaults = counter(
  'memory_major_page_faults',
  Unit.Events,
  'Major page faults, those that needed I/O; /proc/vmstat pgmajfault.',
);

// block I/O: the kernel counts pgpgin/pgpgout in 512-byte sectors and prints them in kB
export const memoryPagedIn = counter(
  'memory_paged_in',
  Unit.Bytes,
  'Bytes read from block devices into memory: every block-layer read (file, swap, direct I/O), not only paging; ' +
    '/proc/vmstat pgpgin (kB x 1024).',
);
export const memoryPagedOut = counter(
  'memory_paged_out',
  Unit.Bytes,
  'Bytes written to block devices from memory: every block-layer write (file, swap, direct I/O), not only paging; ' +
    '/proc/vmstat pgpgout (kB x 1024).',
);

// swapping
export const memorySwappedIn = counter(
  'memory_swapped_in',
  Unit.Pages,
  'Pages read in from swap devices; /proc/vmstat pswpin.',
);
export const memorySwappedOut = counter(
  'memory_swapped_out',
  Unit.Pages,
  'Pages written out to swap devices; /proc/vmstat pswpout.',
);

// reclaim
export const memoryPagesScanned = counter(
  'memory_pages_scanned',
  Unit.Pages,
  'Pages scanned by page reclaim: background, direct, khugepaged and proactive; ' +
    '/proc/vmstat pgscan_kswapd + pgscan_direct + pgscan_khugepaged + pgscan_proactive (those present).',
);
export const memoryPagesReclaimed = counter(
  'memory_pages_reclaimed',
  Unit.Pages,
  'Pages reclaimed by page reclaim: background, direct, khugepaged and proactive; ' +
    '/proc/vmstat pgsteal_kswapd + pgsteal_direct + pgsteal_khugepaged + pgsteal_proactive (those present).',
);
export const memoryAllocationStalls = counter(
  'memory_allocation_stalls',
  Unit.Events,
  'Times an allocation stalled in direct reclaim, all zones; /proc/vmstat allocstall_* (allocstall before 4.8).',
);
export const memoryWorkingsetRefaults = counter(
  'memory_workingset_refaults',
  Unit.Pages,
  'Pages faulted back in soon after being reclaimed, a thrashing signal; ' +
    '/proc/vmstat workingset_refault_anon + workingset_refault_file (workingset_refault before 5.9).',
);
export const memoryCompactionStalls = counter(
  'memory_compaction_stalls',
  Unit.Events,
  'Times an allocation stalled to compact memory itself; /proc/vmstat compact_stall.',
);

// transparent huge pages
export const memoryThpFaultAllocs = counter(
  'memory_thp_fault_allocs',
  Unit.Events,
  'Page faults served with a newly allocated transparent huge page; /proc/vmstat thp_fault_alloc.',
);
export const memoryThpFaultFallbacks = counter(
  'memory_thp_fault_fallbacks',
  Unit.Events,
  'Page faults that wanted a transparent huge page and fell back to small pages; /proc/vmstat thp_fault_fallback.',
);

// out of memory
export const memoryOomKills = counter(
  'memory_oom_kills',
  Unit.Events,
  'Processes killed by the OOM killer; /proc/vmstat oom_kill.',
);

/** Where a counter comes from: one /proc/vmstat field, or the sum of those present of several. */
export interface VmstatSource {
  readonly metric: MetricDecl;
  readonly fields: readonly string[];
  /** the raw value is multiplied by this: 1, or 1024 for the kB fields */
  readonly scale: number;
}

const source = (m: MetricDecl, fields: readonly string[], scale = 1): VmstatSource =>
  Object.freeze({ metric: m, fields: Object.freeze([...fields]), scale });

/** Every counter of the sampler with its source fields, in emit order. */
export const VMSTAT_SOURCES: readonly VmstatSource[] = Object.freeze([
  source(memoryNumaHit, ['numa_hit']),
  source(memoryNumaMiss, ['numa_miss']),
  source(memoryNumaForeign, ['numa_foreign']),
  source(memoryNumaInterleave, ['numa_interleave']),
  source(memoryNumaLocal, ['numa_local']),
  source(memoryNumaOther, ['numa_other']),
  source(memoryPageFaults, ['pgfault']),
  source(memoryMajorPageFaults, ['pgmajfault']),
  source(memoryPagedIn, ['pgpgin'], 1024),
  source(memoryPagedOut, ['pgpgout'], 1024),
  source(memorySwappedIn, ['pswpin']),
  source(memorySwappedOut, ['pswpout']),
  source(memoryPagesScanned, ['pgscan_kswapd', 'pgscan_direct', 'pgscan_khugepaged', 'pgscan_proactive']),
  source(memoryPagesReclaimed, ['pgsteal_kswapd', 'pgsteal_direct', 'pgsteal_khugepaged', 'pgsteal_proactive']),
  source(memoryAllocationStalls, [
    'allocstall',
    'allocstall_dma',
    'allocstall_dma32',
    'allocstall_normal',
    'allocstall_movable',
    'allocstall_device',
  ]),
  source(memoryWorkingsetRefaults, ['workingset_refault', 'workingset_refault_anon', 'workingset_refault_file']),
  source(memoryCompactionStalls, ['compact_stall']),
  source(memoryThpFaultAllocs, ['thp_fault_alloc']),
  source(memoryThpFaultFallbacks, ['thp_fault_fallback']),
  source(memoryOomKills, ['oom_kill']),
]);

export const METRICS: readonly MetricDecl[] = Object.freeze(VMSTAT_SOURCES.map((s) => s.metric));
