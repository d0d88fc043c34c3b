/**
 * A fleet on one bus: 200 simulated hosts (test/helpers/sim-fleet.ts) and one
 * real agent on the fixture root, one exporter following every host. Every
 * host must be served with its own values, and bad frames from one host must
 * leave the others alone and be counted by reason.
 */
import test from 'ava';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { runAgent, type RunningAgent } from '../../src/agent/main.js';
import { loadAgentConfig } from '../../src/config/agent.js';
import { loadExporterConfig } from '../../src/config/exporter.js';
import { runExporter, type RunningExporter } from '../../src/exporter/main.js';
import { silentLogger } from '../../src/log/logger.js';
import { SAMPLER_NAMES } from '../../src/samplers/registry.js';
import { checkExposition } from '../helpers/exposition-check.js';
import { FIXTURE_ROOT, NO_KERNEL, PROC, SYS } from '../helpers/fixtures.js';
import { startTestNats, type TestNats } from '../helpers/nats.js';
import { until as waitUntil } from '../helpers/until.js';
import { promtoolCheck } from '../helpers/promtool.js';
import { MALFORMED_KINDS, SimFleet, simDelta, simHost, type SkipReason } from '../helpers/sim-fleet.js';

const SIM_HOSTS = 200;
const REAL_HOST = 'real-01';
const BAD_HOST = 42;
const WAIT_MS = 10_000;

// ---------------------------------------------------------------- the golden file

const GOLDEN_TEXT = readFileSync(join(FIXTURE_ROOT, '..', 'golden', 'fixture-rootfs.prom'), 'utf8');
/** The golden sample lines (host="fixture"), in order, as [series, value]. */
const GOLDEN: readonly (readonly [string, string])[] = GOLDEN_TEXT.split('\n')
  .filter((l) => l !== '' && !l.startsWith('#'))
  .map((l) => {
    const sp = l.lastIndexOf(' ');
    return [l.slice(0, sp), l.slice(sp + 1)] as const;
  });
const GOLDEN_VALUE = new Map(GOLDEN);
/** Families of the golden file: other families (rates, the exporter's own, process_*) are not compared. */
const GOLDEN_FAMILIES = new Set(GOLDEN.map(([s]) => familyOf(s)));
const GOLDEN_HEADERS = GOLDEN_TEXT.split('\n').filter((l) => l.startsWith('# '));

function familyOf(series: string): string {
  const b = series.indexOf('{');
  return b === -1 ? series : series.slice(0, b);
}

function onHost(goldenSeries: string, host: string): string {
  if (!goldenSeries.includes('{host="fixture"')) throw new Error(`golden series without host="fixture": ${goldenSeries}`);
  return goldenSeries.replace('{host="fixture"', `{host="${host}"`);
}

/**
 * Series checked exactly on every simulated host: the golden value (fixture
 * in base units) plus simDelta in the raw unit, which the exporter divides
 * by 10^digits: ns counters are served in seconds (9), µs in seconds (6),
 * bytes and counts as they are (0).
 */
const CHOSEN: readonly { readonly series: string; readonly digits: number }[] = [
  { series: 'cpu_usage_seconds_total{host="fixture",state="user",id="1"}', digits: 9 },
  { series: 'cpu_usage_all_seconds_total{host="fixture",state="idle"}', digits: 9 },
  { series: 'blockio_device_time_seconds_total{host="fixture",device="vda",op="read"}', digits: 9 },
  { series: 'scheduler_pressure_seconds_total{host="fixture",resource="io",kind="some"}', digits: 6 },
  { series: 'network_device_bytes_total{host="fixture",device="eth0",direction="receive"}', digits: 0 },
  { series: 'scheduler_context_switches_total{host="fixture"}', digits: 0 },
  { series: 'memory_total_bytes{host="fixture"}', digits: 0 },
  { series: 'cpu_cores{host="fixture"}', digits: 0 },
];

