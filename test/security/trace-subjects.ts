/**
 * Measures the subjects a rezolus process uses, the way nats-permissions.ts
 * lists them: a nats-server 2.9.10 with `trace: true` (every protocol line a
 * client sends) and no auth, the process run against it through a whole
 * episode, then each connection's PUB/HPUB and SUB subjects read back from
 * the trace, by connection name. Not a test (no assertions): run it with
 * `npx tsx test/security/trace-subjects.ts` when a role's code changes and
 * compare with the lists in nats-permissions.ts.
 *
 * What it runs: an admin makes the frames stream and the descriptor bucket,
 * a host publishes memory_available; phase 1 runs one `rezolus alert`
 * evaluator with nothing of alerting on the bus (it creates the events
 * stream and the state bucket), phase 2 two evaluators at once against what
 * exists (compare-and-set lost, sweeps, a capture each episode) and an
 * exporter following the state bucket, the bucket holding 20 MB of records
 * first (the server asks the watches for flow control); phase 3 deletes the
 * watches' consumers under them (each resets once two 30 s heartbeats are
 * missed: a delete and a create). Phases 1 and 2: pending, firing, the
 * incident capture (an ordered-consumer replay of REZOLUS), resolved.
 * KEEP=1 keeps the trace (its directory is printed).
 */
import { spawn } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { jetstreamManager } from '@nats-io/jetstream';
import { Kvm } from '@nats-io/kv';
import { connect } from '@nats-io/transport-node';
import { ALERT_STATE_BUCKET, type AlertEvent } from '../../src/alert/contract.js';
import { runAlert, type RunningAlert } from '../../src/alert/main.js';
import { statusBucket } from '../../src/bus/kv.js';
import { loadAlertsConfig } from '../../src/config/alerts.js';
import { loadExporterConfig } from '../../src/config/exporter.js';
import { runExporter } from '../../src/exporter/main.js';
import { silentLogger } from '../../src/log/logger.js';
import { freePort, natsAnswers } from '../../src/up/nats-server.js';
import { metricCatalog } from '../../src/samplers/catalog.js';
import { MemoryHost, MiB, prepareBus, readAlertEvents } from '../helpers/alert-bus.js';
import { NATS_SERVER_BIN } from '../helpers/nats.js';
import { until } from '../helpers/until.js';

const dir = mkdtempSync(join(tmpdir(), 'rezolus-trace-'));
const port = await freePort();
const logFile = join(dir, 'trace.log');
writeFileSync(join(dir, 'server.conf'), `listen: 127.0.0.1:${port}\njetstream { store_dir: ${JSON.stringify(join(dir, 'js'))} }\ntrace: true\nmax_traced_msg_len: 1\nlogfile: ${JSON.stringify(logFile)}\n`);
const server = spawn(NATS_SERVER_BIN, ['-c', join(dir, 'server.conf')], { stdio: 'ignore' });
// a run that fails part way leaves no server behind
process.once('exit', () => server.kill('SIGKILL'));
if (!(await until(() => natsAnswers('127.0.0.1', port), 10_000))) throw new Error('nats-server did not start');
const url = `nats://127.0.0.1:${port}`;

const marks: { phase: string; offset: number }[] = [];
const mark = (phase: string): void => void marks.push({ phase, offset: readFileSync(logFile, 'utf8').length });

const nc = await connect({ servers: url, name: 'trace-admin' });
await prepareBus(nc, 'web-1', silentLogger());
await statusBucket(nc, { ttlMs: 3_600_000, replicas: 1 });
const host = new MemoryHost(nc, 'web-1', 100);
host.start();

const rules = join(dir, 'alerts.toml');
writeFileSync(rules, [
  '[general]', 'every = "250ms"',
  '[capture]', `dir = ${JSON.stringify(join(dir, 'incidents'))}`, 'every = "0s"',
  '[[rule]]', 'name = "memory_low"', 'metric = "memory_available"', 'reduce = "last"', 'window = "1s"',
  'op = "<"', 'threshold = "100MiB"', 'for = "500ms"', 'keep_firing_for = "0s"', 'capture = { before = "2s", after = "500ms" }',
].join('\n'));
const config = loadAlertsConfig(rules, metricCatalog(), { natsUrl: url });

