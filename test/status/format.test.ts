/** `rezolus status` judgement and formatting on fixture snapshots: no NATS. */
import test from 'ava';
import { assessStatus } from '../../src/status/assess.js';
import { formatStatus, summaryLine, table } from '../../src/status/format.js';
import { parseAgentStatus, type AgentStatusRecord } from '../../src/status/record.js';
import type { BusSnapshot, StreamSnapshot, SubjectSnapshot } from '../../src/status/snapshot.js';
import { formatAge } from '../../src/status/units.js';
import { HELP } from '../../src/cli/help.js';

const AT = Date.parse('2026-11-22T10:15:00Z');
const SILENT = { silentAfterMs: 30_000, hosts: '*' };

const STREAM: StreamSnapshot = {
  name: 'REZOLUS',
  subjects: ['rezolus.metrics.>'],
  messages: 123_456,
  bytes: 50 * 1024 * 1024,
  firstMs: AT - 15 * 60_000 + 2000,
  lastMs: AT - 100,
  maxAgeMs: 15 * 60_000,
  maxBytes: 1024 ** 3,
  maxMsgsPerSubject: 100_000,
  replicas: 1,
  cluster: undefined,
};

function status(host: string, samplers: AgentStatusRecord['samplers'], extra: Partial<AgentStatusRecord> = {}): AgentStatusRecord {
  return { host, state: 'running', instance: '5100000a', version: '0.1.0', startedMs: AT - 3_600_000, updatedMs: AT - 4000, samplers, ...extra };
}

const subjects = (host: string, ageMs: number, messages = 900): SubjectSnapshot[] => [
  { host, sampler: 'cpu_usage', messages, lastMs: AT - ageMs },
  { host, sampler: 'memory_meminfo', messages, lastMs: AT - ageMs - 200 },
];

const OK_SAMPLERS = [
  { name: 'cpu_usage', state: 'active', intervalMs: 1000 },
  { name: 'memory_meminfo', state: 'active', intervalMs: 1000 },
  { name: 'cpu_perf', state: 'unsupported', reason: 'no hardware PMU' },
];

/** web-1 healthy with a firing alert, web-2 with a failed sampler, db-1 silent 2m5s, db-2 stopped, web-3 healthy, no status for web-4. */
function fleet(): BusSnapshot {
  return {
    url: 'nats://10.0.0.1:4222',
    atMs: AT,
    stream: STREAM,
    subjects: [...subjects('web-1', 400), ...subjects('web-2', 300), ...subjects('db-1', 125_000), ...subjects('db-2', 60_000), ...subjects('web-3', 500), ...subjects('web-4', 700, 10)],
    statuses: [
      status('web-1', OK_SAMPLERS),
      status('web-2', [
        { name: 'cpu_usage', state: 'active' },
        { name: 'memory_meminfo', state: 'failed', error: "Error: ENOENT: no such file or directory, open '/proc/meminfo'" },
        { name: 'scheduler_runqueue', state: 'degraded', reason: 'without\nthe latency program' },
      ]),
      status('db-1', OK_SAMPLERS),
      status('db-2', OK_SAMPLERS, { state: 'stopped', updatedMs: AT - 61_000 }),
      status('web-3', OK_SAMPLERS),
    ],
    alerts: [
      { host: 'web-1', rule: 'memory_low', state: 'firing' },
      { host: 'web-1', rule: 'cpu_throttled', state: 'pending' },
      { host: 'web-3', rule: 'memory_low', state: 'resolved' },
      // a host gone for good: its record stays in the bucket but it gets no row
      { host: 'gone-1', rule: 'host_silent', state: 'firing' },
    ],
    consumers: [
      { name: 'rec-web-1', durable: true, filter: 'rezolus.metrics.web-1.>', pending: 1200, ackPending: 34, redelivered: 2, waiting: 1, lastActiveMs: AT - 3000 },
      { name: 'abc123', durable: false, filter: 'rezolus.metrics.>', pending: 0, ackPending: 0, redelivered: 0, waiting: 0, lastActiveMs: undefined },
    ],
  };
}

