/**
 * The exporter process's own default metrics (process_* and nodejs_*), from
 * prom-client, in a private registry. Families whose names break the
 * Prometheus conventions (gauges ending in _total) are left out so the
 * exposition stays lint-clean, and so are samples without a value yet (NaN
 * right after start) and families without samples.
 */
import { collectDefaultMetrics, Registry } from 'prom-client';

const LINT_BREAKERS = ['nodejs_active_handles_total', 'nodejs_active_requests_total', 'nodejs_active_resources_total'];

export interface ProcessMetrics {
  /** The families as exposition text, without blank lines; '' on failure. */
  text(): Promise<string>;
}

export function processMetrics(): ProcessMetrics {
  const registry = new Registry();
  collectDefaultMetrics({ register: registry });
  for (const name of LINT_BREAKERS) registry.removeSingleMetric(name);
  return {
    async text() {
      return tidyExposition(await registry.metrics());
    },
  };
}

/** Drops blank lines, NaN samples and HELP/TYPE lines of families left without samples. */
export function tidyExposition(text: string): string {
  const out: string[] = [];
  let header: string[] = [];
  for (const line of text.split('\n')) {
    if (line === '') continue;
    if (line.startsWith('#')) {
      if (line.startsWith('# HELP ')) header = [];
      header.push(line);
      continue;
    }
    if (/\s[Nn]a[Nn]$/.test(line)) continue;
    for (const h of header) out.push(h);
    header = [];
    out.push(line);
  }
  return out.length === 0 ? '' : `${out.join('\n')}\n`;
}
