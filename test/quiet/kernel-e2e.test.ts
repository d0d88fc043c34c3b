import test from 'ava';
import { spawn } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { ROOT } from '../../scripts/gen-docs.js';
import { runAgent, type RunningAgent } from '../../src/agent/main.js';
import { loadAgentConfig } from '../../src/config/agent.js';
import { loadExporterConfig } from '../../src/config/exporter.js';
import { runExporter, type RunningExporter } from '../../src/exporter/main.js';
import { silentLogger } from '../../src/log/logger.js';
import { SAMPLER_NAMES, SAMPLERS } from '../../src/samplers/registry.js';
import { Duck } from '../helpers/duckdb.js';
import { checkExposition } from '../helpers/exposition-check.js';
import { startTestNats, type TestNats } from '../helpers/nats.js';
import { promtoolCheck } from '../helpers/promtool.js';
import { rezolusArgv } from '../helpers/rezolus-cli.js';

// Every kernel sampler in a real agent, over a real nats-server, to the
// exporter (Prometheus text, checked by promtool) and to a Parquet recording
// (read back by DuckDB): the eBPF histograms need no special case anywhere.

const HOST = 'kernel-e2e';
const KERNEL = SAMPLERS.filter((s) => s.kernel).map((s) => s.name);
let server: TestNats;
let agent: RunningAgent;
let exporter: RunningExporter;
let dir: string;

test.before(async () => {
  server = await startTestNats();
  dir = mkdtempSync(join(tmpdir(), 'rezolus-kernel-e2e-'));
  const base = loadAgentConfig(undefined, SAMPLER_NAMES, { host: HOST, natsUrl: server.url });
  const on = [...KERNEL, 'cpu_usage'];
  const samplers = Object.fromEntries(SAMPLER_NAMES.map((n) => [n, { enabled: on.includes(n), intervalMs: 500 }]));
  agent = await runAgent({ ...base, samplers, http: undefined }, silentLogger());
  exporter = await runExporter(
    loadExporterConfig(undefined, { natsUrl: server.url, listen: { host: '127.0.0.1', port: 0 }, hosts: HOST, intervalMs: 1000 }),
    silentLogger(),
  );
});

test.after.always(async () => {
  await exporter?.stop();
  await agent?.stop();
  await server?.dispose();
  if (dir !== undefined) rmSync(dir, { recursive: true, force: true });
});

test.serial('every kernel sampler is active or degraded with a reason (none failed)', (t) => {
  for (const s of agent.agent.status().filter((x) => KERNEL.includes(x.name))) {
    t.true(s.status.state === 'active' || s.status.state === 'degraded', `${s.name}: ${JSON.stringify(s.status)}`);
  }
  const perf = agent.agent.status().find((s) => s.name === 'cpu_perf')?.status;
  t.log(`cpu_perf: ${JSON.stringify(perf)}`);
});

test.serial('the exporter serves the kernel histograms as percentiles, and promtool accepts the exposition', async (t) => {
  const want = [
    /^scheduler_runqueue_latency_seconds\{host="kernel-e2e",percentile="0\.99"\} \d/m,
    /^syscall_latency_seconds\{host="kernel-e2e",op="query",percentile="0\.5"\} \d/m,
    /^syscall_total\{host="kernel-e2e",op="read"\} [1-9]/m,
    /^scheduler_context_switch_total\{host="kernel-e2e",id="0",kind="voluntary"\} [1-9]/m,
  ];
  let text = '';
  const deadline = Date.now() + 15_000;
  while (Date.now() < deadline) {
    text = (await exporter.app.inject({ method: 'GET', url: '/metrics' })).body;
    if (want.every((re) => re.test(text))) break;
    await new Promise((r) => setTimeout(r, 200));
  }
  for (const re of want) t.regex(text, re);
  t.deepEqual(checkExposition(text), []);
  const lint = promtoolCheck(text);
  if (lint === undefined) return t.fail('promtool is missing (apt-get install prometheus)');
  t.is(lint.status, 0, lint.output);
});

test.serial('a recording has the histograms as 496-bucket lists whose counts grow', async (t) => {
  const out = join(dir, 'kernel.parquet');
  const r = await new Promise<{ code: number | null; stderr: string }>((resolve) => {
    const child = spawn(
      process.execPath,
      rezolusArgv('record', '--nats', server.url, '--host', HOST, '--interval', '500ms', '--duration', '3s', '-o', out, '--log-level', 'warn'),
      { cwd: ROOT, stdio: ['ignore', 'ignore', 'pipe'] },
    );
    let stderr = '';
    child.stderr.on('data', (d: Buffer) => (stderr += d.toString()));
    child.once('exit', (code) => resolve({ code, stderr }));
  });
  t.is(r.code, 0, r.stderr);
  const duck = await Duck.open();
  const rows = await duck.rows(
    `SELECT len("scheduler_runqueue_latency") AS buckets, list_sum("scheduler_runqueue_latency") AS n, "syscall/read" AS reads
     FROM read_parquet('${out}') WHERE "scheduler_runqueue_latency" IS NOT NULL ORDER BY timestamp`,
  );
  t.true(rows.length >= 3, `${rows.length} rows`);
  t.true(rows.every((row) => Number(row.buckets) === 496));
  const first = rows[0]!;
  const last = rows[rows.length - 1]!;
  t.true(Number(last.n) > Number(first.n), 'runqueue latency events accumulate');
  t.true(Number(last.reads) > Number(first.reads), 'read syscalls accumulate');
  const meta = await duck.columnMeta(out, 'scheduler_runqueue_latency');
  t.like(meta, { grouping_power: '3', max_value_power: '64' });
});