test('hosts: problems first (silent, stopped, failed, firing alerts), each judged and counted', (t) => {
  const r = assessStatus(fleet(), SILENT);
  t.deepEqual(r.hosts.map((h) => [h.host, h.state, h.problem]), [
    ['db-1', 'silent', 'silent 2m5s'],
    ['db-2', 'stopped', 'stopped 1m1s ago'],
    ['web-2', 'failed', '1 sampler failed'],
    ['web-1', 'ok', null],
    ['web-3', 'ok', null],
    ['web-4', 'ok', null],
  ]);
  t.deepEqual(r.summary, { hosts: 6, ok: 3, failed: 1, silent: 1, stopped: 1, alerts_firing: 1, alerts_pending: 1 });
  t.false(r.ok);
  const web1 = r.hosts.find((h) => h.host === 'web-1');
  t.deepEqual(web1?.samplers, { ok: 2, degraded: 0, failed: 0, off: 1, other: 0 });
  t.deepEqual(web1?.alerts, { firing: 1, pending: 1, firing_rules: ['memory_low'], pending_rules: ['cpu_throttled'] });
  t.is(web1?.frames, 1800);
  t.is(web1?.last_frame_age_s, 0.4);
  t.is(web1?.last_frame, '2026-11-22T10:14:59.600Z');
  t.deepEqual(web1?.agent, { state: 'running', version: '0.1.0', instance: '5100000a', started: '2026-11-22T09:15:00.000Z', updated: '2026-11-22T10:14:56.000Z', updated_age_s: 4 });
  const web4 = r.hosts.find((h) => h.host === 'web-4');
  t.is(web4?.agent, null);
  t.is(web4?.samplers, null);
  t.deepEqual(web4?.sampler_states.map((s) => [s.name, s.state, s.last_frame_age_s]), [['cpu_usage', null, 0.7], ['memory_meminfo', null, 0.9]]);
  const meminfo = r.hosts.find((h) => h.host === 'web-2')?.sampler_states.find((s) => s.name === 'memory_meminfo');
  t.deepEqual(meminfo, { name: 'memory_meminfo', state: 'failed', reason: null, error: "Error: ENOENT: no such file or directory, open '/proc/meminfo'", interval_ms: null, last_frame_age_s: 0.5 });
});

test('every host fresh and no sampler failed is ok; firing alerts alone do not make it a problem', (t) => {
  const whole = fleet();
  const web = (host: string): boolean => host === 'web-1' || host === 'web-3';
  // gather makes the selection; judged alone, web-1 (an alert firing) and web-3 are ok
  const only: BusSnapshot = { ...whole, subjects: whole.subjects.filter((s) => web(s.host)), statuses: (whole.statuses as AgentStatusRecord[]).filter((s) => web(s.host)) };
  const r = assessStatus(only, { silentAfterMs: 30_000, hosts: 'web-1,web-3' });
  t.true(r.ok);
  t.is(r.hosts_selected, 'web-1,web-3');
  t.is(r.summary.alerts_firing, 1);
  t.deepEqual(r.hosts.map((h) => h.host), ['web-1', 'web-3'], 'the host with a firing alert first');
});

test('silent-after decides silence; a host with a status record and no frames is silent', (t) => {
  const lenient = assessStatus(fleet(), { silentAfterMs: 10 * 60_000, hosts: '*' });
  t.is(lenient.hosts.find((h) => h.host === 'db-1')?.state, 'ok');
  const noFrames: BusSnapshot = { ...fleet(), subjects: subjects('web-1', 400) };
  const r = assessStatus(noFrames, SILENT);
  const web3 = r.hosts.find((h) => h.host === 'web-3');
  t.is(web3?.state, 'silent');
  t.is(web3?.problem, 'no frames in the window');
  t.is(web3?.last_frame_age_s, null);
  t.is(web3?.frames, 0);
});

