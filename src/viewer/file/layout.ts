/**
 * What a recording's footer says: the file's own metadata (source, version,
 * hosts, sampling interval, descriptions) and the series it has columns
 * for, from each column's key/value metadata (src/parquet/parquet.ts writes
 * both), and the column of each sampler's frame ends (`timestamp/<sampler>`,
 * recordings made since 2026-11-30) with the sampler of each series. A
 * Parquet file without the `timestamp` and `host` columns, or with a column
 * that does not say which metric it holds, is not a recording. Pure.
 */
import { parquetSchema, type FileMetaData, type KeyValue, type SchemaTree } from 'hyparquet';
import { GROUPING_POWER, MAX_VALUE_POWER } from '../../metrics/histogram.js';
import type { MetricKind } from '../../metrics/metric.js';
import type { SeriesInfo } from '../track.js';
import { ViewerFileError } from './errors.js';

export interface RecordingMeta {
  readonly source: string;
  readonly version: string;
  /** the hosts the writer listed (the tracks are keyed by the `host` column's values) */
  readonly hosts: readonly string[];
  /** the resampling interval; NaN when the file does not say */
  readonly samplingIntervalMs: number;
  /** metric name -> description */
  readonly descriptions: Readonly<Record<string, string>>;
}

/** A series column: its identity and, for histograms, the bucket layout of its dense lists. */
export interface SeriesLayout {
  readonly info: SeriesInfo;
  readonly groupingPower: number;
  readonly maxValuePower: number;
  /** the sampler whose frames filled the column, where the file says and has that sampler's frame ends */
  readonly sampler?: string;
}

export interface Layout {
  readonly meta: RecordingMeta;
  /** by column name (the series id), in file order */
  readonly series: ReadonlyMap<string, SeriesLayout>;
  /** sampler -> the column of its frame ends (UInt64 unix ns per row) */
  readonly frameEnds: ReadonlyMap<string, string>;
}

const KINDS = new Set<string>(['counter', 'gauge', 'histogram']);

function kv(pairs: readonly KeyValue[] | undefined): Map<string, string> {
  return new Map((pairs ?? []).map((p) => [p.key, p.value ?? '']));
}

function json(text: string | undefined): unknown {
  if (text === undefined) return undefined;
  try {
    return JSON.parse(text);
  } catch {
    return undefined;
  }
}

function stringRecord(v: unknown): Record<string, string> {
  if (typeof v !== 'object' || v === null || Array.isArray(v)) return {};
  return Object.fromEntries(Object.entries(v).filter((e): e is [string, string] => typeof e[1] === 'string'));
}

function integer(text: string | undefined, fallback: number): number {
  const n = Number(text);
  return text !== undefined && Number.isInteger(n) ? n : fallback;
}

/** The storage each kind is written as: counters UINT64, gauges DOUBLE, histograms a list of UINT64. */
function storedAs(node: SchemaTree): MetricKind | undefined {
  const e = node.element;
  if (node.children.length === 0) return e.type === 'INT64' ? 'counter' : e.type === 'DOUBLE' ? 'gauge' : undefined;
  const leaf = node.children[0]?.children[0]?.element;
  return e.converted_type === 'LIST' && leaf?.type === 'INT64' ? 'histogram' : undefined;
}

function notRecording(path: string, why: string): ViewerFileError {
  return new ViewerFileError(path, 'not-recording', `${path} is a Parquet file but not a rezolus recording: ${why}`);
}

export function readLayout(path: string, metadata: FileMetaData): Layout {
  const top = new Map(parquetSchema(metadata).children.map((c) => [c.element.name, c]));
  const ts = top.get('timestamp')?.element;
  const host = top.get('host')?.element;
  if (ts === undefined || host === undefined) {
    const missing = [ts === undefined ? '`timestamp`' : '', host === undefined ? '`host`' : ''].filter(Boolean).join(' and ');
    throw notRecording(path, `it has no ${missing} column`);
  }
  if (ts.type !== 'INT64' || host.type !== 'BYTE_ARRAY') throw notRecording(path, `its \`timestamp\` column is ${ts.type ?? 'a group'} (want INT64 nanoseconds) and \`host\` is ${host.type ?? 'a group'} (want text)`);

  const chunkMeta = new Map((metadata.row_groups[0]?.columns ?? []).map((c) => [c.meta_data?.path_in_schema[0], c.meta_data?.key_value_metadata]));
  const series = new Map<string, SeriesLayout>();
  const frameEnds = new Map<string, string>();
  const samplerOf = new Map<string, string>();
  for (const [name, node] of top) {
    if (name === 'timestamp' || name === 'host') continue;
    const m = kv(chunkMeta.get(name));
    if (m.get('metric_type') === 'timestamp') {
      const sampler = m.get('sampler');
      if (sampler === undefined || sampler === '' || storedAs(node) !== 'counter') throw notRecording(path, `column \`${name}\` is a timestamp of no sampler, or not stored as UInt64`);
      frameEnds.set(sampler, name);
      continue;
    }
    const metric = m.get('metric');
    if (metric === undefined || metric === '') throw notRecording(path, `column \`${name}\` has no \`metric\` metadata`);
    const kind = m.get('metric_type') ?? '';
    if (!KINDS.has(kind)) throw notRecording(path, `column \`${name}\` has metric_type "${kind}" (want counter, gauge or histogram)`);
    if (storedAs(node) !== kind) throw notRecording(path, `column \`${name}\` is a ${kind} but is not stored as one`);
    series.set(name, {
      info: { id: name, metric, kind: kind as MetricKind, unit: m.get('unit') ?? '', labels: stringRecord(json(m.get('labels'))) },
      groupingPower: integer(m.get('grouping_power'), GROUPING_POWER),
      maxValuePower: integer(m.get('max_value_power'), MAX_VALUE_POWER),
    });
    const sampler = m.get('sampler');
    if (sampler !== undefined) samplerOf.set(name, sampler);
  }
  // a series keeps its sampler only where the file has that sampler's frame ends
  for (const [name, sampler] of samplerOf) if (frameEnds.has(sampler)) series.set(name, { ...(series.get(name) as SeriesLayout), sampler });

  const file = kv(metadata.key_value_metadata);
  const hosts = json(file.get('hosts'));
  const interval = Number(file.get('sampling_interval_ms'));
  return {
    meta: {
      source: file.get('source') ?? '',
      version: file.get('version') ?? '',
      hosts: Array.isArray(hosts) ? hosts.filter((h): h is string => typeof h === 'string') : [],
      samplingIntervalMs: interval > 0 ? interval : Number.NaN,
      descriptions: stringRecord(json(file.get('descriptions'))),
    },
    series,
    frameEnds,
  };
}
