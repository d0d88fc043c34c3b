/**
 * The fleet table: its columns, and a host's summary (GET /api/v1/hosts) as a
 * row of sortable values and their text. Pure.
 */
import type { HostSummary } from '../api.js';
import { formatDuration, formatPercent, formatValue } from './units.js';

export type FleetColumnKey =
  | 'host'
  | 'cpu'
  | 'runqueue'
  | 'memUsed'
  | 'memAvailable'
  | 'rx'
  | 'tx'
  | 'read'
  | 'write'
  | 'active'
  | 'failed'
  | 'age'
  | 'buffered'
  | 'refused';

export interface FleetColumn {
  readonly key: FleetColumnKey;
  readonly title: string;
  /** the header's tooltip */
  readonly help: string;
  readonly text: boolean;
}

export const FLEET_COLUMNS: readonly FleetColumn[] = [
  { key: 'host', title: 'host', help: 'host name; click to open its page', text: true },
  { key: 'cpu', title: 'CPU', help: 'CPU busy, share of all CPUs, last interval', text: false },
  { key: 'runqueue', title: 'run-queue p99', help: 'run-queue latency p99, last interval', text: false },
  { key: 'memUsed', title: 'mem used', help: 'memory total minus available', text: false },
  { key: 'memAvailable', title: 'mem available', help: 'MemAvailable', text: false },
  { key: 'rx', title: 'net rx', help: 'network bytes received per second', text: false },
  { key: 'tx', title: 'net tx', help: 'network bytes sent per second', text: false },
  { key: 'read', title: 'disk read', help: 'block IO bytes read per second', text: false },
  { key: 'write', title: 'disk write', help: 'block IO bytes written per second', text: false },
  { key: 'active', title: 'samplers', help: 'samplers active', text: false },
  { key: 'failed', title: 'failed', help: 'samplers failed; hover for the reasons', text: false },
  { key: 'age', title: 'last frame', help: 'time since the newest frame', text: false },
  { key: 'buffered', title: 'buffered', help: "frames in the agent's outage buffer", text: false },
  { key: 'refused', title: 'refused', help: 'frames the bus refused', text: false },
];

export interface FleetRow {
  readonly host: string;
  readonly values: Readonly<Record<FleetColumnKey, number | string | null>>;
  readonly cells: Readonly<Record<FleetColumnKey, string>>;
  /** the failed samplers and why, one per line ('' when none failed) */
  readonly failedReasons: string;
  /** the memory cell's tooltip: used out of total */
  readonly memoryNote: string;
}

const sub = (a: number | null, b: number | null): number | null => (a === null || b === null ? null : a - b);

/** A host's row, its frame age taken at `now` (unix ms). */
export function fleetRow(h: HostSummary, now: number): FleetRow {
  const samplers = Object.entries(h.samplers);
  const active = samplers.filter(([, s]) => s.state === 'active').length;
  const failed = samplers.filter(([, s]) => s.state === 'failed');
  const failedReasons = failed.map(([name, s]) => `${name}: ${s.reason ?? 'no reason given'}`).join('\n');
  const memUsed = sub(h.memoryTotalBytes, h.memoryAvailableBytes);
  const age = Math.max(0, now - h.lastMs);
  const values: Record<FleetColumnKey, number | string | null> = {
    host: h.host,
    cpu: h.cpu,
    runqueue: h.runqueueP99Ns,
    memUsed,
    memAvailable: h.memoryAvailableBytes,
    rx: h.networkRxBps,
    tx: h.networkTxBps,
    read: h.blockReadBps,
    write: h.blockWriteBps,
    active: samplers.length === 0 ? null : active,
    failed: samplers.length === 0 ? null : failed.length,
    age,
    buffered: h.buffered,
    refused: h.refused,
  };
  const count = (v: number | null) => (v === null ? '—' : String(v));
  const cells: Record<FleetColumnKey, string> = {
    host: h.host,
    cpu: h.cpus === null ? formatPercent(h.cpu) : `${formatPercent(h.cpu)} of ${h.cpus}`,
    runqueue: formatValue(h.runqueueP99Ns, 'nanoseconds'),
    memUsed: formatValue(memUsed, 'bytes'),
    memAvailable: formatValue(h.memoryAvailableBytes, 'bytes'),
    rx: formatValue(h.networkRxBps, 'bytes/s'),
    tx: formatValue(h.networkTxBps, 'bytes/s'),
    read: formatValue(h.blockReadBps, 'bytes/s'),
    write: formatValue(h.blockWriteBps, 'bytes/s'),
    active: samplers.length === 0 ? '—' : `${active} of ${samplers.length}`,
    failed: samplers.length === 0 ? '—' : String(failed.length),
    age: formatDuration(age),
    buffered: count(h.buffered),
    refused: count(h.refused),
  };
  const memoryNote =
    memUsed === null || h.memoryTotalBytes === null ? '' : `${formatValue(memUsed, 'bytes')} used of ${formatValue(h.memoryTotalBytes, 'bytes')}`;
  return { host: h.host, values, cells, failedReasons, memoryNote };
}
