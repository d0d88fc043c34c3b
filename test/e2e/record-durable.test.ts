import test from 'ava';
import { DeliverPolicy, jetstream, jetstreamManager } from '@nats-io/jetstream';
import { connect } from '@nats-io/transport-node';
import { spawn, type ChildProcess } from 'node:child_process';
import { existsSync, mkdtempSync, readdirSync, rmSync, statSync } from 'node:fs';
import { createServer, connect as tcpConnect, type AddressInfo, type Server, type Socket } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { ROOT } from '../../scripts/gen-docs.js';
import { loadAgentConfig } from '../../src/config/agent.js';
import { SAMPLER_NAMES } from '../../src/samplers/registry.js';
import { Duck } from '../helpers/duckdb.js';
import { startTestNats, type TestNats } from '../helpers/nats.js';
import { messageFrames } from '../helpers/stream.js';
import { until } from '../helpers/until.js';
import { publishOnSchedule, SimFleet } from '../helpers/sim-fleet.js';
import { Spool } from '../../src/spool/spool.js';
import { decodeFrame } from '../../src/frame/codec.js';
import { rezolusArgv } from '../helpers/rezolus-cli.js';

const PERIOD_MS = 100;
const PERIOD_NS = BigInt(PERIOD_MS) * 1_000_000n;
const HOSTS = 100;
/** cpu_usage/user/0 in the fixture's /proc/stat, in ns */
const USER0 = 20_230_000_000n;

let server: TestNats;
let fleet: SimFleet;
let dir: string;
let publisher: { stop(): Promise<void> } | undefined;
const children = new Set<ChildProcess>();

test.before(async () => {
  server = await startTestNats();
  dir = mkdtempSync(join(tmpdir(), 'rezolus-record-durable-'));
  const agent = loadAgentConfig(undefined, SAMPLER_NAMES, { host: 'sim', natsUrl: server.url });
  // ticks end on 100 ms boundaries, so a row at boundary T holds tick (T - start) / 100 ms exactly
  const now = BigInt(Date.now()) * 1_000_000n;
  fleet = await SimFleet.start({ natsUrl: server.url, hosts: HOSTS, agent, samplers: ['cpu_usage', 'memory_meminfo'], startNs: now - (now % PERIOD_NS), periodNs: PERIOD_NS });
  // a publisher at a known rate: tick t is published when its end time has come
  publisher = publishOnSchedule(fleet, { everyMs: PERIOD_MS / 4 });
});

