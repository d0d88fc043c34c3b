/**
 * A recording of a fleet that is behind: every frame reaches the bus LAG
 * after it ended (an overloaded server, agents working off their buffers).
 * A recording for D must still hold the rows up to the end of its window:
 * cut when the clock reached the end, it lost the window's last LAG, and
 * the fleet benchmark at 500 hosts lost the last ~12 of its ticks so.
 * The bus recorders: live (`record --duration`), durable, and a past
 * window (`--since`/`--until`).
 */
import test from 'ava';
import { spawn } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { ROOT } from '../../scripts/gen-docs.js';
import { loadAgentConfig } from '../../src/config/agent.js';
import { SAMPLER_NAMES } from '../../src/samplers/registry.js';
import { Duck } from '../helpers/duckdb.js';
import { startTestNats, type TestNats } from '../helpers/nats.js';
import { rezolusArgv } from '../helpers/rezolus-cli.js';
import { publishOnSchedule, SimFleet } from '../helpers/sim-fleet.js';
import { until } from '../helpers/until.js';

const PERIOD_MS = 100;
const PERIOD_NS = BigInt(PERIOD_MS) * 1_000_000n;
const LAG_MS = 3000;
const DURATION_MS = 3000;
const INTERVAL_NS = 500_000_000n;
const HOSTS = 3;

let server: TestNats;
let fleet: SimFleet;
let dir: string;
let publisher: { stop(): Promise<void> } | undefined;

test.before(async () => {
  server = await startTestNats();
  dir = mkdtempSync(join(tmpdir(), 'rezolus-record-late-'));
  const agent = loadAgentConfig(undefined, SAMPLER_NAMES, { host: 'sim', natsUrl: server.url });
  const now = BigInt(Date.now()) * 1_000_000n;
  fleet = await SimFleet.start({ natsUrl: server.url, hosts: HOSTS, agent, samplers: ['cpu_usage'], startNs: now - (now % PERIOD_NS), periodNs: PERIOD_NS });
  // tick t (ended at start + t periods) is published LAG after it ended
  publisher = publishOnSchedule(fleet, { lagMs: LAG_MS, everyMs: PERIOD_MS / 4 });
});

test.after.always(async () => {
  await publisher?.stop();
  await fleet?.close();
  await server?.dispose();
  rmSync(dir, { recursive: true, force: true });
});

interface Recorded {
  readonly code: number | null;
  readonly stderr: string;
  /** the recorder's clock when it logged that it began recording, unix ns */
  readonly startedNs: bigint;
}

async function record(args: readonly string[], begins = 'recording'): Promise<Recorded> {
  const child = spawn(process.execPath, rezolusArgv('record', '--nats', server.url, '--log-level', 'info', ...args), { cwd: ROOT, stdio: ['ignore', 'ignore', 'pipe'] });
  let stderr = '';
  child.stderr?.on('data', (d: Buffer) => (stderr += d.toString()));
  const code = await new Promise<number | null>((resolve) => child.once('close', resolve));
  const line = stderr.split('\n').find((l) => l.includes(`"msg":"${begins}"`));
  if (line === undefined) throw new Error(`no "${begins}" line: ${stderr}`);
  return { code, stderr, startedNs: BigInt((JSON.parse(line) as { time: number }).time) * 1_000_000n };
}

/** Each host's row times, in order. */
async function rowTimes(path: string): Promise<Map<string, bigint[]>> {
  const rows = await (await Duck.open()).rows(`SELECT host, timestamp FROM read_parquet('${path}') ORDER BY host, timestamp`);
  const byHost = new Map<string, bigint[]>();
  for (const r of rows) {
    const host = r.host as string;
    byHost.set(host, [...(byHost.get(host) ?? []), r.timestamp as bigint]);
  }
  return byHost;
}

for (const mode of ['live', 'durable'] as const) {
  test(`record (${mode}) of a fleet ${LAG_MS} ms behind holds the rows up to the end of its window, one per interval, none after`, async (t) => {
    const out = join(dir, `${mode}.parquet`);
    const durable = mode === 'durable' ? ['--durable', 'late'] : [];
    const r = await record([...durable, '--hosts', 'sim-*', '--interval', '500ms', '--duration', `${DURATION_MS}ms`, '-o', out]);
    t.is(r.code, 0, r.stderr);
    const endNs = r.startedNs + BigInt(DURATION_MS) * 1_000_000n;
    const times = await rowTimes(out);
    t.is(times.size, HOSTS, 'every host recorded');
    for (const [host, ts] of times) {
      const last = ts.at(-1) as bigint;
      // the last row holds the last frame ended within the window: stamped at the end rounded down to a row
      // (the window began a little before the log line: a second interval of slack), and no later than the end
      t.true(last >= endNs - 2n * INTERVAL_NS, `${host}: the last row ${Number(endNs - last) / 1e6} ms before the window's end (${ts.length} rows)`);
      t.true(last <= endNs + INTERVAL_NS, `${host}: a row ${Number(last - endNs) / 1e6} ms after the window's end`);
      const gaps = ts.slice(1).filter((x, i) => x - (ts[i] as bigint) !== INTERVAL_NS);
      t.deepEqual(gaps, [], `${host}: one row per interval`);
    }
  });
}

test(`record --since/--until of a past window, while the fleet was ${LAG_MS} ms behind, holds its rows up to --until`, async (t) => {
  // a window of frames the fleet made, the first of them 500 ms after it began
  const sinceMs = Number(fleet.startNs / 1_000_000n) + 500;
  const untilMs = sinceMs + 2000;
  // the window's last frames reach the stream LAG after it: wait until they, and 1 s more of frames, are there
  const lastTick = Number((BigInt(untilMs + 1000) * 1_000_000n - fleet.startNs) / PERIOD_NS);
  t.true(await until(() => fleet.lastTick(HOSTS - 1) >= lastTick, 60_000), 'the fleet published the window');
  const out = join(dir, 'past.parquet');
  const iso = (ms: number): string => new Date(ms).toISOString();
  const r = await record(['--since', iso(sinceMs), '--until', iso(untilMs), '--hosts', 'sim-*', '--interval', '500ms', '-o', out], 'replaying');
  t.is(r.code, 0, r.stderr);
  const endNs = BigInt(untilMs) * 1_000_000n;
  const times = await rowTimes(out);
  t.is(times.size, HOSTS, 'every host recorded');
  for (const [host, ts] of times) {
    const last = ts.at(-1) as bigint;
    t.true(last >= endNs - INTERVAL_NS, `${host}: the last row ${Number(endNs - last) / 1e6} ms before --until (${ts.length} rows)`);
    t.true(last <= endNs + INTERVAL_NS, `${host}: a row ${Number(last - endNs) / 1e6} ms after --until`);
  }
});