test('consumers: durable ones listed with lag = pending + ack pending, ephemeral ones counted', (t) => {
  const r = assessStatus(fleet(), SILENT);
  t.deepEqual(r.consumers, [
    { name: 'rec-web-1', durable: true, filter: 'rezolus.metrics.web-1.>', lag: 1234, pending: 1200, ack_pending: 34, redelivered: 2, waiting: 1, last_active: '2026-11-22T10:14:57.000Z', last_active_age_s: 3 },
  ]);
  t.is(r.ephemeral_consumers, 1);
});

test('stream: window, limits and replicas', (t) => {
  const r = assessStatus(fleet(), SILENT);
  t.deepEqual(r.stream, {
    name: 'REZOLUS', subjects: ['rezolus.metrics.>'], messages: 123_456, bytes: 52_428_800, subject_count: 12,
    first: '2026-11-22T10:00:02.000Z', last: '2026-11-22T10:14:59.900Z', window_s: 897.9,
    max_age_s: 900, max_bytes: 1024 ** 3, max_msgs_per_subject: 100_000, replicas: 1, cluster: null,
  });
  const unlimited = assessStatus({ ...fleet(), stream: { ...STREAM, messages: 0, bytes: 0, firstMs: undefined, lastMs: undefined, maxAgeMs: 0, maxBytes: -1, maxMsgsPerSubject: -1 } }, SILENT);
  t.like(unlimited.stream, { first: null, last: null, window_s: null, max_age_s: null, max_bytes: null, max_msgs_per_subject: null });
});

test('the table: summary, rows in problem order, reasons below, stream, consumers', (t) => {
  const text = formatStatus(assessStatus(fleet(), SILENT));
  const lines = text.split('\n');
  t.is(lines[0], 'rezolus status of nats://10.0.0.1:4222 at 2026-11-22T10:15:00Z (silent after 30s)');
  t.is(lines[1], '6 hosts: 3 ok, 1 silent, 1 stopped, 1 with a failed sampler; 1 alert firing, 1 pending');
  const header = lines.indexOf('HOST   STATE             LAST FRAME  MESSAGES              OK  FAILED  OFF  ALERTS               AGENT');
  t.not(header, -1, text);
  t.deepEqual(lines.slice(header + 1, header + 7), [
    'db-1   silent 2m5s         2m5s ago     1,800               2       0    1  none                 0.1.0 5100000a',
    'db-2   stopped 1m1s ago      1m ago     1,800               2       0    1  none                 0.1.0 5100000a',
    'web-2  1 sampler failed    0.3s ago     1,800  2 (1 degraded)       1    0  none                 0.1.0 5100000a',
    'web-1  ok                  0.4s ago     1,800               2       0    1  1 firing, 1 pending  0.1.0 5100000a',
    'web-3  ok                  0.5s ago     1,800               2       0    1  none                 0.1.0 5100000a',
    'web-4  ok                  0.7s ago        20               -       -    -  none                 no status record',
  ]);
  t.true(text.includes("\nFailed samplers:\n  web-2  memory_meminfo: Error: ENOENT: no such file or directory, open '/proc/meminfo'\n"), text);
  t.true(text.includes('\nDegraded samplers:\n  web-2  scheduler_runqueue: without the latency program\n'), text);
  t.true(text.includes('\nFiring alerts:\n  web-1  memory_low\n'), text);
  t.true(text.includes('\nStream REZOLUS (rezolus.metrics.>)\n  window    14m held, 2026-11-22T10:00:02Z to 2026-11-22T10:14:59Z (max_age 15m)\n'), text);
  t.true(text.includes('  size      123,456 messages, 50.0 MiB of max_bytes 1.00 GiB (4.9 %); max_msgs_per_subject 100,000\n'), text);
  t.true(text.includes('  subjects  12 frame subjects of 6 hosts\n  replicas  1\n'), text);
  t.true(text.includes('\nrec-web-1  rezolus.metrics.web-1.>  1,234    1,200           34            2     3.0s ago\n'), text);
  t.true(text.includes('\n1 ephemeral consumer (replays, viewers, watches) not listed.\n'), text);
  t.false(text.includes('gone-1'), 'an alert record alone makes no host');
  t.false(lines.some((l) => l.endsWith(' ')), 'no trailing spaces');
});