test.after.always(async () => {
  await publisher?.stop();
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

function startRecord(args: readonly string[], natsUrl = server.url): Run {
  const child = spawn(process.execPath, rezolusArgv('record', '--nats', natsUrl, '--log-level', 'info', ...args), {
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
  t.log(`resumed from ${resumed.map((r) => String(r?.spooledMessages)).join(', ')} spooled frames in ${resumed.map((r) => String(r?.resumeMs)).join(', ')} ms`);

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
  // a frame spooled since the resume (a loaded machine may have spooled none before the kill)
  const spooled = statSync(`${out}.spool`).size;
  t.true(await until(() => statSync(`${out}.spool`).size > spooled, 30_000), 'the resumed recorder spools frames');
  again.child.kill('SIGTERM');
  const e3 = await again.exited;
  t.is(e3.code, 143, again.stderr);
  const [row] = await (await Duck.open()).rows(`SELECT count(*) AS n FROM read_parquet('${out}')`);
  t.true(Number(row?.n) >= 1, `${String(row?.n)} rows`);
  t.deepEqual(readdirSync(dir).filter((f) => f.startsWith('args.parquet') || f.startsWith('elsewhere')), ['args.parquet']);
});

test.serial('record --durable killed after its file was in place (spool marked done) only finishes the clean-up on restart', async (t) => {
  const out = join(dir, 'done.parquet');
  // a window far longer than a loaded machine takes to start the recorder
  const args = ['--durable', 'rec3', '--hosts', 'sim-003', '--interval', '100ms', '--duration', '120s', '-o', out];
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
  t.true(Date.now() - began < 60_000, `at once, not after the 120 s window (${Date.now() - began} ms)`);
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

/**
 * A TCP proxy to the test server for one client: drop() cuts every connection through it (what a
 * network blip does to the recorder alone; the server and the publishers stay up) and refuses new
 * ones for `downMs`.
 */
const LATENCY_MS = 20;
async function startProxy(): Promise<{ url: string; drop(downMs: number): void; close(): Promise<void> }> {
  const sockets = new Set<Socket>();
  let downUntil = 0;
  const proxy: Server = createServer((client) => {
    if (Date.now() < downUntil) {
      client.destroy();
      return;
    }
    const upstream = tcpConnect(server.port, '127.0.0.1');
    sockets.add(client).add(upstream);
    const end = (): void => {
      client.destroy();
      upstream.destroy();
      sockets.delete(client);
      sockets.delete(upstream);
    };
    for (const s of [client, upstream]) s.on('error', end).on('close', end);
    client.pipe(upstream);
    // the server's bytes reach the client LATENCY_MS late, as over a real network: a drop loses
    // what is on the way, which the server counts as delivered
    upstream.on('data', (chunk: Buffer) => {
      setTimeout(() => {
        if (!client.destroyed) client.write(chunk);
      }, LATENCY_MS);
    });
  });
  await new Promise<void>((r) => proxy.listen(0, '127.0.0.1', () => r()));
  return {
    url: `nats://127.0.0.1:${(proxy.address() as AddressInfo).port}`,
    drop(downMs) {
      downUntil = Date.now() + downMs;
      for (const s of sockets) s.destroy();
    },
    close: () => new Promise<void>((r) => {
      for (const s of sockets) s.destroy();
      proxy.close(() => r());
    }),
  };
}

test.serial('record --durable whose connection drops while frames flow records every frame of its window exactly once', async (t) => {
  const out = join(dir, 'blip.parquet');
  const proxy = await startProxy();
  // an exact window, so that the stream can be asked what it holds in it
  const sinceMs = Date.now();
  const untilMs = sinceMs + 11_000;
  const iso = (ms: number): string => new Date(ms).toISOString();
  const run = startRecord(['--durable', 'blip', '--hosts', 'sim-*', '--interval', '100ms', '--since', iso(sinceMs), '--until', iso(untilMs), '-o', out], proxy.url);
  await waitFor(run, '"msg":"recording"');
  const began = Date.now();
  // five drops while it catches up and then keeps up, at different points of the 100 ms publishing
  // cycle; two refuse the reconnect for a while, so frames pile up meanwhile
  const drops = [
    { atMs: 200, downMs: 0 },
    { atMs: 1550, downMs: 300 },
    { atMs: 3200, downMs: 0 },
    { atMs: 4700, downMs: 1200 },
    { atMs: 7600, downMs: 0 },
  ];
  for (const d of drops) {
    await new Promise((r) => setTimeout(r, Math.max(0, began + d.atMs - Date.now())));
    proxy.drop(d.downMs);
  }
  const e = await run.exited;
  await proxy.close();
  t.is(e.code, 0, run.stderr);
  const disconnects = run.stderr.split('\n').filter((l) => l.includes('"msg":"disconnected from NATS"')).length;
  t.true(disconnects >= drops.length, `the recorder saw ${disconnects} disconnects`);

  // what the stream holds in the window, by sampler: the frames that ended in it (frame time, the bounds moved
  // down to a 100 ms row: src/sources/window-end.ts), stored from a while before it to a while after
  const sinceNs = (BigInt(sinceMs) * 1_000_000n / PERIOD_NS) * PERIOD_NS;
  const untilNs = (BigInt(untilMs) * 1_000_000n / PERIOD_NS) * PERIOD_NS;
  const nc = await connect({ servers: server.url });
  const c = await jetstream(nc).consumers.get('REZOLUS', { deliver_policy: DeliverPolicy.StartTime, opt_start_time: iso(sinceMs - 5000) });
  const stored = new Map<string, number>();
  const msgs = await c.consume({ max_messages: 5000 });
  for await (const m of msgs) {
    if (BigInt(m.info.timestampNanos) > untilNs + 10_000_000_000n) break;
    for (const bytes of messageFrames(m.subject, m.data)) {
      const f = decodeFrame(bytes);
      if (f.endNs > sinceNs && f.endNs <= untilNs) stored.set(f.sampler, (stored.get(f.sampler) ?? 0) + 1);
    }
    if (m.info.pending === 0) break;
  }
  await msgs.close();
  await nc.close();

  const duck = await Duck.open();
  const [r] = await duck.rows(
    `SELECT count(*) AS rows, count(DISTINCT (host, timestamp)) AS distinct_rows, count(DISTINCT host) AS hosts FROM read_parquet('${out}')`,
  );
  const recorded = logLine(run, 'recorded');
  t.log(run.stderr.split('\n').filter((l) => /recreated|retrying|torn|descriptor lookup/.test(l)).map((l) => l.slice(0, 300)).join('\n'));
  t.log(`stream holds ${[...stored].map(([k, v]) => `${v} ${k}`).join(', ')} frames in the window; the file: ${String(r?.rows)} rows; ${disconnects} disconnects, consumer recreated ${String(recorded?.consumerRecreated)} times; the recorder took ${String(recorded?.frames)} frames`);
  const inWindow = [...stored.values()].reduce((a, b) => a + b, 0);
  t.is(recorded?.frames, inWindow, 'the recorder took every frame the stream holds in the window, once');
  t.is(Number(r?.hosts), HOSTS, 'every host');
  t.is(Number(r?.distinct_rows), Number(r?.rows), 'no duplicate row');
  t.true(inWindow > HOSTS * 2 * 70, 'the window holds frames');
  // a row takes the newest frame of each sampler: a lost cpu_usage frame shows as a row with the
  // values of the tick before, two lost frames of a tick as a missing row
  const rows = await duck.rows(`SELECT host, timestamp, "cpu_usage/user/0" AS user0 FROM read_parquet('${out}') ORDER BY host, timestamp`);
  const wrong = rows.filter((row) => row.user0 !== USER0 + 1000n * (((row.timestamp as bigint) - fleet.startNs) / PERIOD_NS) + BigInt(Number((row.host as string).slice(4)))).length;
  t.is(wrong, 0, 'every row holds the values published for its time');
  const byHost = new Map<string, bigint[]>();
  for (const row of rows) (byHost.get(row.host as string) ?? byHost.set(row.host as string, []).get(row.host as string))?.push(row.timestamp as bigint);
  const gaps = [...byHost].filter(([, ts]) => Number((ts.at(-1) as bigint) - (ts[0] as bigint)) / Number(PERIOD_NS) + 1 !== ts.length).map(([h]) => h);
  t.deepEqual(gaps, [], 'no host has a gap');
  t.deepEqual(readdirSync(dir).filter((f) => f.startsWith('blip.parquet')), ['blip.parquet'], 'no spool or temporary file left');
});
