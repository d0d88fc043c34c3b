/**
 * A recording's window is in frame time (src/sources/window-end.ts): what a
 * reviewer broke in its first version. A host whose clock is far ahead must
 * not end a past window before the others are read, and two adjacent
 * windows of a fleet that is behind must share no frame.
 */
import test from 'ava';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { loadAgentConfig } from '../../src/config/agent.js';
import { SAMPLER_NAMES } from '../../src/samplers/registry.js';
import { Duck } from '../helpers/duckdb.js';
import { startTestNats, type TestNats } from '../helpers/nats.js';
import { runRezolus } from '../helpers/rezolus-cli.js';
import { publishOnSchedule, SimFleet } from '../helpers/sim-fleet.js';
import { until } from '../helpers/until.js';

const PERIOD_MS = 100;
const PERIOD_NS = BigInt(PERIOD_MS) * 1_000_000n;

let dir: string;

test.before(() => {
  dir = mkdtempSync(join(tmpdir(), 'rezolus-record-window-'));
});

test.after.always(() => {
  rmSync(dir, { recursive: true, force: true });
});

/** A server of its own for a test: two fleets' sim-000 on one would share Nats-Msg-Ids, and the stream would drop the second's as duplicates. */
async function ownServer(t: { teardown(fn: () => Promise<void>): void }): Promise<TestNats> {
  const server = await startTestNats();
  t.teardown(() => server.dispose());
  return server;
}

const iso = (ms: number): string => new Date(ms).toISOString();

async function rowTimes(path: string, host: string): Promise<bigint[]> {
  const rows = await (await Duck.open()).rows(`SELECT timestamp FROM read_parquet('${path}') WHERE host = '${host}' ORDER BY timestamp`);
  return rows.map((r) => r.timestamp as bigint);
}

async function fleetOf(server: TestNats, host: string, hosts: number, startNs: bigint): Promise<SimFleet> {
  const agent = loadAgentConfig(undefined, SAMPLER_NAMES, { host, natsUrl: server.url });
  return SimFleet.start({ natsUrl: server.url, hosts, agent, samplers: ['cpu_usage'], startNs: startNs - (startNs % PERIOD_NS), periodNs: PERIOD_NS });
}

test.serial('record --since/--until: a host whose clock is an hour ahead, its frame first in the window, does not end the window before the others are read', async (t) => {
  const server = await ownServer(t);
  const sinceMs = Date.now() - 1000;
  const fleet = await fleetOf(server, 'ahead', 2, BigInt(Date.now()) * 1_000_000n);
  try {
    // sim-001's clock is an hour ahead: its frame is the window's first message; sim-000 is on time
    await fleet.publishTick(36_000, [1]);
    for (let tick = 1; tick <= 40; tick++) await fleet.publishTick(tick, [0]);
    await fleet.publishTick(36_040, [1]);
  } finally {
    await fleet.close();
  }
  const untilMs = Number(fleet.endNs(30) / 1_000_000n);
  await new Promise((r) => setTimeout(r, Math.max(0, untilMs - Date.now() + 500)));
  const out = join(dir, 'ahead.parquet');
  const r = await runRezolus('record', '--nats', server.url, '--since', iso(sinceMs), '--until', iso(untilMs), '--hosts', 'sim-*', '--interval', '500ms', '-o', out);
  t.is(r.code, 0, r.stderr);
  const rows = await rowTimes(out, 'sim-000');
  // ticks 1..30 end within the window (3 s at 100 ms): rows every 500 ms over them
  t.true(rows.length >= 6, `sim-000 has ${rows.length} rows`);
  t.deepEqual(await rowTimes(out, 'sim-001'), [], "sim-001's frames ended an hour after the window");
});

test.serial('record --since/--until: two adjacent windows of a fleet 2 s behind share no row, and neither begins before its --since', async (t) => {
  const LAG_MS = 2000;
  const server = await ownServer(t);
  const fleet = await fleetOf(server, 'adjacent', 1, BigInt(Date.now() - LAG_MS) * 1_000_000n);
  const schedule = publishOnSchedule(fleet, { lagMs: LAG_MS, everyMs: PERIOD_MS / 4 });
  const a = Number(fleet.startNs / 1_000_000n) + 500;
  const b = a + 2000;
  const c = b + 2000;
  try {
    // every frame of both windows is stored (LAG after it ended), and some after
    const last = Number((BigInt(c + 1000) * 1_000_000n - fleet.startNs) / PERIOD_NS);
    t.true(await until(() => fleet.lastTick(0) >= last, 60_000), 'the fleet published both windows');
  } finally {
    await schedule.stop();
    await fleet.close();
  }
  const got: bigint[][] = [];
  for (const [i, [since, till]] of [[a, b], [b, c]].entries()) {
    const out = join(dir, `adjacent-${i}.parquet`);
    const r = await runRezolus('record', '--nats', server.url, '--since', iso(since as number), '--until', iso(till as number), '--hosts', 'sim-*', '--interval', '500ms', '-o', out);
    t.is(r.code, 0, `${r.stderr} (window ${since}..${till}, fleet start ${Number(fleet.startNs / 1_000_000n)}, last tick ${fleet.lastTick(0)}, now ${Date.now()})`);
    const rows = await rowTimes(out, 'sim-000');
    t.true(rows.length >= 3, `window ${i}: ${rows.length} rows`);
    t.true((rows[0] as bigint) > BigInt(since as number) * 1_000_000n, `window ${i} begins ${Number((rows[0] as bigint) / 1_000_000n) - (since as number)} ms after its --since`);
    got.push(rows);
  }
  const [first, second] = got as [bigint[], bigint[]];
  t.deepEqual(first.filter((x) => second.includes(x)), [], 'no row in both');
});
