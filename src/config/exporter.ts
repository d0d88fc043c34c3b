import type { FileSpec } from './schema.js';
import { logSection, natsSection } from './schema.js';
import { loadConfig } from './load.js';
import { readNatsSecurity, type NatsSecurity } from './nats.js';

/** Percentiles of histograms over the last interval; 1.0 is the maximum. */
export const EXPORTER_PERCENTILES: readonly number[] = [0.5, 0.9, 0.99, 0.999, 0.9999, 1.0];
/** Percentiles of the per-sample rates of oversampled counters. */
export const OVERSAMPLE_PERCENTILES: readonly number[] = [0.5, 0.9, 0.99, 1.0];
/** Counters with the oversampling view unless the config says otherwise. */
export const OVERSAMPLE_METRICS: readonly string[] = [
  'cpu_usage',
  'cpu_usage_all',
  'network_device_bytes',
  'network_device_packets',
  'blockio_device_bytes',
  'blockio_device_operations',
];

export const EXPORTER_SPEC: FileSpec = {
  general: {
    doc: 'Where the exporter listens and which hosts it follows.',
    keys: {
      listen: { type: 'listen', default: '0.0.0.0:4242', doc: 'HOST:PORT for GET /metrics. --listen overrides.' },
      hosts: { type: 'hosts', default: '*', doc: '"*" for every host on the bus (the fleet), or a comma-separated list of host names and globs such as "web-*". --hosts overrides.' },
      interval: {
        type: 'duration', default: '1s', minMs: 10,
        doc: 'Must equal the Prometheus scrape interval: histogram percentiles and the oversampling view cover the last interval, so a longer scrape interval misses events and a shorter one repeats them. --interval overrides.',
      },
      forget_after: { type: 'duration', default: '1m', minMs: 1000, doc: 'A host/sampler with no frame for this long disappears from /metrics; it comes back with its next frame.' },
    },
  },
  nats: natsSection,
  log: logSection,
  prometheus: {
    doc: 'How histograms are exposed.',
    keys: {
      summaries: { type: 'boolean', default: true, doc: 'Serve each histogram as percentile gauges (label percentile) of the events of the last interval.' },
      percentiles: { type: 'quantiles', default: [...EXPORTER_PERCENTILES], doc: 'Quantiles (0..1) of the summaries; 1.0 is the maximum. Each is the upper bound of the bucket it falls in.' },
      histograms: {
        type: 'boolean', default: false,
        doc: 'Also serve each histogram as a full Prometheus histogram <name>_distribution_<unit> (cumulative buckets since the agent started, le = bucket upper bound, _sum = sum of count x upper bound).',
      },
      histogram_grouping_power: {
        type: 'integer', default: 3, min: 0, max: 3,
        doc: 'Bucket resolution of the full histograms: 3 keeps every bucket (at most 12.5% relative error); 2, 1 and 0 merge them (25, 50, 100%) to cut series.',
      },
    },
  },
  oversample: {
    doc: 'The oversampling view: for counters the agent samples faster than the interval, percentiles of the per-sample rate (per second) within the last interval, as <family>_rate{percentile=...}, so a short burst shows in the maximum while the interval average hides it. Served once a window has held 3 samples: an agent sampling once per interval gets none (it would only repeat the raw counter).',
    keys: {
      metrics: { type: 'names', default: [...OVERSAMPLE_METRICS], doc: 'Counter metrics (names as in METRICS.md) that get the view; [] turns it off.' },
      percentiles: { type: 'quantiles', default: [...OVERSAMPLE_PERCENTILES], doc: 'Quantiles (0..1) of the per-sample rates; 1.0 is the fastest sample.' },
    },
  },
};

export interface ExporterConfig {
  readonly file: string;
  readonly listen: { readonly host: string; readonly port: number };
  readonly hosts: string;
  readonly intervalMs: number;
  readonly forgetAfterMs: number;
  readonly natsUrl: string;
  /** credentials, TLS and inbox prefix ([nats]); absent = none */
  readonly nats?: NatsSecurity | undefined;
  readonly logLevel: string;
  readonly summaries: boolean;
  readonly percentiles: readonly number[];
  readonly histograms: boolean;
  readonly histogramGroupingPower: number;
  readonly oversampleMetrics: readonly string[];
  readonly oversamplePercentiles: readonly number[];
}

export interface ExporterOverrides {
  readonly listen?: { host: string; port: number } | undefined;
  readonly hosts?: string | undefined;
  readonly intervalMs?: number | undefined;
  readonly natsUrl?: string | undefined;
  readonly logLevel?: string | undefined;
  readonly forgetAfterMs?: number | undefined;
  readonly histograms?: boolean | undefined;
  readonly oversampleMetrics?: readonly string[] | undefined;
}

export function loadExporterConfig(path: string | undefined, o: ExporterOverrides = {}): ExporterConfig {
  const f = loadConfig(path, EXPORTER_SPEC);
  const s = (section: string, key: string): unknown => f.sections[section]?.[key];
  return {
    file: f.path,
    listen: o.listen ?? (s('general', 'listen') as { host: string; port: number }),
    hosts: o.hosts ?? (s('general', 'hosts') as string),
    intervalMs: o.intervalMs ?? (s('general', 'interval') as number),
    forgetAfterMs: o.forgetAfterMs ?? (s('general', 'forget_after') as number),
    natsUrl: o.natsUrl ?? (s('nats', 'url') as string),
    nats: readNatsSecurity(f.sections.nats, f.path),
    logLevel: o.logLevel ?? (s('log', 'level') as string),
    summaries: s('prometheus', 'summaries') as boolean,
    percentiles: s('prometheus', 'percentiles') as number[],
    histograms: o.histograms ?? (s('prometheus', 'histograms') as boolean),
    histogramGroupingPower: s('prometheus', 'histogram_grouping_power') as number,
    oversampleMetrics: o.oversampleMetrics ?? (s('oversample', 'metrics') as string[]),
    oversamplePercentiles: s('oversample', 'percentiles') as number[],
  };
}