/** `decimal` (a plain decimal like "24.51") + delta × 10^-digits, exactly, written like the exporter (no trailing zeros). */
function shifted(decimal: string, digits: number, delta: number): string {
  const m = /^(-?)(\d+)(?:\.(\d+))?$/.exec(decimal);
  if (m === null) throw new Error(`not a plain decimal: ${decimal}`);
  const frac = m[3] ?? '';
  if (frac.length > digits) throw new Error(`${decimal} has more than ${digits} decimals`);
  const scale = 10n ** BigInt(digits);
  const raw = (m[1] === '-' ? -1n : 1n) * BigInt(`${m[2] ?? ''}${frac.padEnd(digits, '0')}`) + BigInt(delta);
  if (raw < 0n) throw new Error('negative result');
  const int = raw / scale;
  const rest = (raw % scale).toString().padStart(digits, '0').replace(/0+$/, '');
  return rest === '' ? int.toString() : `${int}.${rest}`;
}

// ---------------------------------------------------------------- scraping

let server: TestNats;
let agent: RunningAgent;
let exporter: RunningExporter;
/** a second exporter following a glob selection of the same fleet */
let globExporter: RunningExporter;
/** the exporter interval; view() is called with it, as the /metrics handler does */
let intervalNs = 1_000_000_000n;
let fleet: SimFleet;
let setupMs = 0;

interface Scrape {
  readonly text: string;
  /** series (`name{labels}`) -> value text */
  readonly samples: Map<string, string>;
}

async function scrape(): Promise<Scrape> {
  const r = await exporter.app.inject({ method: 'GET', url: '/metrics' });
  if (r.statusCode !== 200) throw new Error(`GET /metrics answered ${r.statusCode}`);
  const samples = new Map<string, string>();
  for (const line of r.body.split('\n')) {
    if (line === '' || line.startsWith('#')) continue;
    const sp = line.lastIndexOf(' ');
    samples.set(line.slice(0, sp), line.slice(sp + 1));
  }
  return { text: r.body, samples };
}

function skipCount(s: Scrape, reason: string): number {
  const v = s.samples.get(`rezolus_exporter_frames_skipped_total{reason="${reason}"}`);
  if (v === undefined) throw new Error(`no skip counter for reason ${reason}`);
  return Number(v);
}

const REASONS = ['garbage', 'unknown_descriptor', 'invalid', 'wrong_subject', 'out_of_order', 'contested'] as const;
function skipCounts(s: Scrape): Record<(typeof REASONS)[number], number> {
  return Object.fromEntries(REASONS.map((r) => [r, skipCount(s, r)])) as Record<(typeof REASONS)[number], number>;
}

const until = (ok: () => boolean | Promise<boolean>, ms = WAIT_MS): Promise<boolean> => waitUntil(ok, ms);

/**
 * True when the exporter's latest frame of every sampler of the given sim
 * hosts is tick `tick` of that host's run (the simulator's seq is the tick).
 */
function atTick(tick: number, indexes: readonly number[]): boolean {
  const latest = new Map<string, { seq: number; instance: number }>();
  for (const e of exporter.state.view(intervalNs)) latest.set(`${e.latest.host}/${e.latest.sampler}`, e.latest);
  return indexes.every((i) =>
    fleet.samplers.every((s) => {
      const f = latest.get(`${simHost(i)}/${s.name}`);
      return f !== undefined && f.seq === tick && f.instance === fleet.instanceOf(i);
    }),
  );
}

const ALL = Array.from({ length: SIM_HOSTS }, (_, i) => i);

/**
 * Problems with sim host `index` in a scrape, expecting tick `tick`: the
 * chosen series exactly; every other golden series present (and no extra
 * one in those families), moved from the fixture by simDelta in one of the
 * raw units (so a value of another host or tick is caught).
 */
function hostProblems(s: Scrape, index: number, tick: number): string[] {
  const host = simHost(index);
  const delta = simDelta(index, tick);
  const problems: string[] = [];
  for (const { series, digits } of CHOSEN) {
    const want = shifted(GOLDEN_VALUE.get(series) as string, digits, delta);
    const got = s.samples.get(onHost(series, host));
    if (got !== want) problems.push(`${onHost(series, host)} is ${String(got)}, want ${want} (tick ${tick})`);
  }
  for (const [series, golden] of GOLDEN) {
    const key = onHost(series, host);
    const got = s.samples.get(key);
    if (got === undefined) {
      problems.push(`${key} missing`);
      continue;
    }
    const diff = Number(got) - Number(golden);
    const tolerance = 1e-13 * Math.max(1, Math.abs(Number(got)));
    if (![1, 1e-3, 1e-6, 1e-9].some((scale) => Math.abs(diff - delta * scale) <= tolerance)) {
      problems.push(`${key} is ${got}: not the fixture's ${golden} moved by ${delta} raw units (tick ${tick})`);
    }
  }
  return problems;
}