test('a degraded sampler is counted apart from the fully working ones: samplers.degraded in JSON, "(N degraded)" in the OK column', (t) => {
  const r = assessStatus(fleet(), SILENT);
  // web-2: cpu_usage active, memory_meminfo failed, scheduler_runqueue degraded
  const web2 = r.hosts.find((h) => h.host === 'web-2');
  t.deepEqual(web2?.samplers, { ok: 2, degraded: 1, failed: 1, off: 0, other: 0 }, 'ok still counts every sampler that publishes; degraded says how many of them are degraded');
  t.deepEqual(r.hosts.find((h) => h.host === 'web-1')?.samplers, { ok: 2, degraded: 0, failed: 0, off: 1, other: 0 });
  const lines = formatStatus(r).split('\n');
  const header = lines.findIndex((l) => l.startsWith('HOST '));
  t.regex(lines[header] ?? '', /\bMESSAGES {14}OK {2}FAILED\b/, 'the OK column is as wide as its widest cell');
  t.regex(lines.find((l) => l.startsWith('web-2 ')) ?? '', /\s2 \(1 degraded\)\s+1\s+0\s/);
  t.regex(lines.find((l) => l.startsWith('web-1 ')) ?? '', /\s2\s+0\s+1\s/, 'no mark without a degraded sampler');
  const noStatus = lines.find((l) => l.startsWith('web-4 ')) ?? '';
  t.regex(noStatus, /\s-\s+-\s+-\s/);
});

test('ages: tenths below 10 s, two units below 10 minutes, then the larger units', (t) => {
  t.is(formatAge(60_000), '1m');
  t.is(formatAge(60_200), '1m');
  t.is(formatAge(0), '0.0s');
  t.is(formatAge(9_990), '9.9s');
  t.is(formatAge(10_000), '10s');
  t.is(formatAge(125_000), '2m5s');
  t.is(formatAge(14 * 60_000 + 59_000), '14m');
  t.is(formatAge(3_900_000), '1h5m');
  t.is(formatAge(2 * 86_400_000 + 7_200_000), '2d2h');
  t.is(formatAge(-5), '0.0s');
});

test('cluster replicas, notes of parts not read, and no hosts', (t) => {
  const snap: BusSnapshot = {
    ...fleet(),
    subjects: [],
    statuses: { unavailable: 'status bucket rezolus_status: this NATS user may not (Permissions Violation)' },
    alerts: undefined,
    consumers: [],
    stream: { ...STREAM, replicas: 3, cluster: { name: 'c1', leader: 'n1', replicas: [{ name: 'n2', current: true, offline: false, lag: 0, activeMs: 100 }, { name: 'n3', current: false, offline: false, lag: 1234, activeMs: 900 }] } },
  };
  const r = assessStatus(snap, { silentAfterMs: 30_000, hosts: 'web-9' });
  t.false(r.ok, 'no host found is not ok');
  t.deepEqual(r.notes, ['status bucket rezolus_status: this NATS user may not (Permissions Violation)']);
  t.deepEqual(r.stream.cluster?.replicas[1], { name: 'n3', current: false, offline: false, lag: 1234, active_s: 0.9 });
  t.is(summaryLine(r), 'no host matches "web-9" (none has frames in REZOLUS or a status record)', 'the stream\'s hosts could not be read: not named');
  t.is(r.hosts_in_stream, null);
  const text = formatStatus(r);
  t.true(text.includes('  replicas  3 (cluster c1, leader n1, n2 current, n3 behind by 1,234)\n'), text);
  t.true(text.includes('\nNo durable consumers of REZOLUS.\n'), text);
  t.true(text.endsWith('\nNot read:\n  status bucket rezolus_status: this NATS user may not (Permissions Violation)\n'), text);
  t.false(text.includes('HOST '), 'no table without hosts');
});

