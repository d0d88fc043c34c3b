/**
 * Two agents publishing for one host (a second one started by mistake for
 * a few seconds, or the admin's bootstrap run on a host that has one): a
 * recording of the window keeps the first agent's rows throughout, never
 * mixes the two, and reports the frames it left out.
 */
import test from 'ava';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { runAgent, type RunningAgent } from '../../src/agent/main.js';
import { loadAgentConfig } from '../../src/config/agent.js';
import { silentLogger } from '../../src/log/logger.js';
import { runRecord } from '../../src/record/main.js';
import { SAMPLER_NAMES } from '../../src/samplers/registry.js';
import { Duck } from '../helpers/duckdb.js';
import { NO_KERNEL, PROC, SYS } from '../helpers/fixtures.js';
import { startTestNats, type TestNats } from '../helpers/nats.js';

const sleep = (ms: number): Promise<void> => new Promise((r) => setTimeout(r, ms));
const INTERVAL_MS = 250;

let server: TestNats;
let dir: string;
test.before(async () => {
  server = await startTestNats();
  dir = mkdtempSync(join(tmpdir(), 'rezolus-two-agents-'));
});
test.after.always(async () => {
  await server?.dispose();
  rmSync(dir, { recursive: true, force: true });
});

async function agent(): Promise<RunningAgent> {
  const config = loadAgentConfig(undefined, SAMPLER_NAMES, { host: 'dup', natsUrl: server.url, intervalMs: INTERVAL_MS });
  const on = ['cpu_usage', 'rezolus_self'];
  const samplers = Object.fromEntries(SAMPLER_NAMES.map((n) => [n, { enabled: on.includes(n), intervalMs: INTERVAL_MS }]));
  return runAgent({ ...config, procfs: PROC, sysfs: SYS, kernel: NO_KERNEL, samplers, http: undefined }, silentLogger());
}

test('a second agent for the same host for 2 s: the recording keeps the first agent\'s rows to the end and counts the second\'s frames', async (t) => {
  t.timeout(60_000);
  const startedAt = Date.now();
  const first = await agent();
  await sleep(2000);
  const second = await agent();
  await sleep(2000);
  await second.stop();
  await sleep(3000);
  await first.stop();
  const endedAt = Date.now();

  const out = join(dir, 'window.parquet');
  const rec = await runRecord(
    {
      natsUrl: server.url, hosts: 'dup', intervalMs: INTERVAL_MS, durationMs: undefined, output: out,
      replay: { stream: 'REZOLUS', sinceNs: BigInt(startedAt - 1000) * 1_000_000n, untilNs: BigInt(endedAt) * 1_000_000n },
    },
    silentLogger(),
  );
  const s = await rec.done;
  t.true(s.written);
  t.true((s.rowStats?.contested ?? 0) >= 10, `contested frames: ${s.rowStats?.contested}`);
  t.is(s.rowStats?.restarts, 0, 'the first agent kept the host');
  const duck = await Duck.open();
  const rows = await duck.rows(`SELECT timestamp, rezolus_publish_frames AS frames FROM read_parquet('${out}') ORDER BY timestamp`);
  const steps = rows.slice(1).map((r, i) => Number((r.timestamp as bigint) - (rows[i]?.timestamp as bigint)) / 1e6);
  t.true(steps.every((x) => x === INTERVAL_MS), `row steps (ms): ${[...new Set(steps)].join(',')}`);
  const lastRowMs = Number((rows.at(-1)?.timestamp as bigint) / 1_000_000n);
  t.true(lastRowMs >= endedAt - 1500, `rows go on to the first agent's end: last row ${endedAt - lastRowMs} ms before the end`);
  const frames = rows.map((r) => Number(r.frames));
  t.true(frames.every((v, i) => i === 0 || v >= (frames[i - 1] as number)), `the first agent's own counter never goes back: ${frames.join(',')}`);
});
