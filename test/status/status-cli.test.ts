/**
 * `rezolus status` end to end: a real nats-server, real agents (one
 * healthy with a firing alert, one whose memory_meminfo sampler fails, one
 * stopped cleanly), a simulated host that fell silent with a durable
 * consumer behind on its frames; the CLI run as users run it.
 */
import test from 'ava';
import { cpSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { AckPolicy, jetstream, jetstreamManager } from '@nats-io/jetstream';
import { Kvm } from '@nats-io/kv';
import { connect, type NatsConnection } from '@nats-io/transport-node';
import { alertStateBucket } from '../../src/alert/bus.js';
import { alertKey, type AlertRecord } from '../../src/alert/contract.js';
import { runAgent, type RunningAgent } from '../../src/agent/main.js';
import { STATUS_BUCKET } from '../../src/bus/subjects.js';
import { loadAgentConfig } from '../../src/config/agent.js';
import { silentLogger } from '../../src/log/logger.js';
import { SAMPLER_NAMES } from '../../src/samplers/registry.js';
import type { StatusReport } from '../../src/status/report.js';
import { NO_KERNEL, PROC, SYS } from '../helpers/fixtures.js';
import { startTestNats, type TestNats } from '../helpers/nats.js';
import { runRezolus } from '../helpers/rezolus-cli.js';
import { SimFleet } from '../helpers/sim-fleet.js';
import { until } from '../helpers/until.js';

const INTERVAL_MS = 500;
const SAMPLERS = ['cpu_usage', 'memory_meminfo'];
/** the simulated host's frames must be older than this when the CLI reads them; the agents' frames, at 500 ms, far younger */
const SILENT_AFTER_S = 8;
const TICKS = 5;
const FETCHED = 7;
const ACKED = 4;

let server: TestNats;
let nc: NatsConnection;
let dir: string;
const agents: RunningAgent[] = [];
let sim: SimFleet | undefined;

function agentConfig(host: string, procfs = PROC) {
  const config = loadAgentConfig(undefined, SAMPLER_NAMES, { host, natsUrl: server.url, intervalMs: INTERVAL_MS });
  const samplers = Object.fromEntries(SAMPLER_NAMES.map((n) => [n, { enabled: SAMPLERS.includes(n), intervalMs: INTERVAL_MS }]));
  return { ...config, procfs, sysfs: SYS, kernel: NO_KERNEL, samplers, http: undefined };
}

async function agent(host: string, procfs?: string): Promise<RunningAgent> {
  const a = await runAgent(agentConfig(host, procfs), silentLogger());
  agents.push(a);
  return a;
}

test.before(async () => {
  server = await startTestNats();
  nc = await connect({ servers: server.url });
  dir = mkdtempSync(join(tmpdir(), 'rezolus-status-'));
});

test.after.always(async () => {
  for (const a of agents) await a.stop().catch(() => undefined);
  await sim?.close();
  await nc?.close();
  await server?.dispose();
  rmSync(dir, { recursive: true, force: true });
});

/** The status record the bucket holds for `host`, parsed. */
async function statusRecord(host: string): Promise<{ state?: string; samplers?: { name: string; state: string; error?: string }[] } | undefined> {
  const entry = await (await new Kvm(nc).open(STATUS_BUCKET)).get(host);
  return entry === null || entry.value.length === 0 ? undefined : entry.json();
}

test('rezolus status: hosts ok, failed (with the reason), silent and stopped, problems first; the stream; a consumer\'s lag; --json; --hosts; exit codes', async (t) => {
  t.timeout(120_000);
  // errors that need no fleet, side by side with the set-up
  const early = Promise.all([
    runRezolus('status', '--nats', 'nats://127.0.0.1:1'),
    runRezolus('status', '--nats', server.url, '--silent-after', '5'),
  ]);

  // a host whose frames stop: 5 ticks of a simulated agent, then nothing
  const agentDefaults = loadAgentConfig(undefined, SAMPLER_NAMES, { host: 'x', natsUrl: server.url });
  sim = await SimFleet.start({ natsUrl: server.url, hosts: 1, agent: agentDefaults, samplers: SAMPLERS });
  let published = 0;
  for (let tick = 1; tick <= TICKS; tick++) published += await sim.publishTick(tick);
  const silentSince = Date.now();
  t.is(published, TICKS * sim.samplers.length);

  // a durable consumer of its frames: FETCHED delivered, ACKED of them acked
  const jsm = await jetstreamManager(nc);
  await jsm.consumers.add('REZOLUS', { durable_name: 'rec-sim', ack_policy: AckPolicy.Explicit, ack_wait: 600_000_000_000, filter_subject: 'rezolus.metrics.sim-000.>' });
  const consumer = await jetstream(nc).consumers.get('REZOLUS', 'rec-sim');
  const batch = await consumer.fetch({ max_messages: FETCHED, expires: 5000 });
  let delivered = 0;
  for await (const m of batch) {
    if (delivered < ACKED) await m.ackAck();
    if (++delivered === FETCHED) break;
  }
  t.is(delivered, FETCHED);

  // real agents: web-1 healthy, web-2 loses /proc/meminfo after its start, db-1 stops cleanly
  const proc2 = join(dir, 'proc-web-2');
  cpSync(PROC, proc2, { recursive: true });
  await agent('web-1');
  await agent('web-2', proc2);
  const db1 = await agent('db-1');
  // the real agents bundle: a tick's frames on rezolus.metrics.<host>._bundle
  const meminfoOfWeb2 = 'rezolus.metrics.web-2._bundle';
  await until(async () => ((await jsm.streams.info('REZOLUS', { subjects_filter: meminfoOfWeb2 })).state.subjects?.[meminfoOfWeb2] ?? 0) > 0, 20_000);
  rmSync(join(proc2, 'meminfo'));
  await until(async () => (await statusRecord('web-2'))?.samplers?.some((s) => s.name === 'memory_meminfo' && s.state === 'failed') === true, 20_000);
  await db1.stop();
  // the simulated host's agent was killed: its record still says running
  await (await new Kvm(nc).open(STATUS_BUCKET)).put('sim-000', JSON.stringify({
    host: 'sim-000', state: 'running', instance: '51000000', version: '0.0.9', started: new Date(silentSince - 60_000).toISOString(), updated: new Date(silentSince).toISOString(),
    samplers: SAMPLERS.map((name) => ({ name, state: 'active', interval_ms: 1000 })),
  }));
  // an alert firing for web-1
  const now = Date.now();
  const firing: AlertRecord = {
    v: 1, rule: 'memory_low', host: 'web-1', series: {}, state: 'firing', previous: 'pending', seq: 2, activeAt: now - 5000, firedAt: now - 2000,
    value: 50, threshold: 100, unit: 'bytes', severity: 'page', labels: {}, summary: 'low', evaluator: 'test', at: now - 2000, published: true,
  };
  await (await alertStateBucket(nc, 1, undefined)).put(alertKey('web-1', 'memory_low', '_'), JSON.stringify(firing));
  await new Promise((r) => setTimeout(r, Math.max(0, silentSince + SILENT_AFTER_S * 1000 + 500 - Date.now())));

  const silentAfter = `${SILENT_AFTER_S}s`;
  const [table, json, one, noStream, noMatch] = await Promise.all([
    runRezolus('status', '--nats', server.url, '--silent-after', silentAfter),
    runRezolus('status', '--nats', server.url, '--silent-after', silentAfter, '--json'),
    runRezolus('status', '--nats', server.url, '--silent-after', silentAfter, '--hosts', 'WEB-1'),
    runRezolus('status', '--nats', server.url, '--stream', 'NOPE'),
    runRezolus('status', '--nats', server.url, '--hosts', 'nomatch'),
  ]);

  // the table: problems first, the failed sampler's reason, the consumer's lag
  t.is(table.code, 1, table.stderr);
  const lines = table.stdout.split('\n');
  t.regex(lines[1] ?? '', /^4 hosts: 1 ok, 1 silent, 1 stopped, 1 with a failed sampler; 1 alert firing$/, table.stdout);
  const rows = lines.slice(lines.findIndex((l) => l.startsWith('HOST ')) + 1).slice(0, 4);
  t.deepEqual(rows.map((r) => r.split(/\s+/)[0]), ['sim-000', 'db-1', 'web-2', 'web-1'], table.stdout);
  t.regex(rows[0] ?? '', /^sim-000\s+silent [\d.smh]+\s/);
  t.regex(rows[1] ?? '', /^db-1\s+stopped [\d.smh]+ ago\s/);
  t.regex(rows[2] ?? '', /^web-2\s+1 sampler failed\s+[\d.]+s ago\s+[\d,]+\s+1\s+1\s+\d+\s+none\s+\S+ [0-9a-f]{8}$/);
  t.regex(rows[3] ?? '', /^web-1\s+ok\s+[\d.]+s ago\s+[\d,]+\s+2\s+0\s+\d+\s+1 firing\s/);
  t.regex(table.stdout, /\nFailed samplers:\n {2}web-2 {2}memory_meminfo: Error: ENOENT: no such file or directory, open '[^']*proc-web-2\/meminfo'\n/);
  const lag = published - ACKED;
  t.regex(table.stdout, new RegExp(`\\nrec-sim\\s+rezolus\\.metrics\\.sim-000\\.>\\s+${lag}\\s+${published - FETCHED}\\s+${FETCHED - ACKED}\\s+0\\s+[\\d.]+s ago\\n`), table.stdout);
  t.regex(table.stdout, /\nStream REZOLUS \(rezolus\.metrics\.>\)\n {2}window {4}\S+ held, \S+Z to \S+Z \(max_age 15m\)\n/);

  // --json: the same, machine-readable
  t.is(json.code, 1, json.stderr);
  const r = JSON.parse(json.stdout) as StatusReport;
  t.false(r.ok);
  t.deepEqual(r.hosts.map((h) => [h.host, h.state]), [['sim-000', 'silent'], ['db-1', 'stopped'], ['web-2', 'failed'], ['web-1', 'ok']]);
  t.like(r.summary, { hosts: 4, ok: 1, failed: 1, silent: 1, stopped: 1, alerts_firing: 1 });
  const simHost = r.hosts[0];
  t.true((simHost?.last_frame_age_s ?? 0) > SILENT_AFTER_S, `sim-000 last frame ${simHost?.last_frame_age_s} s ago`);
  t.is(simHost?.frames, published);
  t.deepEqual(simHost?.agent?.version, '0.0.9');
  const web2 = r.hosts.find((h) => h.host === 'web-2');
  t.deepEqual(web2?.samplers, { ok: 1, degraded: 0, failed: 1, off: SAMPLER_NAMES.length - SAMPLERS.length, other: 0 }, 'the samplers left off are disabled');
  t.regex(web2?.sampler_states.find((s) => s.name === 'memory_meminfo')?.error ?? '', /ENOENT/);
  t.is(web2?.agent?.state, 'running');
  t.regex(web2?.agent?.instance ?? '', /^[0-9a-f]{8}$/);
  const web1 = r.hosts.find((h) => h.host === 'web-1');
  t.true((web1?.last_frame_age_s ?? Number.POSITIVE_INFINITY) < SILENT_AFTER_S);
  t.deepEqual(web1?.alerts, { firing: 1, pending: 0, firing_rules: ['memory_low'], pending_rules: [] });
  t.is(r.hosts.find((h) => h.host === 'db-1')?.agent?.state, 'stopped');
  t.deepEqual(r.consumers.map((c) => [c.name, c.filter, c.lag, c.pending, c.ack_pending, c.redelivered]), [['rec-sim', 'rezolus.metrics.sim-000.>', lag, published - FETCHED, FETCHED - ACKED, 0]]);
  t.is(r.stream.name, 'REZOLUS');
  t.is(r.stream.subject_count, SAMPLERS.length + 3, 'the simulated host\'s subject per sampler, and a bundle subject for each real agent');
  t.is(r.stream.max_age_s, 900);
  t.true(r.stream.messages >= published && r.stream.bytes > 0);
  t.true(r.stream.first !== null && r.stream.last !== null && r.stream.first <= r.stream.last);
  t.deepEqual(r.notes, []);

  // --hosts: one host (names match as tokens), all well: exit 0
  t.is(one.code, 0, one.stdout + one.stderr);
  t.regex(one.stdout, /^1 host: 1 ok; 1 alert firing$/m);
  t.regex(one.stdout, /\nweb-1\s+ok\s/);
  t.false(/\n(web-2|db-1|sim-000)\s/.test(one.stdout), one.stdout);

  // --hosts that matches no host: said, with the hosts the stream does hold; exit 1
  t.is(noMatch.code, 1, noMatch.stdout + noMatch.stderr);
  t.is(noMatch.stdout.split('\n')[1], 'no host matches "nomatch" (none has frames in REZOLUS or a status record); the stream has hosts db-1, sim-000, web-1, web-2');
  t.regex(noMatch.stdout, /\n {2}subjects {2}0 frame subjects of 0 hosts matching "nomatch"\n/);

  // NATS that does not answer, a stream that is not there, bad usage: one line each
  const [unreachable, badUsage] = await early;
  t.is(unreachable.code, 1);
  t.regex(unreachable.stderr, /^rezolus status: cannot connect to NATS at nats:\/\/127\.0\.0\.1:1: .+\n$/);
  t.is(unreachable.stdout, '');
  t.is(noStream.code, 1);
  t.is(noStream.stderr, `rezolus status: no rezolus stream NOPE on ${server.url}: is an agent running?\n`);
  t.is(badUsage.code, 2);
  t.regex(badUsage.stderr, /--silent-after must be a duration of at least 1s/);
});