test('no host matches --hosts: the summary says so and names the hosts the stream holds; the subjects line names the selection', (t) => {
  const none: BusSnapshot = { ...fleet(), subjects: [], statuses: [], alerts: undefined, streamHosts: { count: 3, names: ['db-1', 'web-1', 'web-2'] } };
  const r = assessStatus(none, { silentAfterMs: 30_000, hosts: 'nomatch' });
  t.false(r.ok);
  t.deepEqual(r.hosts_in_stream, { count: 3, names: ['db-1', 'web-1', 'web-2'] });
  t.is(summaryLine(r), 'no host matches "nomatch" (none has frames in REZOLUS or a status record); the stream has hosts db-1, web-1, web-2');
  const text = formatStatus(r);
  t.true(text.includes('\n  subjects  0 frame subjects of 0 hosts matching "nomatch"\n'), text);
  // many hosts: the first 20 (gather keeps no more), then how many more
  const names = Array.from({ length: 20 }, (_, i) => `h${String(i).padStart(2, '0')}`);
  const many = assessStatus({ ...none, streamHosts: { count: 57, names } }, { silentAfterMs: 30_000, hosts: 'web-*' });
  t.is(summaryLine(many), `no host matches "web-*" (none has frames in REZOLUS or a status record); the stream has hosts ${names.join(', ')} and 37 more`);
  const empty = assessStatus({ ...none, streamHosts: { count: 0, names: [] } }, { silentAfterMs: 30_000, hosts: 'web-1' });
  t.is(summaryLine(empty), 'no host matches "web-1" (none has frames in REZOLUS or a status record); the stream has no hosts');
  // every host selected: the line as it was
  const all = assessStatus({ ...none, streamHosts: undefined }, SILENT);
  t.is(summaryLine(all), 'no host has frames in REZOLUS or a status record');
  t.true(formatStatus(all).includes('\n  subjects  0 frame subjects of 0 hosts\n'));
  // a host found: no list
  t.is(assessStatus(fleet(), SILENT).hosts_in_stream, null);
});

test('parseAgentStatus reads the agent record and tolerates what it does not know', (t) => {
  const record = parseAgentStatus(
    'web-1',
    JSON.stringify({
      host: 'web-1', state: 'running', instance: '5100000a', version: '0.1.0', started: '2026-11-22T09:15:00Z', updated: '2026-11-22T10:14:56Z',
      samplers: [
        { name: 'cpu_usage', state: 'active', interval_ms: 1000, refreshes: 5, errors: 0, skipped: 0, seq: 5, last_frame: '2026-11-22T10:14:55.5Z' },
        { name: 'cpu_perf', state: 'failed', error: 'EACCES', interval_ms: 0, last_frame: 'not a time' },
        { name: 'future', state: 'paused', reason: 'a state of a newer agent' },
        { state: 'active' },
        'junk',
      ],
      publisher: { published: 5 },
    }),
  );
  t.deepEqual(record, {
    host: 'web-1', state: 'running', instance: '5100000a', version: '0.1.0', startedMs: Date.parse('2026-11-22T09:15:00Z'), updatedMs: Date.parse('2026-11-22T10:14:56Z'),
    samplers: [
      { name: 'cpu_usage', state: 'active', intervalMs: 1000, lastFrameMs: Date.parse('2026-11-22T10:14:55.5Z') },
      { name: 'cpu_perf', state: 'failed', error: 'EACCES' },
      { name: 'future', state: 'paused', reason: 'a state of a newer agent' },
    ],
  });
  t.is(parseAgentStatus('x', 'not json'), undefined);
  t.is(parseAgentStatus('x', '[1]'), undefined);
  t.is(parseAgentStatus('x', '{"host":"x"}'), undefined, 'no state: not an agent status');
  t.deepEqual(parseAgentStatus('x', new TextEncoder().encode('{"state":"stopped","updated":"yesterday"}')), { host: 'x', state: 'stopped', samplers: [] });
  const r = assessStatus({ ...fleet(), subjects: subjects('x', 100), statuses: [{ host: 'x', state: 'running', samplers: [{ name: 'future', state: 'paused' }] }] }, SILENT);
  t.deepEqual(r.hosts.find((h) => h.host === 'x')?.samplers, { ok: 0, degraded: 0, failed: 0, off: 0, other: 1 });
});