/** Series in the golden families, per host label. */
function seriesByHost(s: Scrape): Map<string, string[]> {
  const out = new Map<string, string[]>();
  for (const key of s.samples.keys()) {
    if (!GOLDEN_FAMILIES.has(familyOf(key))) continue;
    const m = /\{host="([^"]*)"/.exec(key);
    const host = m?.[1] ?? '(no host label)';
    let list = out.get(host);
    if (list === undefined) out.set(host, (list = []));
    list.push(key);
  }
  return out;
}

// ---------------------------------------------------------------- setup

test.before(async () => {
  const t0 = Date.now();
  server = await startTestNats();
  const base = loadAgentConfig(undefined, SAMPLER_NAMES, { host: REAL_HOST, natsUrl: server.url });
  // rezolus_self measures this process, which is not deterministic
  const samplers = { ...base.samplers, rezolus_self: { enabled: false, intervalMs: 1000 } };
  agent = await runAgent({ ...base, procfs: PROC, sysfs: SYS, kernel: NO_KERNEL, samplers }, silentLogger());
  const config = loadExporterConfig(undefined, { natsUrl: server.url, listen: { host: '127.0.0.1', port: 0 }, hosts: '*' });
  intervalNs = BigInt(config.intervalMs) * 1_000_000n;
  exporter = await runExporter(config, silentLogger());
  globExporter = await runExporter({ ...config, hosts: 'sim-04*, real-*' }, silentLogger());
  // The simulator provisions the stream and bucket with the agent's settings, as a second agent would.
  fleet = await SimFleet.start({ natsUrl: server.url, hosts: SIM_HOSTS, agent: base });
  await exporter.following;
  await globExporter.following;
  // Frames from the real agent prove the exporter's subscription is live before the simulator's core publishes.
  const active = agent.agent.status().filter((s) => s.status.state === 'active').length;
  const live = await until(async () => {
    if (exporter.state.size >= active) return true;
    await agent.agent.tickOnce();
    return false;
  });
  if (!live) throw new Error('the real agent\'s frames did not reach the exporter');
  for (let tick = 1; tick <= 3; tick++) await fleet.publishTick(tick);
  // not fatal here: the tests say which hosts or values are missing
  await until(() => atTick(3, ALL));
  setupMs = Date.now() - t0;
});

test.after.always(async () => {
  await globExporter?.stop();
  await fleet?.close();
  await exporter?.stop();
  await agent?.stop();
  await server?.dispose();
});

// ---------------------------------------------------------------- tests

test.serial('the simulator sends the fixture reading of the real samplers, shifted per host and tick', (t) => {
  t.log(`setup (server, agent, exporter, 200 hosts × 3 ticks) took ${setupMs} ms`);
  t.deepEqual(fleet.samplers.map((s) => s.name), agent.agent.status().filter((s) => s.status.state === 'active').map((s) => s.name));
  // 2451 USER_HZ ticks in the fixture's /proc/stat are 24.51 s
  t.is(fleet.rawValue(BAD_HOST, 3, 'cpu_usage', { state: 'user', id: '1' }), 24_510_000_000 + 3042);
  t.is(fleet.rawValue(7, 1, 'cpu_cores'), 2 + 1007);
  t.is(fleet.published, SIM_HOSTS * fleet.samplers.length * 3);
  t.is(shifted('24.51', 9, 3042), '24.510003042');
  t.is(shifted('0', 6, 1000), '0.001');
});

