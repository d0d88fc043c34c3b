import type { FileSpec } from './schema.js';
import { logSection, natsSection } from './schema.js';
import { loadConfig } from './load.js';
import { DEFAULT_PERCENTILES } from '../metrics/histogram.js';

export const EXPORTER_SPEC: FileSpec = {
  general: {
    doc: 'Where the exporter listens and which hosts it follows.',
    keys: {
      listen: { type: 'listen', default: '0.0.0.0:4242', doc: 'HOST:PORT for GET /metrics. --listen overrides.' },
      hosts: { type: 'hosts', default: '*', doc: '"*" for every host on the bus, or a comma-separated list of host names. --hosts overrides.' },
      interval: { type: 'duration', default: '1s', minMs: 10, doc: 'Window of the histogram percentiles; set it to the Prometheus scrape interval. --interval overrides.' },
      forget_after: { type: 'duration', default: '1m', minMs: 1000, doc: 'A host/sampler with no frame for this long disappears from /metrics.' },
    },
  },
  nats: natsSection,
  log: logSection,
  prometheus: {
    doc: 'How histograms are exposed.',
    keys: {
      percentiles: { type: 'quantiles', default: [...DEFAULT_PERCENTILES], doc: 'Quantiles (0..1) exported as gauges with a percentile label, over the last interval.' },
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
  readonly logLevel: string;
  readonly percentiles: readonly number[];
}

export interface ExporterOverrides {
  readonly listen?: { host: string; port: number } | undefined;
  readonly hosts?: string | undefined;
  readonly intervalMs?: number | undefined;
  readonly natsUrl?: string | undefined;
  readonly logLevel?: string | undefined;
}

export function loadExporterConfig(path: string | undefined, o: ExporterOverrides = {}): ExporterConfig {
  const f = loadConfig(path, EXPORTER_SPEC);
  const s = (section: string, key: string): unknown => f.sections[section]?.[key];
  return {
    file: f.path,
    listen: o.listen ?? (s('general', 'listen') as { host: string; port: number }),
    hosts: o.hosts ?? (s('general', 'hosts') as string),
    intervalMs: o.intervalMs ?? (s('general', 'interval') as number),
    forgetAfterMs: s('general', 'forget_after') as number,
    natsUrl: o.natsUrl ?? (s('nats', 'url') as string),
    logLevel: o.logLevel ?? (s('log', 'level') as string),
    percentiles: s('prometheus', 'percentiles') as number[],
  };
}
