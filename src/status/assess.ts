/**
 * Judges a BusSnapshot: one row per host with its state and what is wrong,
 * problems first; the stream's window and limits; the durable consumers and
 * their lag. Pure: the snapshot and the options are all it reads.
 */
import { BUNDLE_TOKEN } from '../bus/subjects.js';
import type { AgentStatusRecord, SamplerRecord } from './record.js';
import { samplerClass } from './record.js';
import type { ConsumerReport, HostReport, HostState, SamplerReport, StatusReport, StreamReport } from './report.js';
import { isUnavailable, type AlertSnapshot, type BusSnapshot, type ConsumerSnapshot, type StreamSnapshot, type SubjectSnapshot } from './snapshot.js';
import { formatAge, iso, seconds } from './units.js';

export interface AssessOptions {
  /** a host whose newest frame is older than this is silent */
  readonly silentAfterMs: number;
  /** the --hosts selection, as given ("*" = every host) */
  readonly hosts: string;
}

/** Default of --silent-after: the shipped host_silent alert rule's threshold (config/alerts.toml). */
export const DEFAULT_SILENT_AFTER_MS = 30_000;

const RANK: Readonly<Record<HostState, number>> = { silent: 0, stopped: 1, failed: 2, ok: 4 };

interface HostParts {
  subjects: SubjectSnapshot[];
  status: AgentStatusRecord | undefined;
  alerts: AlertSnapshot[];
}

const ageOf = (atMs: number, ms: number | undefined): number | null => (ms === undefined ? null : seconds(atMs - ms));
const isoOf = (ms: number | undefined): string | null => (ms === undefined ? null : iso(ms));

/**
 * Each sampler of the host's status record, and each sampler subject the
 * stream holds: its state and the age of its newest frame. The frames of
 * an agent that bundles share one subject: a sampler that publishes
 * (active or degraded) is given the age of the newest bundle, unless a
 * subject of its own is newer, or the status record says its last frame
 * was already behind when the record was written (a refresh that hangs:
 * then that time).
 */
function samplerReports(parts: HostParts, atMs: number): SamplerReport[] {
  const newest = new Map(parts.subjects.map((s) => [s.sampler, s.lastMs]));
  const bundled = newest.get(BUNDLE_TOKEN);
  const updatedMs = parts.status?.updatedMs;
  /** the later of a subject's own time (if any) and `other` */
  const newer = (own: number | undefined, other: number): number => (own === undefined || other > own ? other : own);
  const lastOf = (s: SamplerRecord): number | undefined => {
    const own = newest.get(s.name);
    if (bundled === undefined || (s.state !== 'active' && s.state !== 'degraded')) return own;
    const made = s.lastFrameMs;
    // behind at the record's writing by more than two intervals (at least 2 s): the bundles go on without it
    if (made !== undefined && updatedMs !== undefined && updatedMs - made > Math.max(2 * (s.intervalMs ?? 1000), 2000)) return newer(own, made);
    return newer(own, bundled);
  };
  const out: SamplerReport[] = (parts.status?.samplers ?? []).map((s) => ({
    name: s.name,
    state: s.state,
    reason: s.reason ?? null,
    error: s.error ?? null,
    interval_ms: s.intervalMs ?? null,
    last_frame_age_s: ageOf(atMs, lastOf(s)),
  }));
  const listed = new Set(out.map((s) => s.name));
  for (const s of parts.subjects) {
    if (!listed.has(s.sampler) && s.sampler !== BUNDLE_TOKEN) out.push({ name: s.sampler, state: null, reason: null, error: null, interval_ms: null, last_frame_age_s: ageOf(atMs, s.lastMs) });
  }
  return out.sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0));
}

function sortedUnique(values: readonly string[]): string[] {
  return [...new Set(values)].sort();
}

function hostReport(host: string, parts: HostParts, atMs: number, alertsKnown: boolean, silentAfterMs: number): HostReport {
  const status = parts.status;
  let lastMs: number | undefined;
  for (const s of parts.subjects) if (s.lastMs !== undefined && (lastMs === undefined || s.lastMs > lastMs)) lastMs = s.lastMs;
  const counts = { ok: 0, degraded: 0, failed: 0, off: 0, other: 0 };
  for (const s of status?.samplers ?? []) {
    const c = samplerClass(s.state);
    counts[c === 'unknown' ? 'other' : c]++;
    if (s.state === 'degraded') counts.degraded++;
  }
  let state: HostState;
  let problem: string | null;
  if (status?.state === 'stopped') {
    state = 'stopped';
    problem = status.updatedMs === undefined ? 'stopped' : `stopped ${formatAge(atMs - status.updatedMs)} ago`;
  } else if (lastMs === undefined) {
    state = 'silent';
    problem = 'no frames in the window';
  } else if (atMs - lastMs > silentAfterMs) {
    state = 'silent';
    problem = `silent ${formatAge(atMs - lastMs)}`;
  } else if (counts.failed > 0) {
    state = 'failed';
    problem = `${counts.failed} sampler${counts.failed === 1 ? '' : 's'} failed`;
  } else {
    state = 'ok';
    problem = null;
  }
  const firing = parts.alerts.filter((a) => a.state === 'firing');
  const pending = parts.alerts.filter((a) => a.state === 'pending');
  return {
    host,
    state,
    problem,
    last_frame: isoOf(lastMs),
    last_frame_age_s: ageOf(atMs, lastMs),
    frames: parts.subjects.reduce((n, s) => n + s.messages, 0),
    agent:
      status === undefined
        ? null
        : {
            state: status.state,
            version: status.version ?? null,
            instance: status.instance ?? null,
            started: isoOf(status.startedMs),
            updated: isoOf(status.updatedMs),
            updated_age_s: ageOf(atMs, status.updatedMs),
          },
    samplers: status === undefined ? null : counts,
    sampler_states: samplerReports(parts, atMs),
    alerts: alertsKnown
      ? { firing: firing.length, pending: pending.length, firing_rules: sortedUnique(firing.map((a) => a.rule)), pending_rules: sortedUnique(pending.map((a) => a.rule)) }
      : null,
  };
}