test.serial('all 201 hosts are served, each simulated host with its own values', async (t) => {
  const s = await scrape();
  const byHost = seriesByHost(s);
  const expected = [REAL_HOST, ...ALL.map(simHost)].sort();
  t.deepEqual([...byHost.keys()].sort(), expected, 'exactly the real host and the 200 simulated ones');
  t.is(s.samples.get('rezolus_exporter_hosts'), '201');
  t.is(s.samples.get('rezolus_exporter_sources'), String(201 * fleet.samplers.length));
  for (const host of expected) {
    t.is(byHost.get(host)?.length, GOLDEN.length, `${host} has as many series as the golden file`);
    t.true(s.samples.has(`rezolus_exporter_last_frame_age_seconds{host="${host}"}`), `${host} has a last-frame age`);
  }
  const problems = ALL.flatMap((i) => hostProblems(s, i, 3));
  t.deepEqual(problems.slice(0, 20), [], `${problems.length} problems`);
  // spot checks written out, so a wrong helper cannot hide a wrong value
  t.is(s.samples.get('cpu_usage_seconds_total{host="sim-042",state="user",id="1"}'), '24.510003042');
  t.is(s.samples.get('cpu_usage_seconds_total{host="sim-000",state="user",id="1"}'), '24.510003');
  t.is(s.samples.get('scheduler_pressure_seconds_total{host="sim-199",resource="io",kind="some"}'), '3.016438');
  t.is(s.samples.get('memory_total_bytes{host="sim-199"}'), String(25276502016 + 3199));
  t.is(s.samples.get('cpu_cores{host="sim-100"}'), '3102');
});

test.serial('the real agent\'s series equal the golden file\'s', async (t) => {
  const s = await scrape();
  const want = GOLDEN.map(([series, value]) => `${onHost(series, REAL_HOST)} ${value}`);
  const got = [...s.samples]
    .filter(([series]) => series.includes(`{host="${REAL_HOST}"`) && GOLDEN_FAMILIES.has(familyOf(series)))
    .map(([series, value]) => `${series} ${value}`);
  t.deepEqual(got, want);
  const lines = new Set(s.text.split('\n'));
  t.deepEqual(GOLDEN_HEADERS.filter((h) => !lines.has(h)), [], 'HELP and TYPE lines as in the golden file');
});

test.serial('the fleet exposition passes checkExposition and promtool', async (t) => {
  const { text } = await scrape();
  const t0 = Date.now();
  t.deepEqual(checkExposition(text).slice(0, 20), []);
  const t1 = Date.now();
  const r = promtoolCheck(text);
  if (r === undefined) t.fail('promtool is missing (apt-get install prometheus)');
  else t.is(r.status, 0, r.output);
  t.log(`${text.split('\n').length} lines; checkExposition ${t1 - t0} ms, promtool ${Date.now() - t1} ms`);
});

test.serial('malformed frames from sim-042 are skipped and counted by reason; no other host is disturbed', async (t) => {
  const others = ALL.filter((i) => i !== BAD_HOST);
  const before = skipCounts(await scrape());

  await fleet.publishTick(4);
  t.true(await until(() => atTick(4, ALL)), 'tick 4 of every simulated host arrived');

  // Bad frames of every kind from sim-042, on two samplers, then tick 5 for the others, then more bad frames.
  const sent: Record<SkipReason, number> = { garbage: 0, invalid: 0, unknown_descriptor: 0 };
  for (const sampler of ['cpu_usage', 'memory_meminfo']) {
    for (const kind of MALFORMED_KINDS) sent[await fleet.publishMalformed(BAD_HOST, kind, sampler)]++;
  }
  await fleet.publishTick(5, others);
  for (const kind of MALFORMED_KINDS) sent[await fleet.publishMalformed(BAD_HOST, kind, 'scheduler_procs')]++;
  t.deepEqual(sent, { garbage: 12, invalid: 9, unknown_descriptor: 3 });

  const want = {
    ...before,
    garbage: before.garbage + sent.garbage,
    invalid: before.invalid + sent.invalid,
    unknown_descriptor: before.unknown_descriptor + sent.unknown_descriptor,
  };
  t.true(await until(() => atTick(5, others)), 'tick 5 of the other hosts arrived');
  let s = await scrape();
  await until(async () => {
    s = await scrape();
    return REASONS.every((r) => skipCount(s, r) >= want[r]);
  }, 5000);
  t.deepEqual(skipCounts(s), want, 'each bad frame counted once, under its reason; nothing out of order or contested');
  t.true(atTick(4, [BAD_HOST]), 'sim-042 still at its last good tick');
  t.deepEqual(hostProblems(s, BAD_HOST, 4), [], 'sim-042\'s last good values are still served');
  t.is(s.samples.get('cpu_usage_seconds_total{host="sim-042",state="user",id="1"}'), '24.510004042');
  let problems = others.flatMap((i) => hostProblems(s, i, 5));
  t.deepEqual(problems.slice(0, 20), [], `${problems.length} problems on the other hosts`);
  t.is(s.samples.get('rezolus_exporter_hosts'), '201');

  // sim-042's next good frame is taken (its seq equals the bad frames': none of them was taken in).
  await fleet.publishTick(5, [BAD_HOST]);
  t.true(await until(() => atTick(5, [BAD_HOST])), 'tick 5 of sim-042 arrived');
  s = await scrape();
  t.deepEqual(hostProblems(s, BAD_HOST, 5), []);
  t.is(s.samples.get('cpu_usage_seconds_total{host="sim-042",state="user",id="1"}'), '24.510005042');
  problems = others.flatMap((i) => hostProblems(s, i, 5));
  t.deepEqual(problems.slice(0, 20), [], `${problems.length} problems on the other hosts`);
  t.deepEqual(skipCounts(s), want, 'no late or extra skips');
  t.deepEqual(checkExposition(s.text).slice(0, 20), []);
});

