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
  /** shown only for a live source (the frame age and the agent's buffers mean nothing in a recording) */
  readonly liveOnly?: boolean;
}

/** A live host whose newest frame is older than this is stale: about 3 × its usual refresh. */
export const STALE_MS = 10_000;

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
  { key: 'active', title: 'samplers', help: 'samplers active of enabled (disabled ones do not count); hover for the others', text: false },
  { key: 'failed', title: 'failed', help: 'samplers failed; hover for the reasons', text: false },
  { key: 'age', title: 'last frame', help: `time since the newest frame; "stale" past ${STALE_MS / 1000} s`, text: false, liveOnly: true },
  { key: 'buffered', title: 'buffered', help: "frames in the agent's outage buffer", text: false, liveOnly: true },
  { key: 'refused', title: 'refused', help: 'frames the bus refused', text: false, liveOnly: true },
];

/**
 * The firing alerts column (GET /api/v1/hosts `alertsFiring`): shown when
 * the rows carry the count (a live bus), after the host; its value is not
 * one of a FleetRow's, the page takes it from the summary.
 */
export const ALERTS_COLUMN = {
  key: 'alerts',
  title: 'alerts',
  help: 'alerts firing now (the newest event of each in the window); open the host for its markers',
  text: false,
} as const;

/** The alerts cell of a host: the count, '—' while the viewer cannot read alerts. */
export function alertsCell(h: HostSummary): { value: number | null; text: string } {
  const n = h.alertsFiring ?? null;
  return { value: n, text: n === null ? '—' : n === 0 ? '0' : `${n} firing` };
}

/** The columns shown: all for a live source, without the live-only ones for a recording. */
export function fleetColumns(live: boolean): readonly FleetColumn[] {
  return live ? FLEET_COLUMNS : FLEET_COLUMNS.filter((c) => c.liveOnly !== true);
}

export interface FleetRow {
  readonly host: string;
  readonly values: Readonly<Record<FleetColumnKey, number | string | null>>;
  readonly cells: Readonly<Record<FleetColumnKey, string>>;
  /** the failed samplers and why, one per line ('' when none failed) */
  readonly failedReasons: string;
  /** the memory cell's tooltip: used out of total */
  readonly memoryNote: string;
  /** the samplers cell's tooltip: the samplers not active, their state and reason, one per line, and how many are disabled ('' when all are active) */
  readonly samplersNote: string;
  /** live only: the newest frame is more than STALE_MS old */
  readonly stale: boolean;
}

const sub = (a: number | null, b: number | null): number | null => (a === null || b === null ? null : a - b);

/** A host's row, its frame age taken at `now` (unix ms); `live`: a live source, whose hosts can go stale. */
export function fleetRow(h: HostSummary, now: number, live = false): FleetRow {
  const samplers = Object.entries(h.samplers).sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0));
  const enabled = samplers.filter(([, s]) => s.state !== 'disabled');
  const disabled = samplers.length - enabled.length;
  const active = enabled.filter(([, s]) => s.state === 'active').length;
  const failed = samplers.filter(([, s]) => s.state === 'failed');
  const failedReasons = failed.map(([name, s]) => `${name}: ${s.reason ?? 'no reason given'}`).join('\n');
  const notActive = enabled.filter(([, s]) => s.state !== 'active').map(([name, s]) => `${name}: ${s.state}${s.reason === undefined ? '' : ` (${s.reason})`}`);
  if (disabled > 0) notActive.push(`${disabled} disabled (not counted): ${samplers.filter(([, s]) => s.state === 'disabled').map(([name]) => name).join(', ')}`);
  const samplersNote = notActive.join('\n');
  const memUsed = sub(h.memoryTotalBytes, h.memoryAvailableBytes);
  const age = Math.max(0, now - h.lastMs);
  const stale = live && age > STALE_MS;
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
    active: enabled.length === 0 ? null : active,
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
    active: enabled.length === 0 ? '—' : `${active} of ${enabled.length}`,
    failed: samplers.length === 0 ? '—' : String(failed.length),
    age: formatDuration(age),
    buffered: count(h.buffered),
    refused: count(h.refused),
  };
  const memoryNote =
    memUsed === null || h.memoryTotalBytes === null ? '' : `${formatValue(memUsed, 'bytes')} used of ${formatValue(h.memoryTotalBytes, 'bytes')}`;
  return { host: h.host, values, cells, failedReasons, memoryNote, samplersNote, stale };
}
