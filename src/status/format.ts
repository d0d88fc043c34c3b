/**
 * The report as text for a terminal: a summary line, the hosts table
 * (problems first) with the failed and degraded samplers' reasons and the
 * firing alerts below it, the stream, the durable consumers. Pure.
 */
import { formatBytes } from '../config/units.js';
import type { ConsumerReport, HostReport, StatusReport, StreamReport } from './report.js';
import { formatAge, formatCount, isoSeconds } from './units.js';

type Align = 'l' | 'r';

/** Columns padded to their widest cell, two spaces apart; no trailing spaces. */
export function table(headers: readonly string[], rows: readonly (readonly string[])[], align: readonly Align[]): string[] {
  const widths = headers.map((h, i) => Math.max(h.length, ...rows.map((r) => (r[i] ?? '').length)));
  const line = (cells: readonly string[]): string =>
    cells
      .map((c, i) => (align[i] === 'r' ? c.padStart(widths[i] ?? 0) : c.padEnd(widths[i] ?? 0)))
      .join('  ')
      .trimEnd();
  return [line(headers), ...rows.map(line)];
}

const ago = (s: number | null): string => (s === null ? '-' : `${formatAge(s * 1000)} ago`);
const plural = (n: number, one: string, many = `${one}s`): string => `${formatCount(n)} ${n === 1 ? one : many}`;
/** one line of a reason or error as the agent wrote it */
const oneLine = (text: string): string => text.replace(/\s*\n\s*/g, ' ').trim();

function alertsCell(h: HostReport): string {
  if (h.alerts === null) return '-';
  const parts = [h.alerts.firing > 0 ? `${h.alerts.firing} firing` : '', h.alerts.pending > 0 ? `${h.alerts.pending} pending` : ''].filter((p) => p !== '');
  return parts.length === 0 ? 'none' : parts.join(', ');
}

function agentCell(h: HostReport): string {
  if (h.agent === null) return 'no status record';
  return [h.agent.version, h.agent.instance].filter((p) => p !== null).join(' ') || h.agent.state;
}

/** The samplers that publish, with how many of them are degraded: `25`, `25 (1 degraded)`. */
function okCell(h: HostReport): string {
  if (h.samplers === null) return '-';
  return h.samplers.degraded > 0 ? `${h.samplers.ok} (${h.samplers.degraded} degraded)` : String(h.samplers.ok);
}

function hostRows(hosts: readonly HostReport[]): string[] {
  const rows = hosts.map((h) => {
    const n = (k: 'failed' | 'off'): string => (h.samplers === null ? '-' : String(h.samplers[k]));
    return [h.host, h.problem ?? 'ok', ago(h.last_frame_age_s), formatCount(h.frames), okCell(h), n('failed'), n('off'), alertsCell(h), agentCell(h)];
  });
  return table(['HOST', 'STATE', 'LAST FRAME', 'MESSAGES', 'OK', 'FAILED', 'OFF', 'ALERTS', 'AGENT'], rows, ['l', 'l', 'r', 'r', 'r', 'r', 'r', 'l', 'l']);
}

/** The failed and degraded samplers with their reasons, and the firing alerts, host by host. */
function details(hosts: readonly HostReport[]): string[] {
  const out: string[] = [];
  const section = (title: string, lines: string[]): void => {
    if (lines.length > 0) out.push('', title, ...lines);
  };
  const samplers = (state: string, text: (s: HostReport['sampler_states'][number]) => string | null): string[] =>
    hosts.flatMap((h) => h.sampler_states.filter((s) => s.state === state).map((s) => `  ${h.host}  ${s.name}: ${oneLine(text(s) ?? 'no reason given')}`));
  section('Failed samplers:', samplers('failed', (s) => s.error ?? s.reason));
  section('Degraded samplers:', samplers('degraded', (s) => s.reason));
  section(
    'Firing alerts:',
    hosts.filter((h) => (h.alerts?.firing ?? 0) > 0).map((h) => `  ${h.host}  ${h.alerts?.firing_rules.join(', ') ?? ''}`),
  );
  return out;
}

function replicasLine(s: StreamReport): string {
  const c = s.cluster;
  if (c === null) return String(s.replicas);
  const parts = [c.name === null ? '' : `cluster ${c.name}`, c.leader === null ? 'no leader' : `leader ${c.leader}`];
  for (const r of c.replicas) parts.push(`${r.name} ${r.offline ? 'offline' : r.current ? 'current' : `behind by ${formatCount(r.lag)}`}`);
  return `${s.replicas} (${parts.filter((p) => p !== '').join(', ')})`;
}

