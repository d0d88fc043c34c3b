/**
 * The page's sections: which section a metric belongs to (by the domain
 * prefix of its name), the order they are shown in, what the Overview holds,
 * and how a metric is drawn by default. A metric whose prefix is not known
 * goes to Other, so a new metric shows up without viewer code.
 */
import type { MetricKind } from '../../metrics/metric.js';
import type { QueryFn } from '../api.js';

/** The sections in display order. */
export const SECTIONS = [
  'Overview',
  'CPU',
  'Memory',
  'Network',
  'TCP',
  'Scheduler',
  'Syscalls',
  'Softirq',
  'Block IO',
  'Filesystem',
  'cgroups',
  'Rezolus',
  'Other',
] as const;

export type Section = (typeof SECTIONS)[number];

/** The section a metric lives in (the Overview only repeats metrics of other sections). */
export type MetricSection = Exclude<Section, 'Overview'>;

/** Domain (the name's first word) → section. `softirq` and `syscall` are also whole metric names. */
const DOMAINS: Readonly<Record<string, MetricSection>> = {
  cpu: 'CPU',
  memory: 'Memory',
  network: 'Network',
  tcp: 'TCP',
  scheduler: 'Scheduler',
  syscall: 'Syscalls',
  softirq: 'Softirq',
  blockio: 'Block IO',
  filesystem: 'Filesystem',
  cgroup: 'cgroups',
  rezolus: 'Rezolus',
};

/** The section of a metric: by the part of its name before the first `_` (or the whole name), else Other. */
export function sectionOf(metricName: string): MetricSection {
  const cut = metricName.indexOf('_');
  const domain = cut < 0 ? metricName : metricName.slice(0, cut);
  return Object.hasOwn(DOMAINS, domain) ? (DOMAINS[domain] as MetricSection) : 'Other';
}

/**
 * What the Overview shows, in order (names from METRICS.md): CPU usage, run-queue
 * latency, memory available, network bytes (BPF, then /proc/net/dev), block IO
 * bytes (BPF, then /proc/diskstats) and latency, syscall latency. The page shows
 * those the host has, so a host without BPF still gets the procfs ones.
 */
export const OVERVIEW_METRICS: readonly string[] = [
  'cpu_usage_all',
  'scheduler_runqueue_latency',
  'memory_available',
  'network_bytes',
  'network_device_bytes',
  'blockio_bytes',
  'blockio_device_bytes',
  'blockio_latency',
  'syscall_latency',
];

/** How a metric is drawn unless asked otherwise: counters as rates, gauges as they are, histograms as percentiles. */
export function defaultFn(kind: MetricKind): QueryFn {
  switch (kind) {
    case 'counter':
      return 'rate';
    case 'gauge':
      return 'value';
    case 'histogram':
      return 'percentiles';
  }
}
