import test from 'ava';
import { jetstreamManager } from '@nats-io/jetstream';
import { connect } from '@nats-io/transport-node';
import { spawn, type ChildProcess } from 'node:child_process';
import { existsSync, mkdtempSync, readdirSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { ROOT } from '../../scripts/gen-docs.js';
import { loadAgentConfig } from '../../src/config/agent.js';
import { SAMPLER_NAMES } from '../../src/samplers/registry.js';
import { Duck } from '../helpers/duckdb.js';
import { startTestNats, type TestNats } from '../helpers/nats.js';
import { SimFleet } from '../helpers/sim-fleet.js';
import { Spool } from '../../src/record/spool.js';

const PERIOD_MS = 100;
const PERIOD_NS = BigInt(PERIOD_MS) * 1_000_000n;
const HOSTS = 100;
/** cpu_usage/user/0 in the fixture's /proc/stat, in ns */
const USER0 = 20_230_000_000n;

let server: TestNats;
let fleet: SimFleet;
let dir: string;
let publisher: NodeJS.Timeout | undefined;
const children = new Set<ChildProcess>();

test.before(async () => {
  server = await startTestNats();
  dir = mkdtempSync(join(tmpdir(), 'rezolus-record-durable-'));
  const agent = loadAgentConfig(undefined, SAMPLER_NAMES, { host: 'sim', natsUrl: server.url });
  // ticks end on 100 ms boundaries, so a row at boundary T holds tick (T - start) / 100 ms exactly
  const now = BigInt(Date.now()) * 1_000_000n;
  fleet = await SimFleet.start({ natsUrl: server.url, hosts: HOSTS, agent, samplers: ['cpu_usage', 'memory_meminfo'], startNs: now - (now % PERIOD_NS), periodNs: PERIOD_NS });
  // a publisher at a known rate: tick t is published when its end time has come
  let tick = 0;
  let busy = false;
  publisher = setInterval(() => {
    if (busy) return;
    busy = true;
    void (async () => {
      const due = Number((BigInt(Date.now()) * 1_000_000n - fleet.startNs) / PERIOD_NS);
      while (tick < due) await fleet.publishTick(++tick);
    })().finally(() => (busy = false));
  }, PERIOD_MS / 4);
});

test.after.always(async () => {
  if (publisher !== undefined) clearInterval(publisher);
  for (const c of children) if (c.exitCode === null && c.signalCode === null) c.kill('SIGKILL');
  await fleet?.close();
  await server?.dispose();
  rmSync(dir, { recursive: true, force: true });
});

interface Run {
  readonly child: ChildProcess;
  stderr: string;
  readonly exited: Promise<{ code: number | null; signal: NodeJS.Signals | null }>;
}

function startRecord(args: readonly string[]): Run {
  const child = spawn(process.execPath, ['--import', 'tsx', join(ROOT, 'src/cli/rezolus.ts'), 'record', '--nats', server.url, '--log-level', 'info', ...args], {
    cwd: ROOT,
    stdio: ['ignore', 'ignore', 'pipe'],
  });
  children.add(child);
  const run: Run = {
    child,
    stderr: '',
    exited: new Promise((resolve) => child.once('close', (code, signal) => resolve({ code, signal }))),
  };
  child.stderr?.on('data', (d: Buffer) => (run.stderr += d.toString()));
  return run;
}

async function waitFor(run: Run, text: string, ms = 60_000): Promise<void> {
  const deadline = Date.now() + ms;
  while (!run.stderr.includes(text)) {
    if (Date.now() > deadline || run.child.exitCode !== null) throw new Error(`no "${text}" from the recorder: ${run.stderr}`);
    await new Promise((r) => setTimeout(r, 20));
  }
}

async function kill9(run: Run): Promise<void> {
  run.child.kill('SIGKILL');
  const e = await run.exited;
  if (e.signal !== 'SIGKILL') throw new Error(`the recorder ended before the kill: ${JSON.stringify(e)} ${run.stderr}`);
}

/** SIGKILLs `run` once a file of `dir` starting with `prefix` is larger than 4 bytes; false when the run ended first. */
async function killWhenWriting(run: Run, prefix: string): Promise<boolean> {
  for (;;) {
    if (run.child.exitCode !== null || run.child.signalCode !== null) return false;
    const growing = readdirSync(dir).some((f) => {
      try {
        return f.startsWith(prefix) && statSync(join(dir, f)).size > 4;
      } catch {
        return false;
      }
    });
    if (growing) {
      run.child.kill('SIGKILL');
      const e = await run.exited;
      return e.signal === 'SIGKILL';
    }
    await new Promise((r) => setTimeout(r, 2));
  }
}

/** the JSON log line with this msg */
function logLine(run: Run, msg: string): Record<string, unknown> | undefined {
  const line = run.stderr.split('\n').find((l) => l.includes(`"msg":"${msg}"`));
  return line === undefined ? undefined : (JSON.parse(line) as Record<string, unknown>);
}

test.serial('record --durable survives SIGKILL while frames flow, while it rebuilds from its spool and while its file is being written: every row once, no gap, the published values', async (t) => {
  const out = join(dir, 'durable.parquet');
  const duck = await Duck.open();
  // a valid earlier file under the name: a kill must leave it as it was
  await duck.rows(`COPY (SELECT 42 AS earlier) TO '${out}' (FORMAT PARQUET)`);
  const args = ['--durable', 'rec1', '--hosts', 'sim-*', '--interval', '100ms', '--duration', '10s', '-o', out];

  const first = startRecord(args);
  await waitFor(first, '"msg":"recording"');
  await new Promise((r) => setTimeout(r, 3000));
  await kill9(first);
  t.deepEqual(await duck.rows(`SELECT earlier FROM read_parquet('${out}')`), [{ earlier: 42 }], 'the earlier file is untouched after the kill');
  t.true(existsSync(`${out}.spool`), 'the spool is kept');
  t.true(readdirSync(dir).some((f) => f.startsWith('durable.parquet.tmp-')), 'the killed writer left its temporary file (the restart removes it)');
  // frames go on flowing while no recorder runs
  await new Promise((r) => setTimeout(r, 1000));

  const second = startRecord(args);
  await waitFor(second, '"msg":"resuming"');
  // killed again with its writer busy: rebuilding from the spool and catching up on what was missed
  await new Promise((r) => setTimeout(r, 300));
  await kill9(second);
  t.deepEqual(await duck.rows(`SELECT earlier FROM read_parquet('${out}')`), [{ earlier: 42 }], 'and after the second kill');

  // the third run is killed as soon as its temporary file grows past the Parquet magic: while
  // the file is being written (a buffered megabyte of row groups, or the final write)
  const third = startRecord(args);
  const killedInWrite = await killWhenWriting(third, 'durable.parquet.tmp-');
  if (killedInWrite) {
    const [earlier] = await duck.rows(`SELECT count(*) AS n FROM parquet_schema('${out}') WHERE name = 'earlier'`);
    // before the rename the earlier file, after it the whole new one: DuckDB reads either
    const [n] = await duck.rows(`SELECT count(*) AS n FROM read_parquet('${out}')`);
    t.log(`third run killed while writing; under the name: ${Number(earlier?.n) === 1 ? 'the earlier file' : `the new file (${String(n?.n)} rows)`}`);
  } else t.log('the third run finished before a write could be caught');

  const fourth = startRecord(args);
  const e = await fourth.exited;
  t.is(e.code, 0, fourth.stderr);
  const resumed = [second, third, fourth].map((r) => logLine(r, 'resuming'));
  t.log(`resumed from ${resumed.map((r) => String(r?.spooledFrames)).join(', ')} spooled frames in ${resumed.map((r) => String(r?.resumeMs)).join(', ')} ms`);

  const rows = await duck.rows(`SELECT host, timestamp, "cpu_usage/user/0" AS user0 FROM read_parquet('${out}') ORDER BY host, timestamp`);
  const [dups] = await duck.rows(`SELECT count(*) - count(DISTINCT (host, timestamp)) AS n FROM read_parquet('${out}')`);
  t.is(Number(dups?.n), 0, 'no duplicate row');
  const byHost = new Map<string, bigint[]>();
  let wrong = 0;
  for (const row of rows) {
    const host = row.host as string;
    const ts = row.timestamp as bigint;
    (byHost.get(host) ?? byHost.set(host, []).get(host))?.push(ts);
    const tick = (ts - fleet.startNs) / PERIOD_NS;
    if (row.user0 !== USER0 + 1000n * tick + BigInt(Number(host.slice(4)))) wrong++;
  }
  t.is(byHost.size, HOSTS, 'every host');
  t.is(wrong, 0, 'every row holds the values published for its time');
  const counts = [...byHost.values()].map((ts) => ts.length);
  for (const [host, ts] of byHost) {
    const span = Number((ts[ts.length - 1] as bigint) - (ts[0] as bigint)) / Number(PERIOD_NS);
    if (span + 1 !== ts.length) t.fail(`${host}: ${ts.length} rows over ${span + 1} boundaries: a gap`);
  }
  // 10 s at 100 ms: 100 boundaries, give or take one at either end
  t.true(Math.min(...counts) >= 98 && Math.max(...counts) <= 102, `rows per host ${Math.min(...counts)}..${Math.max(...counts)}`);
  t.log(`${rows.length} rows, ${Math.min(...counts)}..${Math.max(...counts)} per host`);

  t.deepEqual(readdirSync(dir).sort(), ['durable.parquet'], 'no temporary file, spool or lock left');
  const nc = await connect({ servers: server.url });
  const consumers = await (await (await jetstreamManager(nc)).consumers.list('REZOLUS')).next();
  await nc.close();
  t.deepEqual(consumers.map((c) => c.name), [], 'the durable consumer was deleted');
});

test.serial('record --durable refuses a restart with other arguments, and a name another recording holds', async (t) => {
  for (const bad of [['--durable', 'a.b'], ['--durable', 'x', '--since', '1m', '--duration', '1s'], ['--durable', 'x', 'http://localhost:4241'], ['--durable', 'x', '--', 'true']]) {
    const r = startRecord([...bad, '-o', join(dir, 'bad.parquet')]);
    t.is((await r.exited).code, 2, `${bad.join(' ')}: ${r.stderr}`);
    t.is(r.stderr.trim().split('\n').length, 1, r.stderr);
  }
  const out = join(dir, 'args.parquet');
  const args = ['--durable', 'rec2', '--hosts', 'sim-001', '--interval', '100ms', '--duration', '30s', '-o', out];
  const first = startRecord(args);
  await waitFor(first, '"msg":"recording"');
  await kill9(first);
  const other = startRecord(['--durable', 'rec2', '--hosts', 'sim-002', '--interval', '100ms', '--duration', '30s', '-o', out]);
  const e = await other.exited;
  t.is(e.code, 2, other.stderr);
  t.regex(other.stderr, /args\.parquet\.spool belongs to a recording started with hosts "sim-001" \(now "sim-002"\)/);
  const taken = startRecord(['--durable', 'rec2', '--hosts', 'sim-001', '--interval', '100ms', '--duration', '30s', '-o', join(dir, 'elsewhere.parquet')]);
  const e2 = await taken.exited;
  t.is(e2.code, 1, taken.stderr);
  t.regex(taken.stderr, /consumer rec2 already exists on stream REZOLUS and this recording has no spool/);
  t.false(existsSync(join(dir, 'elsewhere.parquet.spool')), 'no spool made for it');
  // finish the first one with SIGTERM: it ends now and writes the file
  const again = startRecord(args);
  await waitFor(again, '"msg":"resuming"');
  again.child.kill('SIGTERM');
  const e3 = await again.exited;
  t.is(e3.code, 143, again.stderr);
  const [row] = await (await Duck.open()).rows(`SELECT count(*) AS n FROM read_parquet('${out}')`);
  t.true(Number(row?.n) >= 1, `${String(row?.n)} rows`);
  t.deepEqual(readdirSync(dir).filter((f) => f.startsWith('args.parquet') || f.startsWith('elsewhere')), ['args.parquet']);
});

test.serial('record --durable killed after its file was in place (spool marked done) only finishes the clean-up on restart', async (t) => {
  const out = join(dir, 'done.parquet');
  const args = ['--durable', 'rec3', '--hosts', 'sim-003', '--interval', '100ms', '--duration', '30s', '-o', out];
  const first = startRecord(args);
  await waitFor(first, '"msg":"recording"');
  await new Promise((r) => setTimeout(r, 500));
  await kill9(first);
  // the state a kill between the rename and the clean-up leaves: the file in place, the spool marked done
  const duck = await Duck.open();
  await duck.rows(`COPY (SELECT 7 AS finished) TO '${out}' (FORMAT PARQUET)`);
  const spool = Spool.open(`${out}.spool`);
  if (spool === undefined) throw new Error('no spool');
  await spool.replay(() => undefined);
  spool.markDone();
  spool.close();
  const began = Date.now();
  const again = startRecord(args);
  const e = await again.exited;
  t.is(e.code, 0, again.stderr);
  t.true(Date.now() - began < 15_000, 'at once, not after the 30 s window');
  t.deepEqual(await duck.rows(`SELECT finished FROM read_parquet('${out}')`), [{ finished: 7 }], 'the file is not written again');
  t.deepEqual(readdirSync(dir).filter((f) => f.startsWith('done.parquet')), ['done.parquet']);
  const nc = await connect({ servers: server.url });
  const consumers = await (await (await jetstreamManager(nc)).consumers.list('REZOLUS')).next();
  await nc.close();
  t.false(consumers.some((c) => c.name === 'rec3'), 'its consumer was deleted');
});

test.serial('record --durable --since records a past window from the stream and ends at its end', async (t) => {
  const out = join(dir, 'since.parquet');
  const run = startRecord(['--durable', 'rec4', '--hosts', 'sim-005', '--interval', '100ms', '--since', '2s', '-o', out]);
  const e = await run.exited;
  t.is(e.code, 0, run.stderr);
  const [row] = await (await Duck.open()).rows(`SELECT count(*) AS n, count(DISTINCT timestamp) AS d FROM read_parquet('${out}')`);
  t.true(Number(row?.n) >= 18 && Number(row?.n) <= 25, `${String(row?.n)} rows for 2 s at 100 ms (and the start-up)`);
  t.is(row?.d, row?.n);
  t.deepEqual(readdirSync(dir).filter((f) => f.startsWith('since.parquet')), ['since.parquet']);
});