async function episode(n: number): Promise<void> {
  const count = async (what: (e: AlertEvent) => boolean): Promise<number> => (await readAlertEvents(nc)).filter(what).length;
  host.value = 50 * MiB;
  if (!(await until(async () => (await count((e) => e.kind === 'capture')) >= n, 30_000))) throw new Error('no capture');
  host.value = 1024 * MiB;
  if (!(await until(async () => (await count((e) => e.kind === 'transition' && e.state === 'resolved')) >= n, 30_000))) throw new Error('no resolve');
}

mark('phase 1: one evaluator, nothing of alerting on the bus');
const first = await runAlert(config, silentLogger());
await episode(1);
await first.stop();

mark('phase 2: two evaluators and an exporter, the stream and the bucket there (and 20 MB of records: flow control)');
// records of a rule no evaluator has: the watches read them all at start, enough bytes for the server to ask for flow control
const kv = await new Kvm(nc).open(ALERT_STATE_BUCKET);
const filler = 'x'.repeat(4000);
await Promise.all(Array.from({ length: 5000 }, (_, i) => kv.put(`filler-${i}.other._`, JSON.stringify({ v: 1, rule: 'other', host: `filler-${i}`, series: {}, state: 'resolved', activeAt: 0, summary: filler }))));
const exporter = await runExporter(loadExporterConfig(undefined, { natsUrl: url, listen: { host: '127.0.0.1', port: 0 }, intervalMs: 500 }), silentLogger());
const two: RunningAlert[] = await Promise.all([runAlert(config, silentLogger()), runAlert(config, silentLogger())]);
await until(() => exporter.alerts.following, 10_000);
await episode(2);
mark('phase 3: the watchers\' consumers deleted under them: each ordered consumer resets once two 30 s heartbeats are missed');
const jsm = await jetstreamManager(nc);
const watchers = async (): Promise<string[]> => {
  const names: string[] = [];
  for await (const c of jsm.consumers.list(`KV_${ALERT_STATE_BUCKET}`)) if (c.push_bound === true) names.push(c.name);
  return names;
};
const before = await watchers();
for (const name of before) await jsm.consumers.delete(`KV_${ALERT_STATE_BUCKET}`, name);
if (!(await until(async () => (await watchers()).length >= before.length, 180_000))) throw new Error('the watches did not come back');
await Promise.all(two.map((a) => a.stop()));
await exporter.stop();
mark('end');
host.stop();
await nc.close();
server.kill('SIGTERM');
await new Promise((r) => server.once('exit', r));

/** `_INBOX.<nuid>...`, acks, flow control and consumer names: one shape each. */
function shape(subject: string): string {
  return subject
    .replace(/^_INBOX\.[A-Za-z0-9]+(\..*)?$/, '_INBOX.>')
    .replace(/^\$JS\.ACK\..*/, '$JS.ACK.<stream>.>')
    .replace(/^(\$JS\.FC\.[^.]+)\..*/, '$1.>')
    .replace(/(\$JS\.API\.CONSUMER\.(?:CREATE|INFO|DELETE|MSG\.NEXT)\.[^.]+)\.[A-Za-z0-9_]{16,}/, '$1.<name>');
}

const text = readFileSync(logFile, 'utf8');
const names = new Map<string, string>();
for (const m of text.matchAll(/cid:(\d+) - <<- \[CONNECT (\{.*\})\]/g)) names.set(m[1] as string, (JSON.parse(m[2] as string) as { name?: string }).name ?? '?');
for (let i = 0; i + 1 < marks.length; i++) {
  const { phase, offset } = marks[i] as { phase: string; offset: number };
  const seen = new Map<string, Set<string>>();
  for (const m of text.slice(offset, marks[i + 1]?.offset).matchAll(/cid:(\d+) - "[^"]*" - <<- \[(H?PUB|SUB) (\S+)/g)) {
    const who = (names.get(m[1] as string) ?? '?').replace(/^rezolus-alert .*/, 'rezolus-alert');
    if (who.startsWith('trace-')) continue;
    const key = `${who} ${m[2] === 'SUB' ? 'SUB' : 'PUB'}`;
    const set = seen.get(key) ?? new Set<string>();
    set.add(shape(m[3] as string));
    seen.set(key, set);
  }
  process.stdout.write(`\n== ${phase}\n`);
  for (const [key, subjects] of [...seen].sort()) process.stdout.write(`${key}\n${[...subjects].sort().map((s) => `  ${s}`).join('\n')}\n`);
}
if (process.env.KEEP === undefined) rmSync(dir, { recursive: true, force: true }); else process.stdout.write(`kept ${dir}\n`);
