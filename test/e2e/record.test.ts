import test from 'ava';
import { DuckDBInstance } from '@duckdb/node-api';
import { jetstreamManager } from '@nats-io/jetstream';
import { connect } from '@nats-io/transport-node';
import { spawn } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { ROOT } from '../../scripts/gen-docs.js';
import { runAgent, type RunningAgent } from '../../src/agent/main.js';
import { loadAgentConfig } from '../../src/config/agent.js';
import { silentLogger } from '../../src/log/logger.js';
import { SAMPLER_NAMES } from '../../src/samplers/registry.js';
import { NO_KERNEL, PROC, SYS } from '../helpers/fixtures.js';
import { startTestNats, type TestNats } from '../helpers/nats.js';
import { freePort } from '../../src/up/nats-server.js';
import { rezolusArgv } from '../helpers/rezolus-cli.js';

let server: TestNats;
let agent: RunningAgent;
let dir: string;

test.before(async () => {
  server = await startTestNats();
  dir = mkdtempSync(join(tmpdir(), 'rezolus-record-test-'));
  const base = loadAgentConfig(undefined, SAMPLER_NAMES, { host: 'fixture', natsUrl: server.url });
  const on = ['cpu_usage', 'memory_meminfo', 'cgroup_resources'];
  const samplers = Object.fromEntries(SAMPLER_NAMES.map((n) => [n, { enabled: on.includes(n), intervalMs: 100 }]));
  agent = await runAgent({ ...base, procfs: PROC, sysfs: SYS, kernel: NO_KERNEL, samplers }, silentLogger());
});

test.after.always(async () => {
  await agent?.stop();
  await server?.dispose();
  rmSync(dir, { recursive: true, force: true });
});

