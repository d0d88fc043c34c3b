/**
 * Alert events as one line each for a terminal (`rezolus alert events`):
 * time, host, rule, state, value and summary. Pure.
 */
import type { AlertEvent } from './contract.js';

/** Labels of a per-series alert, `{cgroup=/a}`; empty for a summed one. */
function seriesText(series: Readonly<Record<string, string>>): string {
  const pairs = Object.entries(series).map(([k, v]) => `${k}=${v}`);
  return pairs.length === 0 ? '' : `{${pairs.join(',')}}`;
}

export function eventLine(e: AlertEvent): string {
  const head = `${e.at.replace(/\.\d+Z$/, 'Z')}  ${e.host}  ${e.rule}${seriesText(e.series)}`;
  if (e.kind === 'capture') {
    return e.file !== undefined ? `${head}  capture  ${e.file} (${e.rows ?? 0} rows, ${e.since} to ${e.until})` : `${head}  capture failed  ${e.error ?? ''}`;
  }
  const value = e.state === 'stale' ? 'no frames' : `${e.valueText} (threshold ${e.thresholdText})`;
  return `${head}  ${e.previous} -> ${e.state}  ${value}  ${e.summary}`;
}