function rank(h: HostReport): number {
  return h.state === 'ok' && (h.alerts?.firing ?? 0) > 0 ? 3 : RANK[h.state];
}

function streamReport(s: StreamSnapshot, subjectCount: number): StreamReport {
  return {
    name: s.name,
    subjects: s.subjects,
    messages: s.messages,
    bytes: s.bytes,
    subject_count: subjectCount,
    first: isoOf(s.firstMs),
    last: isoOf(s.lastMs),
    window_s: s.firstMs === undefined || s.lastMs === undefined ? null : seconds(s.lastMs - s.firstMs),
    max_age_s: s.maxAgeMs > 0 ? seconds(s.maxAgeMs) : null,
    max_bytes: s.maxBytes > 0 ? s.maxBytes : null,
    max_msgs_per_subject: s.maxMsgsPerSubject > 0 ? s.maxMsgsPerSubject : null,
    replicas: s.replicas,
    cluster:
      s.cluster === undefined
        ? null
        : {
            name: s.cluster.name ?? null,
            leader: s.cluster.leader ?? null,
            replicas: s.cluster.replicas.map((r) => ({ name: r.name, current: r.current, offline: r.offline, lag: r.lag, active_s: r.activeMs === undefined ? null : seconds(r.activeMs) })),
          },
  };
}

function consumerReport(c: ConsumerSnapshot, atMs: number): ConsumerReport {
  return {
    name: c.name,
    durable: c.durable,
    filter: c.filter ?? null,
    lag: c.pending + c.ackPending,
    pending: c.pending,
    ack_pending: c.ackPending,
    redelivered: c.redelivered,
    waiting: c.waiting,
    last_active: isoOf(c.lastActiveMs),
    last_active_age_s: ageOf(atMs, c.lastActiveMs),
  };
}

export function assessStatus(snap: BusSnapshot, o: AssessOptions): StatusReport {
  const notes: string[] = [];
  const parts = new Map<string, HostParts>();
  const partsOf = (host: string): HostParts => {
    let p = parts.get(host);
    if (p === undefined) parts.set(host, (p = { subjects: [], status: undefined, alerts: [] }));
    return p;
  };
  for (const s of snap.subjects) partsOf(s.host).subjects.push(s);
  if (isUnavailable(snap.statuses)) notes.push(snap.statuses.unavailable);
  else for (const r of snap.statuses) partsOf(r.host).status = r;
  // alert records outlive their hosts (the bucket keeps them): only hosts with frames or a status get theirs
  const alertsKnown = snap.alerts !== undefined && !isUnavailable(snap.alerts);
  if (isUnavailable(snap.alerts)) notes.push(snap.alerts.unavailable);
  else for (const a of snap.alerts ?? []) parts.get(a.host)?.alerts.push(a);

  const hosts = [...parts].map(([host, p]) => hostReport(host, p, snap.atMs, alertsKnown, o.silentAfterMs));
  hosts.sort((a, b) => rank(a) - rank(b) || (a.host < b.host ? -1 : a.host > b.host ? 1 : 0));
  const count = (state: HostState): number => hosts.filter((h) => h.state === state).length;
  const summary = {
    hosts: hosts.length,
    ok: count('ok'),
    failed: count('failed'),
    silent: count('silent'),
    stopped: count('stopped'),
    alerts_firing: hosts.reduce((n, h) => n + (h.alerts?.firing ?? 0), 0),
    alerts_pending: hosts.reduce((n, h) => n + (h.alerts?.pending ?? 0), 0),
  };

  let consumers: ConsumerReport[] = [];
  let ephemeral = 0;
  if (isUnavailable(snap.consumers)) notes.push(snap.consumers.unavailable);
  else {
    consumers = snap.consumers.filter((c) => c.durable).map((c) => consumerReport(c, snap.atMs));
    consumers.sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0));
    ephemeral = snap.consumers.length - consumers.length;
  }
  return {
    v: 1,
    at: iso(snap.atMs),
    nats: snap.url,
    hosts_selected: o.hosts,
    silent_after_s: seconds(o.silentAfterMs),
    ok: hosts.length > 0 && summary.ok === hosts.length,
    summary,
    hosts,
    stream: streamReport(snap.stream, snap.subjects.length),
    consumers,
    ephemeral_consumers: ephemeral,
    notes,
    hosts_in_stream: hosts.length === 0 && snap.streamHosts !== undefined ? { count: snap.streamHosts.count, names: [...snap.streamHosts.names] } : null,
  };
}
