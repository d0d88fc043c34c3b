/** Every metric the samplers declare, by name: what `rezolus alert check` checks rules against. */
import type { MetricDecl } from '../metrics/metric.js';
import { SAMPLERS } from './registry.js';

export function metricCatalog(): ReadonlyMap<string, MetricDecl> {
  const out = new Map<string, MetricDecl>();
  for (const s of SAMPLERS) for (const m of s.metrics) out.set(m.name, m);
  return out;
}
