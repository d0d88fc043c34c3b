/**
 * `rezolus record --durable` across a server that loses its store: the
 * stream is gone for a while, then the agent creates it again and its
 * sequence numbers start over at 1. The recorder waits for the stream,
 * takes the new one for a new stream (a spool epoch), records every frame
 * of it, keeps every frame it spooled from the old one, and a SIGKILL and
 * resume after the loss give the same file as a recorder that ran through.
 */
import test from 'ava';
import { DeliverPolicy, jetstream, jetstreamManager } from '@nats-io/jetstream';
import { spawn, type ChildProcess } from 'node:child_process';
import { mkdtempSync, readFileSync, readdirSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { ROOT } from '../../scripts/gen-docs.js';
import { runAgent } from '../../src/agent/main.js';
import { connectBus } from '../../src/bus/connect.js';
import { loadAgentConfig } from '../../src/config/agent.js';
import { silentLogger } from '../../src/log/logger.js';
import { runRecord } from '../../src/record/main.js';
import { decodeRecord, SPOOL_MAGIC, type SpoolRecord } from '../../src/spool/spool-format.js';
import { SAMPLER_NAMES } from '../../src/samplers/registry.js';
import { Duck } from '../helpers/duckdb.js';
import { NO_KERNEL, PROC, SYS } from '../helpers/fixtures.js';
import { startTestNats, type TestNats } from '../helpers/nats.js';
import { capturingLogger } from '../helpers/security.js';
import { until } from '../helpers/until.js';
import { rezolusArgv } from '../helpers/rezolus-cli.js';

const sleep = (ms: number): Promise<void> => new Promise((r) => setTimeout(r, ms));
const iso = (ms: number): string => new Date(ms).toISOString();
const WARN = 40;

function agentConfig(host: string, url: string, intervalMs: number) {
  const config = loadAgentConfig(undefined, SAMPLER_NAMES, { host, natsUrl: url, intervalMs });
  // a message per frame ([stream] bundle = false): the spools are compared with the stream frame by frame
  return { ...config, procfs: PROC, sysfs: SYS, kernel: NO_KERNEL, http: undefined, bundle: false };
}

/** Kills a server with kill -9 and starts an empty one (a new store) on the same port. */
async function replaceWithEmpty(server: TestNats): Promise<TestNats> {
  server.process.kill('SIGKILL');
  await new Promise((r) => server.process.once('exit', r));
  rmSync(server.dataDir, { recursive: true, force: true });
  return startTestNats(server.port);
}

/** The whole records of a spool a recorder may still be writing (read only; a torn tail ends it). */
function spoolRecords(path: string): SpoolRecord[] {
  const buf = readFileSync(path);
  const out: SpoolRecord[] = [];
  for (let at = SPOOL_MAGIC.length; ; ) {
    const d = decodeRecord(buf, at);
    if (typeof d === 'string') return out;
    out.push(d.record);
    at = d.next;
  }
}

const frameKey = (subject: string, timeNs: bigint): string => `${subject}@${timeNs}`;

/** `subject@storeTime` of every message of `host` the stream holds with a store time in [sinceNs, untilNs]. */
async function streamFrames(url: string, host: string, sinceNs: bigint, untilNs: bigint): Promise<string[]> {
  const nc = await connectBus({ url, name: 'audit', log: silentLogger() });
  try {
    const info = await (await jetstreamManager(nc)).streams.info('REZOLUS');
    const c = await jetstream(nc).consumers.get('REZOLUS', { deliver_policy: DeliverPolicy.All });
    const out: string[] = [];
    if (info.state.messages === 0) return out;
    const it = await c.consume({ max_messages: 2000 });
    for await (const m of it) {
      const ts = BigInt(m.info.timestampNanos);
      if (m.subject.startsWith(`rezolus.metrics.${host}.`) && ts >= sinceNs && ts <= untilNs) out.push(frameKey(m.subject, ts));
      if (m.info.pending === 0) break;
    }
    await it.close();
    return out;
  } finally {
    await nc.close();
  }
}

interface Run {
  readonly child: ChildProcess;
  stderr: string;
  readonly exited: Promise<{ code: number | null; signal: NodeJS.Signals | null }>;
}

function startRecord(url: string, args: readonly string[]): Run {
  const child = spawn(process.execPath, rezolusArgv('record', '--nats', url, '--log-level', 'info', ...args), { cwd: ROOT, stdio: ['ignore', 'ignore', 'pipe'] });
  const run: Run = { child, stderr: '', exited: new Promise((resolve) => child.once('close', (code, signal) => resolve({ code, signal }))) };
  child.stderr?.on('data', (d: Buffer) => (run.stderr += d.toString()));
  return run;
}

function logLine(text: string, msg: string): Record<string, unknown> | undefined {
  const line = text.split('\n').find((l) => l.includes(`"msg":"${msg}"`));
  return line === undefined ? undefined : (JSON.parse(line) as Record<string, unknown>);
}

test.serial('record --durable rides through a server that loses its store: waits, records every frame of the new stream, keeps the old ones, and resumes after a SIGKILL to the same file', async (t) => {
  t.timeout(150_000);
  let server = await startTestNats();
  const dir = mkdtempSync(join(tmpdir(), 'rezolus-record-store-loss-'));
  const host = 'lostrec';
  const agent = await runAgent(agentConfig(host, server.url, 100), silentLogger());
  const runs: Run[] = [];
  try {
    t.true(await until(() => agent.publisher.stats.buffered === 0 && agent.agent.status().some((s) => s.seq > 3), 20_000), 'the agent publishes');
    const sinceMs = Date.now();
    const untilMs = sinceMs + 16_000;
    const sinceNs = BigInt(sinceMs) * 1_000_000n;
    const untilNs = BigInt(untilMs) * 1_000_000n;
    const window = ['--since', iso(sinceMs), '--until', iso(untilMs)];
    const outA = join(dir, 'a.parquet');
    const outB = join(dir, 'b.parquet');

    // A runs through, in process; B is a CLI recorder that is SIGKILLed after the loss and resumed
    const a = capturingLogger();
    const recA = await runRecord(
      { natsUrl: server.url, hosts: host, intervalMs: 100, durationMs: undefined, output: outA, durable: { name: 'recA', stream: 'REZOLUS', sinceNs, untilNs, durationMs: undefined, window: window.join(' ') } },
      a.log,
    );
    let failedA: unknown;
    const doneA = recA.done.catch((error: unknown) => {
      failedA = error;
      return undefined;
    });
    const argsB = ['--durable', 'recB', '--hosts', host, '--interval', '100ms', ...window, '-o', outB];
    const b1 = startRecord(server.url, argsB);
    runs.push(b1);
    t.true(await until(() => b1.stderr.includes('"msg":"recording"'), 30_000), b1.stderr);
    await sleep(3000);

    server = await replaceWithEmpty(server);
    const lossNs = BigInt(Date.now()) * 1_000_000n;
    const restartedAt = Date.now();
    t.true(await until(() => agent.publisher.stats.buffered === 0 && Date.now() - restartedAt > 1000, 30_000), 'the agent recreated the stream and flushed');
    // the recorders meet the new stream and take its frames
    await sleep(3000);
    t.is(failedA, undefined, `recorder A is still running: ${String(failedA)}`);

    b1.child.kill('SIGKILL');
    await b1.exited;
    const spoolA = spoolRecords(`${outA}.spool`);
    const spoolB = spoolRecords(`${outB}.spool`);
    const framesOf = (rs: SpoolRecord[]) => rs.flatMap((r) => (r.t === 'frame' ? [r] : []));
    const oldA = framesOf(spoolA).filter((f) => f.timeNs < lossNs);
    const oldB = framesOf(spoolB).filter((f) => f.timeNs < lossNs);
    const newB = framesOf(spoolB).filter((f) => f.timeNs >= lossNs);
    t.log(`before the loss A spooled ${oldA.length}, B ${oldB.length} frames; after it B spooled ${newB.length} before its SIGKILL; epochs: ${JSON.stringify(spoolB.filter((r) => r.t === 'epoch'))}`);
    t.true(oldB.length > 50, 'frames before the loss');
    // every frame of the new stream up to the last one B spooled is in B's spool, once
    const lastB = newB.reduce((m, f) => (f.timeNs > m ? f.timeNs : m), 0n);
    const inNew = await streamFrames(server.url, host, sinceNs, lastB === 0n ? untilNs : lastB);
    t.true(inNew.length > 50, `the new stream holds ${inNew.length} frames of ${host}`);
    t.deepEqual(newB.map((f) => frameKey(f.subject, f.timeNs)).sort(), lastB === 0n ? [] : [...inNew].sort(), 'B spooled every frame of the new stream up to its kill, once');
    t.true(newB.length > 0, `B spooled frames of the new stream (${newB.length})`);
    const seqs = framesOf(spoolB).map((f) => f.seq);
    t.true(seqs.every((s, i) => i === 0 || s > (seqs[i - 1] ?? 0)), 'spool sequences only grow');

    const b2 = startRecord(server.url, argsB);
    runs.push(b2);
    const [eB] = await Promise.all([b2.exited, doneA]);
    t.is(eB.code, 0, b2.stderr);
    t.is(failedA, undefined, `recorder A ended well: ${String(failedA)}`);
    const warned = a.lines.filter((l) => l.level >= WARN).map((l) => l.msg);
    t.log(`A warned: ${JSON.stringify([...new Set(warned)])}`);

    // every frame of the new stream in the window is spooled, next to the old ones: nothing lost, nothing twice
    const allNew = await streamFrames(server.url, host, sinceNs, untilNs);
    const recordedA = a.lines.find((l) => l.msg === 'recorded');
    const recordedB = logLine(b2.stderr, 'recorded');
    t.log(`new stream: ${allNew.length} frames of ${host} in the window; A spooled ${String(recordedA?.spooledMessages)}, B ${String(recordedB?.spooledMessages)}; resumed: ${JSON.stringify(logLine(b2.stderr, 'resuming'))}`);
    // and the frames stored after the window's end that each read before its window was complete (frame time,
    // src/sources/window-end.ts): up to the deadline, 2 s after the end for an agent on time
    const pastEnd = (await streamFrames(server.url, host, untilNs + 1n, untilNs + 3_000_000_000n)).length;
    for (const [name, recorded, old] of [['A', recordedA?.spooledMessages, oldA.length], ['B', recordedB?.spooledMessages, oldB.length]] as const) {
      const extra = Number(recorded) - (old + allNew.length);
      t.true(extra >= 0 && extra <= pastEnd, `${name}: the old frames and every frame of the new stream, once (${extra} read past the end, of ${pastEnd} stored in the 3 s after it)`);
    }

    const duck = await Duck.open();
    for (const out of [outA, outB]) {
      const [r] = await duck.rows(
        `SELECT count(*) FILTER (WHERE timestamp < ${lossNs}) AS before, count(*) FILTER (WHERE timestamp > ${lossNs}) AS after, count(*) - count(DISTINCT timestamp) AS dups FROM read_parquet('${out}')`,
      );
      t.log(`${out}: ${String(r?.before)} rows before the loss, ${String(r?.after)} after`);
      t.true(Number(r?.before) > 20 && Number(r?.after) > 20, `${out}: rows before and after the loss`);
      t.is(Number(r?.dups), 0, `${out}: no duplicate row`);
    }
    // the same file, unless A and B had taken different frames when the server died (then not the rows they make):
    // a row holds each sampler's newest frame, so a frame one of them lost with the old stream shows in the rows
    // from its boundary (up to an interval after it was stored, which may be after lossNs when the new server
    // started fast) until its sampler's next frame (1 s later for the slowest sampler here, cgroup_resources)
    const sameOld = oldA.map((f) => frameKey(f.subject, f.timeNs)).join() === oldB.map((f) => frameKey(f.subject, f.timeNs)).join();
    const lastOld = oldA.concat(oldB).reduce((m, f) => (f.timeNs > m ? f.timeNs : m), 0n);
    const skipUntil = lastOld + 2_000_000_000n > lossNs ? lastOld + 2_000_000_000n : lossNs;
    const skip = sameOld ? '' : `WHERE timestamp NOT BETWEEN ${lastOld - 1_000_000_000n} AND ${skipUntil}`;
    if (!sameOld) t.log('A and B took different frames when the server died: rows from their last second before the loss to 2 s after it are not compared');
    const [diff] = await duck.rows(
      `SELECT (SELECT count(*) FROM (SELECT * FROM read_parquet('${outA}') ${skip} EXCEPT SELECT * FROM read_parquet('${outB}') ${skip})) AS a_only, (SELECT count(*) FROM (SELECT * FROM read_parquet('${outB}') ${skip} EXCEPT SELECT * FROM read_parquet('${outA}') ${skip})) AS b_only`,
    );
    if (Number(diff?.a_only) + Number(diff?.b_only) > 0) {
      const odd = await duck.rows(
        `SELECT 'A' AS f, timestamp::VARCHAR AS ts FROM (SELECT * FROM read_parquet('${outA}') ${skip} EXCEPT SELECT * FROM read_parquet('${outB}') ${skip}) UNION ALL SELECT 'B', timestamp::VARCHAR FROM (SELECT * FROM read_parquet('${outB}') ${skip} EXCEPT SELECT * FROM read_parquet('${outA}') ${skip})`,
      );
      t.log(`rows of one file only: ${JSON.stringify(odd)}; loss at ${lossNs}, last old frame at ${lastOld}`);
    }
    t.deepEqual([Number(diff?.a_only), Number(diff?.b_only)], [0, 0], 'the resumed recording is the same file as the one that ran through');
    t.deepEqual(readdirSync(dir).sort(), ['a.parquet', 'b.parquet'], 'no spool or lock left');
  } finally {
    for (const r of runs) if (r.child.exitCode === null && r.child.signalCode === null) r.child.kill('SIGKILL');
    await agent.stop().catch(() => undefined);
    await server.dispose();
    rmSync(dir, { recursive: true, force: true });
  }
});

test.serial('record --durable waits while the stream is gone, and stopping it meanwhile still writes the file', async (t) => {
  t.timeout(60_000);
  const server = await startTestNats();
  const dir = mkdtempSync(join(tmpdir(), 'rezolus-record-no-stream-'));
  const agent = await runAgent(agentConfig('gone', server.url, 100), silentLogger());
  const { log, lines } = capturingLogger();
  try {
    t.true(await until(() => agent.agent.status().some((s) => s.seq > 3), 20_000), 'the agent publishes');
    const out = join(dir, 'gone.parquet');
    const rec = await runRecord(
      { natsUrl: server.url, hosts: 'gone', intervalMs: 100, durationMs: undefined, output: out, durable: { name: 'gone', stream: 'REZOLUS', sinceNs: undefined, untilNs: undefined, durationMs: undefined, window: 'until stopped' } },
      log,
    );
    t.true(await until(() => rec.progress().frames > 20, 20_000), 'frames recorded');
    // the agent stops (nobody recreates the stream), then the stream is deleted
    await agent.stop();
    const nc = await connectBus({ url: server.url, name: 'rm', log: silentLogger() });
    await (await jetstreamManager(nc)).streams.delete('REZOLUS');
    await nc.close();
    t.true(await until(() => lines.some((l) => l.level >= WARN && l.msg.includes('is gone')), 20_000), 'it says it waits for the stream');
    await sleep(2500);
    t.is(lines.filter((l) => l.msg.includes('is gone')).length, 1, 'once');
    rec.stop();
    const s = await rec.done;
    t.true(s.written && s.rows > 0, `the file is written: ${s.rows} rows`);
    t.deepEqual(readdirSync(dir), ['gone.parquet']);
  } finally {
    await agent.stop().catch(() => undefined);
    await server.dispose();
    rmSync(dir, { recursive: true, force: true });
  }
});
