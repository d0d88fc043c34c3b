/**
 * The metric vocabulary: every metric is declared once with its name, kind,
 * unit, label keys and description. Frames, the exporter, the recorder and
 * the generated METRICS.md all read these declarations.
 */

export const MetricKind = {
  Counter: 'counter',
  Gauge: 'gauge',
  Histogram: 'histogram',
} as const;
export type MetricKind = (typeof MetricKind)[keyof typeof MetricKind];

/**
 * Units as Rezolus names them. `prometheus` says how the exporter turns the
 * value into a Prometheus base unit: the name suffix it appends and the factor
 * it multiplies by. Units without a base unit (counts of things) add no suffix.
 */
export const Unit = {
  Nanoseconds: 'nanoseconds',
  Microseconds: 'microseconds',
  Milliseconds: 'milliseconds',
  Seconds: 'seconds',
  Bytes: 'bytes',
  Pages: 'pages',
  Operations: 'operations',
  Packets: 'packets',
  Events: 'events',
  Count: 'count',
  Cores: 'cores',
  Tasks: 'tasks',
  Ratio: 'ratio',
} as const;
export type Unit = (typeof Unit)[keyof typeof Unit];

export interface PrometheusUnit {
  /** appended to the metric name unless it already ends with it */
  readonly suffix: string;
  /** multiply the raw value by this to get the base unit */
  readonly scale: number;
}

export const PROMETHEUS_UNITS: Readonly<Record<Unit, PrometheusUnit>> = {
  nanoseconds: { suffix: 'seconds', scale: 1e-9 },
  microseconds: { suffix: 'seconds', scale: 1e-6 },
  milliseconds: { suffix: 'seconds', scale: 1e-3 },
  seconds: { suffix: 'seconds', scale: 1 },
  bytes: { suffix: 'bytes', scale: 1 },
  pages: { suffix: '', scale: 1 },
  operations: { suffix: '', scale: 1 },
  packets: { suffix: '', scale: 1 },
  events: { suffix: '', scale: 1 },
  count: { suffix: '', scale: 1 },
  cores: { suffix: '', scale: 1 },
  tasks: { suffix: '', scale: 1 },
  ratio: { suffix: 'ratio', scale: 1 },
};

/** A metric family as a sampler declares it. */
export interface MetricDecl {
  /** `<domain>_<thing>`, snake case, Rezolus's name where Rezolus has the metric */
  readonly name: string;
  readonly kind: MetricKind;
  readonly unit: Unit;
  /** label keys every series of this metric carries, in this order */
  readonly labels: readonly string[];
  readonly description: string;
}

/** Labels the exporter adds to sampler series itself (and Prometheus reserves le and quantile). */
const EXPORTER_LABELS = ['host', 'percentile', 'le', 'quantile'];

/**
 * Declares a metric; the shape check runs once, at module load. The
 * exporter's own metrics, which get no automatic host label, may declare
 * `host` with `{ ownHostLabel: true }`.
 */
export function metric(decl: MetricDecl, options: { readonly ownHostLabel?: boolean } = {}): MetricDecl {
  if (!/^[a-z][a-z0-9_]*$/.test(decl.name)) {
    throw new Error(`metric name must be snake case, got "${decl.name}"`);
  }
  for (const l of decl.labels) {
    const reserved = EXPORTER_LABELS.includes(l) && !(l === 'host' && options.ownHostLabel === true);
    if (!/^[a-z][a-z0-9_]*$/.test(l) || reserved) {
      throw new Error(`label "${l}" of metric "${decl.name}" is not allowed (snake case; host, percentile, le and quantile are the exporter's)`);
    }
  }
  if (decl.description.trim() === '') throw new Error(`metric "${decl.name}" needs a description`);
  return Object.freeze({ ...decl, labels: Object.freeze([...decl.labels]) });
}