function record(args: string[], mode: string[] = ['record'], nats = server.url): Promise<{ code: number | null; stdout: string; stderr: string }> {
  const child = spawn(process.execPath, rezolusArgv(...mode, '--nats', nats, '--log-level', 'warn', ...args), {
    cwd: ROOT,
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let stdout = '';
  let stderr = '';
  child.stdout.on('data', (d: Buffer) => (stdout += d.toString()));
  child.stderr.on('data', (d: Buffer) => (stderr += d.toString()));
  return new Promise((resolve) => child.once('exit', (code) => resolve({ code, stdout, stderr })));
}

test('rezolus record --host fixture --interval 500ms --duration 3s writes one row per 500 ms with the published values', async (t) => {
  const out = join(dir, 'live.parquet');
  const r = await record(['--host', 'fixture', '--interval', '500ms', '--duration', '3s', '-o', out]);
  t.is(r.code, 0, r.stderr);
  t.is(r.stdout, '', 'quiet when not on a terminal');
  t.deepEqual(readdirSync(dir).filter((f) => f.startsWith('live.parquet.tmp-')), [], 'no temporary file of this recording left');
  const con = await (await DuckDBInstance.create(':memory:')).connect();
  const rows = (
    await con.runAndReadAll(
      `SELECT timestamp, host, "cpu_usage/user/0" AS user0, memory_total,
              "cgroup_memory_current/%2Fsystem.slice%2Fdocker-0123abcd.scope" AS container_memory,
              "cgroup_cpu_bandwidth_throttled_periods/%2Fsystem.slice%2Fdocker-0123abcd.scope" AS throttled
       FROM read_parquet('${out}') ORDER BY timestamp`,
    )
  ).getRowObjects();
  t.true(rows.length >= 4 && rows.length <= 7, `${rows.length} rows in 3 s at 500 ms`);
  for (const row of rows) {
    t.is(row.host, 'fixture');
    t.is((row.timestamp as bigint) % 500_000_000n, 0n, 'rows on interval boundaries');
    t.is(row.user0, 20_230_000_000n, 'cpu_usage user of cpu0 from the fixture /proc/stat, in ns');
    t.is(row.memory_total, 25_276_502_016, 'MemTotal from the fixture, in bytes');
    // cgroup_resources runs at 1 s at the least (its minIntervalMs): a 500 ms row may fall between its frames
    if (row.container_memory !== null) {
      t.is(row.container_memory, 268_435_456, 'a cgroup series, its path escaped in the column name');
      t.is(row.throttled, 37n);
    }
  }
  t.true(rows.some((row) => row.container_memory !== null), 'the cgroup series are in the file');
  const steps = rows.slice(1).map((row, i) => (row.timestamp as bigint) - (rows[i]?.timestamp as bigint));
  t.true(steps.every((s) => s === 500_000_000n), `steps ${steps.join(',')}`);
  const meta = Object.fromEntries(
    (await con.runAndReadAll(`SELECT decode(key) AS k, decode(value) AS v FROM parquet_kv_metadata('${out}')`)).getRowObjects().map((m) => [m.k, m.v]),
  );
  t.like(meta, { source: 'rezolus-nats', hosts: '["fixture"]', sampling_interval_ms: '500' });
});

test('record refuses bad input with exit 2 and writes nothing', async (t) => {
  const out = join(dir, 'bad.parquet');
  for (const args of [
    ['--interval', 'soon', '-o', out],
    ['-o', join(dir, 'x.csv')],
    ['--host', 'a', '--hosts', 'b', '-o', out],
    ['--listen', ':1', '-o', out],
    ['-o', out, '--'],
    ['--since', '1m', '-o', out, '--', 'true'],
    ['-o', join(dir, 'no-such-dir', 'x.parquet')],
  ]) {
    const r = await record(args);
    t.is(r.code, 2, `${args.join(' ')}: ${r.stderr}`);
  }
  t.false(existsSync(out));
  t.regex((await record(['-o', join(dir, 'no-such-dir', 'x.parquet')])).stderr, /directory .*no-such-dir does not exist/);
  const negative = await record(['--interval', '-1s', '-o', out]);
  t.is(negative.code, 2);
  t.regex(negative.stderr, /--interval must be/, 'our message for a negative value, not parseArgs\' "ambiguous"');
  const unknown = await record(['--frobnicate', '-o', out]);
  t.is(unknown.stderr.trim().split('\n').length, 1, `a usage error is one line: ${unknown.stderr}`);
});

test('a recording that captures nothing fails, names the hosts the stream has and leaves an existing file alone; a command that cannot start exits 127 with no file', async (t) => {
  const out = join(dir, 'typo.parquet');
  writeFileSync(out, 'an earlier recording');
  const r = await record(['--host', 'fixtur', '--since', '2s', '-o', out]);
  t.is(r.code, 1, r.stderr);
  t.regex(r.stderr, /nothing recorded, .*typo\.parquet not written: no frames of hosts "fixtur".*the stream has hosts fixture/);
  t.is(readFileSync(out, 'utf8'), 'an earlier recording', 'an empty recording replaces nothing');
  const live = await record(['--hosts', 'zz*', '--duration', '1s', '-o', out]);
  t.is(live.code, 1, live.stderr);
  t.regex(live.stderr, /nothing recorded/);

  const missing = join(dir, 'nocmd.parquet');
  const c = await record(['--host', 'fixture', '-o', missing, '--', join(dir, 'no-such-command')]);
  t.is(c.code, 127, c.stderr);
  t.regex(c.stderr, /cannot start .*no-such-command/);
  t.false(existsSync(missing), 'no file for a command that never ran');
  t.deepEqual(readdirSync(dir).filter((f) => f.startsWith('nocmd.parquet')), [], 'and no temporary file');
});

test('record with a NATS URL where no server answers fails at once and says so', async (t) => {
  const port = await freePort();
  const began = Date.now();
  const { code, stderr } = await record(['-o', join(dir, 'nobus.parquet')], ['record'], `nats://127.0.0.1:${port}`);
  t.is(code, 1, stderr);
  t.regex(stderr, new RegExp(`cannot connect to NATS at nats://127.0.0.1:${port}`));
  t.true(Date.now() - began < 15_000, 'no waiting for a server');
  t.false(existsSync(join(dir, 'nobus.parquet')));
});

test('rezolus record --since replays a past window from the stream at read speed', async (t) => {
  // the agent has published at 100 ms since before(); make sure 2 s of it are stored
  await new Promise((r) => setTimeout(r, 2500));
  const out = join(dir, 'replay.parquet');
  const began = Date.now();
  const r = await record(['--host', 'fixture', '--since', '2s', '--interval', '500ms', '-o', out]);
  const tookMs = Date.now() - began;
  t.is(r.code, 0, r.stderr);
  t.log(`2 s window replayed in ${tookMs} ms (process start included)`);
  const con = await (await DuckDBInstance.create(':memory:')).connect();
  const rows = (await con.runAndReadAll(`SELECT timestamp, "cpu_usage/user/0" AS user0 FROM read_parquet('${out}') ORDER BY timestamp`)).getRowObjects();
  t.true(rows.length >= 3 && rows.length <= 6, `${rows.length} rows for a 2 s window at 500 ms`);
  // the window is the 2 s before the recorder started (a little after `began`); rows sit on 500 ms boundaries
  const from = BigInt(began) * 1_000_000n - 2_500_000_000n;
  for (const row of rows) {
    t.is(row.user0, 20_230_000_000n);
    t.true((row.timestamp as bigint) >= from, `row at ${String(row.timestamp)} is from the window, not older than ${from}`);
  }
  const nc = await connect({ servers: server.url });
  const consumers = await (await (await jetstreamManager(nc)).consumers.list('REZOLUS')).next();
  await nc.close();
  t.deepEqual(consumers, [], 'the replay consumer was deleted');
});

test('record refuses a lookback beyond the stream max_age and says how to raise it', async (t) => {
  const out = join(dir, 'old.parquet');
  const r = await record(['--host', 'fixture', '--since', '2h', '-o', out]);
  t.is(r.code, 1);
  t.regex(r.stderr, /keeps only the last 900 s \(max_age\); asked for 720\d s\. Raise \[stream\] max_age/);
  t.false(existsSync(out));
  const bad = await record(['--since', 'yesterday', '-o', out]);
  t.is(bad.code, 2);
  t.regex(bad.stderr, /--since must be a duration ago/);
});

test('record -- cmd: the recording spans the command, which runs in its own group; its status is ours', async (t) => {
  const out = join(dir, 'cmd.parquet');
  const r = await record(['--host', 'fixture', '--interval', '200ms', '-o', out, '--', 'sh', '-c', 'sleep 1.2; echo from-child; exit 3']);
  t.is(r.code, 3, r.stderr);
  t.is(r.stdout, 'from-child\n');
  const con = await (await DuckDBInstance.create(':memory:')).connect();
  const [row] = (await con.runAndReadAll(`SELECT count(*) AS n, max(timestamp) - min(timestamp) AS span FROM read_parquet('${out}')`)).getRowObjects();
  t.true(Number(row?.n) >= 4, `${String(row?.n)} rows over the command's 1.2 s at 200 ms`);

  // a host that publishes nothing, so that no frame can arrive before the kill however slowly sh starts
  const killed = await record(['--host', 'silent', '-o', join(dir, 'killed.parquet'), '--', 'sh', '-c', 'kill -TERM $$']);
  t.is(killed.code, 143, 'killed by SIGTERM: 128 + 15');
  // nothing recorded, no file, and the command's status stays ours
  t.regex(killed.stderr, /nothing recorded, .*killed\.parquet not written: the command sh was killed by SIGTERM after/);
  t.false(existsSync(join(dir, 'killed.parquet')));
});

test('a command that ends before the first row: says so, no file, its status, or 1 when it succeeded', async (t) => {
  // a host that publishes nothing: no frame can arrive however slowly sh starts (a real agent's interval is longer than sh -c 'exit 7')
  const out = join(dir, 'short.parquet');
  const failed = await record(['--host', 'silent', '-o', out, '--', 'sh', '-c', 'exit 7']);
  t.is(failed.code, 7, failed.stderr);
  t.regex(failed.stderr, /^rezolus record: nothing recorded, .*short\.parquet not written: the command sh ended with exit code 7 after \d+\.\d s, before the first row was recorded \(no frames of hosts "silent" arrived from nats:\/\/127\.0\.0\.1:\d+ in that time/);
  t.is(failed.stderr.trim().split('\n').length, 1, 'one line');
  const succeeded = await record(['--host', 'silent', '-o', out, '--', 'true']);
  t.is(succeeded.code, 1, 'no file is not a success');
  t.regex(succeeded.stderr, /the command true ended with exit code 0 after .*, before the first row was recorded/);
  t.false(existsSync(out));
});

test('record --duration caps a command: its whole group gets SIGTERM, then SIGKILL, and the exit is 124', async (t) => {
  const out = join(dir, 'capped.parquet');
  const pidFile = join(dir, 'grandchild.pid');
  const began = Date.now();
  // the grandchild ignores SIGTERM: only the SIGKILL after the 2 s grace ends it
  const r = await record(['--host', 'fixture', '--duration', '1s', '-o', out, '--', 'sh', '-c', `sh -c 'trap "" TERM; echo $$ > ${pidFile}; sleep 30' & wait`]);
  const took = Date.now() - began;
  t.is(r.code, 124, r.stderr);
  // the command alone would run 30 s; capped, it takes 1 s + the 2 s grace (+ process start-up on a loaded machine)
  t.true(took < 25_000, `took ${took} ms`);
  const pid = Number(readFileSync(pidFile, 'utf8'));
  await new Promise((res) => setTimeout(res, 200));
  // gone, or a zombie waiting for PID 1 (which does not reap here)
  const state = existsSync(`/proc/${pid}/stat`) ? readFileSync(`/proc/${pid}/stat`, 'utf8').split(') ')[1]?.[0] : 'gone';
  t.true(state === 'gone' || state === 'Z', `the grandchild is ${String(state)}`);
  t.true(existsSync(out));
});

test('SIGTERM stops a live recording at once and still writes a valid file', async (t) => {
  const out = join(dir, 'term.parquet');
  const child = spawn(process.execPath, rezolusArgv('record', '--nats', server.url, '--host', 'fixture', '--interval', '200ms', '--log-level', 'info', '-o', out), {
    cwd: ROOT,
    stdio: ['ignore', 'ignore', 'pipe'],
  });
  let stderr = '';
  child.stderr.on('data', (d: Buffer) => (stderr += d.toString()));
  // recording once it logs so (a loaded machine may take seconds to start it), then 1.5 s of rows
  const deadline = Date.now() + 30_000;
  while (!stderr.includes('"msg":"recording"') && Date.now() < deadline) await new Promise((r) => setTimeout(r, 50));
  await new Promise((r) => setTimeout(r, 1500));
  const sent = Date.now();
  child.kill('SIGTERM');
  const code = await new Promise<number | null>((r) => child.once('exit', (c) => r(c)));
  t.is(code, 143);
  // not waiting for anything but its own file (no duration was given: without the signal it would run on)
  t.true(Date.now() - sent < 15_000, `stopped ${Date.now() - sent} ms after the signal`);
  const con = await (await DuckDBInstance.create(':memory:')).connect();
  const [row] = (await con.runAndReadAll(`SELECT count(*) AS n FROM read_parquet('${out}')`)).getRowObjects();
  t.true(Number(row?.n) >= 3, `${String(row?.n)} rows`);
});

test('rezolus hindsight snapshot --last writes the last window once', async (t) => {
  await new Promise((r) => setTimeout(r, 1500));
  const out = join(dir, 'snap.parquet');
  const r = await record(['--last', '1s', '--host', 'fixture', '--interval', '250ms', '-o', out], ['hindsight', 'snapshot']);
  t.is(r.code, 0, r.stderr);
  const con = await (await DuckDBInstance.create(':memory:')).connect();
  const rows = (await con.runAndReadAll(`SELECT "cpu_usage/user/0" AS user0 FROM read_parquet('${out}')`)).getRowObjects();
  t.true(rows.length >= 3 && rows.length <= 6, `${rows.length} rows for 1 s at 250 ms`);
  t.true(rows.every((row) => row.user0 === 20_230_000_000n));
  const tooFar = await record(['--last', '1h', '--host', 'fixture', '-o', join(dir, 'far.parquet')], ['hindsight', 'snapshot']);
  t.is(tooFar.code, 1);
  t.regex(tooFar.stderr, /Raise \[stream\] max_age/);
});