test('table pads columns, right-aligns numbers and leaves no trailing space', (t) => {
  t.deepEqual(table(['A', 'NUM', 'B'], [['long', '1', ''], ['x', '1,000', 'y']], ['l', 'r', 'l']), ['A       NUM  B', 'long      1', 'x     1,000  y']);
});

test('rezolus --help lists the mode, and rezolus status --help names every field --json writes', (t) => {
  t.regex(HELP.main, /\n {2}status {5}the fleet at a glance/);
  const r = assessStatus(fleet(), SILENT);
  const keys = new Set<string>();
  const walk = (v: unknown): void => {
    if (Array.isArray(v)) for (const x of v) walk(x);
    else if (typeof v === 'object' && v !== null) {
      for (const [k, x] of Object.entries(v)) {
        keys.add(k);
        walk(x);
      }
    }
  };
  // every optional part present once
  walk({ ...r, stream: assessStatus({ ...fleet(), stream: { ...STREAM, cluster: { name: 'c', leader: 'n1', replicas: [{ name: 'n2', current: true, offline: false, lag: 0, activeMs: 1 }] } } }, SILENT).stream });
  const fields = HELP.status.slice(HELP.status.indexOf('--json fields'));
  const missing = [...keys].filter((k) => !new RegExp(`\\b${k}\\b`).test(fields));
  t.deepEqual(missing, [], 'fields of the report the help does not name');
  t.true(keys.size > 50, `${keys.size} keys walked`);
});

test('a host whose agent bundles: its publishing samplers get the newest bundle\'s age unless the record says one was behind, the others none, and _bundle is no sampler', (t) => {
  const snap: BusSnapshot = {
    ...fleet(),
    subjects: [
      { host: 'b-1', sampler: '_bundle', messages: 900, lastMs: AT - 600 },
      // a frame too large for a bundle went alone, later than the last bundle
      { host: 'b-1', sampler: 'cgroup_resources', messages: 3, lastMs: AT - 100 },
    ],
    statuses: [
      status('b-1', [
        { name: 'cpu_usage', state: 'active' },
        { name: 'scheduler_runqueue', state: 'degraded', reason: 'no latency program' },
        { name: 'memory_meminfo', state: 'failed', error: 'ENOENT' },
        { name: 'cgroup_resources', state: 'active' },
        { name: 'cpu_perf', state: 'unsupported', reason: 'no PMU' },
        // its refresh hangs: still active, its last frame already 5 min old when the record was written 4 s ago
        { name: 'network_traffic', state: 'active', intervalMs: 1000, lastFrameMs: AT - 300_000 },
        // on time when the record was written (within two intervals), then the bundles say more
        { name: 'cpu_perf_like', state: 'active', intervalMs: 10_000, lastFrameMs: AT - 4000 - 15_000 },
      ]),
    ],
    alerts: [],
    consumers: [],
  };
  const host = assessStatus(snap, SILENT).hosts.find((h) => h.host === 'b-1');
  t.like(host, { state: 'failed', last_frame_age_s: 0.1, frames: 903 });
  const ages = Object.fromEntries((host?.sampler_states ?? []).map((s) => [s.name, s.last_frame_age_s]));
  t.deepEqual(ages, { cgroup_resources: 0.1, cpu_perf: null, cpu_perf_like: 0.6, cpu_usage: 0.6, memory_meminfo: null, network_traffic: 300, scheduler_runqueue: 0.6 });
});