// The bus contract ties a frame's host and sampler to its subject: a frame on sim-042's subject
// that names sim-043 (with sim-043's instance, which rezolus_status publishes) or an unknown host
// is skipped as wrong_subject; it neither overwrites sim-043 nor makes a phantom host appear.
test.serial('a frame whose header names another host than its subject disturbs no host', async (t) => {
  const before = await scrape();
  const victim = 43;
  // sim-042 sends, on its own cpu_usage subject, a frame claiming to be sim-043's next one, and one claiming a new host
  await fleet.publishImpostor(BAD_HOST, 'cpu_usage', { host: simHost(victim), instance: fleet.instanceOf(victim) }, 99);
  await fleet.publishImpostor(BAD_HOST, 'cpu_usage', { host: 'ghost', instance: 7 }, 99);
  // a good tick of sim-042 on the same connection after them: once it is in, the impostors have been handled
  await fleet.publishTick(6, [BAD_HOST]);
  t.true(await until(() => atTick(6, [BAD_HOST])), 'tick 6 of sim-042 arrived');
  const s = await scrape();
  const served = s.samples.get('cpu_usage_seconds_total{host="sim-043",state="user",id="1"}');
  t.log(`sim-043 user cpu 1: ${String(before.samples.get('cpu_usage_seconds_total{host="sim-043",state="user",id="1"}'))} -> ${String(served)}`);
  t.log(`phantom host served: ${String(s.samples.get('cpu_usage_seconds_total{host="ghost",state="user",id="1"}'))}`);
  t.deepEqual(hostProblems(s, victim, 5), [], 'sim-043 keeps its own tick 5 values');
  t.deepEqual([...seriesByHost(s).keys()].filter((h) => h === 'ghost'), [], 'no phantom host');
  const skippedNow = REASONS.reduce((n, r) => n + skipCount(s, r), 0);
  const skippedBefore = REASONS.reduce((n, r) => n + skipCount(before, r), 0);
  t.is(skippedNow - skippedBefore, 2, 'both impostor frames skipped and counted');
  t.is(skipCount(s, 'wrong_subject') - skipCount(before, 'wrong_subject'), 2, 'as wrong_subject');
});

test.serial('an exporter following "sim-04*, real-*" serves exactly those hosts', async (t) => {
  const want = [REAL_HOST, ...Array.from({ length: 10 }, (_, i) => simHost(40 + i))].sort();
  await until(() => globExporter.state.lastFrameByHost().size >= want.length);
  t.deepEqual([...globExporter.state.lastFrameByHost().keys()].sort(), want);
  const r = await globExporter.app.inject({ method: 'GET', url: '/metrics' });
  const hosts = new Set([...r.body.matchAll(/^[a-z_]+\{host="([^"]+)"/gm)].map((m) => m[1]));
  t.deepEqual([...hosts].sort(), want);
});
