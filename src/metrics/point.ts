import type { MetricDecl } from './metric.js';
import type { SparseHistogram } from './histogram.js';

/** Label values, keyed by the label keys of the metric declaration. */
export type Labels = Readonly<Record<string, string>>;

/** The label set of every unlabelled series: one shared object, so layouts compare by identity. */
export const NO_LABELS: Labels = Object.freeze({});

/**
 * A counter is a cumulative u64: a `number` while it is a safe integer, a
 * `bigint` beyond 2^53. A gauge is any finite number. A histogram is the
 * cumulative h2 histogram in sparse form.
 */
export type Value = number | bigint | SparseHistogram;

/** One series value read in one refresh: what a sampler makes and a frame carries. */
export interface Point {
  readonly metric: MetricDecl;
  readonly labels: Labels;
  readonly value: Value;
}