function streamLines(s: StreamReport, hosts: number, selected: string): string[] {
  const window =
    s.window_s === null || s.first === null || s.last === null
      ? 'empty'
      : `${formatAge(s.window_s * 1000)} held, ${isoSeconds(Date.parse(s.first))} to ${isoSeconds(Date.parse(s.last))}`;
  const maxAge = s.max_age_s === null ? 'no max_age' : `max_age ${formatAge(s.max_age_s * 1000)}`;
  const bytes =
    s.max_bytes === null
      ? `${formatBytes(s.bytes)} (no max_bytes)`
      : `${formatBytes(s.bytes)} of max_bytes ${formatBytes(s.max_bytes)} (${((100 * s.bytes) / s.max_bytes).toFixed(1)} %)`;
  const perSubject = s.max_msgs_per_subject === null ? '' : `; max_msgs_per_subject ${formatCount(s.max_msgs_per_subject)}`;
  return [
    `Stream ${s.name} (${s.subjects.join(', ')})`,
    `  window    ${window} (${maxAge})`,
    `  size      ${plural(s.messages, 'message')}, ${bytes}${perSubject}`,
    `  subjects  ${plural(s.subject_count, 'frame subject')} of ${plural(hosts, 'host')}${selected === '*' ? '' : ` matching "${selected}"`}`,
    `  replicas  ${replicasLine(s)}`,
  ];
}

function consumerLines(stream: string, consumers: readonly ConsumerReport[], ephemeral: number): string[] {
  const out = [''];
  if (consumers.length === 0) out.push(`No durable consumers of ${stream}.`);
  else {
    out.push(`Durable consumers of ${stream} (lag = pending + ack pending: messages not acked yet)`);
    const rows = consumers.map((c) => [c.name, c.filter ?? '(all)', formatCount(c.lag), formatCount(c.pending), formatCount(c.ack_pending), formatCount(c.redelivered), ago(c.last_active_age_s)]);
    out.push(...table(['NAME', 'FILTER', 'LAG', 'PENDING', 'ACK PENDING', 'REDELIVERED', 'LAST ACTIVE'], rows, ['l', 'l', 'r', 'r', 'r', 'r', 'r']));
  }
  if (ephemeral > 0) out.push(`${plural(ephemeral, 'ephemeral consumer')} (replays, viewers, watches) not listed.`);
  return out;
}

/** `the stream has hosts a, b and 3 more` (record says it the same way), or '' when they are not known. */
function streamHostsText(r: StatusReport): string {
  const h = r.hosts_in_stream;
  if (h === null) return '';
  if (h.count === 0) return '; the stream has no hosts';
  const more = h.count - h.names.length;
  return `; the stream has hosts ${h.names.join(', ')}${more > 0 ? ` and ${formatCount(more)} more` : ''}`;
}

/** `3 hosts: 1 ok, 1 silent, 1 with a failed sampler; 1 alert firing` */
export function summaryLine(r: StatusReport): string {
  const s = r.summary;
  if (s.hosts === 0) {
    if (r.hosts_selected === '*') return `no host has frames in ${r.stream.name} or a status record`;
    return `no host matches "${r.hosts_selected}" (none has frames in ${r.stream.name} or a status record)${streamHostsText(r)}`;
  }
  const states = [
    `${formatCount(s.ok)} ok`,
    s.silent > 0 ? `${formatCount(s.silent)} silent` : '',
    s.stopped > 0 ? `${formatCount(s.stopped)} stopped` : '',
    s.failed > 0 ? `${formatCount(s.failed)} with a failed sampler` : '',
  ].filter((p) => p !== '');
  const alerts = [s.alerts_firing > 0 ? `${plural(s.alerts_firing, 'alert')} firing` : '', s.alerts_pending > 0 ? `${formatCount(s.alerts_pending)} pending` : ''].filter((p) => p !== '');
  return `${plural(s.hosts, 'host')}: ${states.join(', ')}${alerts.length > 0 ? `; ${alerts.join(', ')}` : ''}`;
}

/** The whole report as text, ending with a newline. */
export function formatStatus(r: StatusReport): string {
  const lines = [`rezolus status of ${r.nats} at ${isoSeconds(Date.parse(r.at))} (silent after ${formatAge(r.silent_after_s * 1000)})`, summaryLine(r)];
  if (r.hosts.length > 0) lines.push('', ...hostRows(r.hosts), ...details(r.hosts));
  lines.push('', ...streamLines(r.stream, r.summary.hosts, r.hosts_selected), ...consumerLines(r.stream.name, r.consumers, r.ephemeral_consumers));
  if (r.notes.length > 0) lines.push('', 'Not read:', ...r.notes.map((n) => `  ${n}`));
  return `${lines.join('\n')}\n`;
}
