import test, { type ExecutionContext } from 'ava';
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { runAgent, type RunningAgent } from '../../src/agent/main.js';
import { loadAgentConfig } from '../../src/config/agent.js';
import { loadExporterConfig } from '../../src/config/exporter.js';
import { runExporter, type RunningExporter } from '../../src/exporter/main.js';
import { silentLogger } from '../../src/log/logger.js';
import { SAMPLER_NAMES } from '../../src/samplers/registry.js';
import { fixture, NO_KERNEL, PROC, SYS } from '../helpers/fixtures.js';
import { startTestNats, type TestNats } from '../helpers/nats.js';
import { startPrometheus, type PromSample, type TestPrometheus } from '../helpers/prometheus.js';

// A real Prometheus scrapes the exporter, which follows the agent reading the
// fixture root over NATS; the values come back through PromQL. Expected values
// are computed here from the fixture files, not copied from the golden file.

const HOST = 'fixture';
const JOB = 'rezolus';
/** the unit of the /proc/stat cpu columns, fixed at 100 by the kernel ABI */
const USER_HZ = 100;
const STAT_COLUMNS = ['user', 'nice', 'system', 'idle', 'iowait', 'irq', 'softirq', 'steal', 'guest', 'guest_nice'];
/** Prometheus applies static targets after a fixed ~5 s; then up to one interval of jitter */
const FIRST_SCRAPE_MS = 30_000;

let server: TestNats | undefined;
let agent: RunningAgent | undefined;
let exporter: RunningExporter | undefined;
let prom: TestPrometheus | undefined;
/** host:port Prometheus scrapes, also its instance label */
let target = '';
/** samples with host="fixture" in the exporter's /metrics once all samplers are in */
let agentSamples = 0;
const timings: Record<string, number> = {};

function memTotalBytes(): number {
  const m = /^MemTotal:\s+(\d+) kB$/m.exec(fixture('rootfs/proc/meminfo'));
  if (m === null) throw new Error('no MemTotal in the fixture meminfo');
  return Number(m[1]) * 1024;
}

/** `${id}/${state}` -> seconds, from the per-CPU lines of the fixture /proc/stat */
function perCpuSeconds(): Record<string, number> {
  const out: Record<string, number> = {};
  for (const line of fixture('rootfs/proc/stat').split('\n')) {
    const m = /^cpu(\d+) (.*)$/.exec(line);
    if (m === null) continue;
    m[2]!.trim().split(/\s+/).forEach((ticks, i) => {
      out[`${m[1]}/${STAT_COLUMNS[i]}`] = Number(ticks) / USER_HZ;
    });
  }
  return out;
}

/** The single sample of r; a failed assertion (and a NaN sample) when there is not exactly one. */
function only(t: ExecutionContext, r: PromSample[], what: string): PromSample {
  t.is(r.length, 1, `${what}: ${JSON.stringify(r)}`);
  return r[0] ?? { metric: {}, raw: '', value: Number.NaN, timestamp: 0 };
}

test.before(async () => {
  const t0 = Date.now();
  server = await startTestNats();
  const base = loadAgentConfig(undefined, SAMPLER_NAMES, { host: HOST, natsUrl: server.url });
  // rezolus_self measures this process, which is not deterministic
  const samplers = { ...base.samplers, rezolus_self: { enabled: false, intervalMs: 1000 } };
  agent = await runAgent({ ...base, procfs: PROC, sysfs: SYS, kernel: NO_KERNEL, samplers }, silentLogger());
  exporter = await runExporter(
    loadExporterConfig(undefined, { natsUrl: server.url, listen: { host: '127.0.0.1', port: 0 }, hosts: HOST, intervalMs: 1000 }),
    silentLogger(),
  );
  target = new URL(exporter.url).host;
  timings.pipelineUp = (Date.now() - t0) / 1000;
  // Prometheus first: its fixed delay before the first scrape overlaps the wait for the samplers
  prom = await startPrometheus({ targets: [target], scrapeIntervalMs: 1000, jobName: JOB });
  timings.prometheusReady = prom.readySeconds;

  const active = agent.agent.status().filter((s) => s.status.state === 'active').length;
  const deadline = Date.now() + 10_000;
  while (exporter.state.size < active && Date.now() < deadline) {
    await agent.agent.tickOnce();
    await new Promise((r) => setTimeout(r, 100));
  }
  if (exporter.state.size < active) throw new Error(`only ${exporter.state.size} of ${active} samplers reached the exporter`);
  const text = await (await fetch(exporter.url)).text();
  agentSamples = text.split('\n').filter((l) => !l.startsWith('#') && l.includes(`host="${HOST}"`)).length;

  // Wait for a scrape that saw every sampler; the tests below then query without waiting. (The
  // exposition only grows from here: percentile gauges join once a window of frames exists.)
  await prom.waitFor(`count({job="${JOB}",host="${HOST}"})`, (r) => (r[0]?.value ?? 0) >= agentSamples, FIRST_SCRAPE_MS);
  timings.firstCompleteScrape = (Date.now() - t0) / 1000;
});

test.after.always(async () => {
  await prom?.dispose();
  await exporter?.stop();
  await agent?.stop();
  await server?.dispose();
});

test.serial('Prometheus scrapes the exporter: up is 1', async (t) => {
  t.log(`pipeline up ${timings.pipelineUp}s, prometheus ready ${timings.prometheusReady}s, first complete scrape ${timings.firstCompleteScrape}s`);
  const up = only(t, await prom!.query(`up{job="${JOB}"}`), 'up');
  t.deepEqual(up.metric, { __name__: 'up', instance: target, job: JOB });
  t.is(up.value, 1);
});

test.serial('memory_total_bytes is the fixture MemTotal in bytes', async (t) => {
  const expected = memTotalBytes();
  t.is(expected, 25_276_502_016);
  const s = only(t, await prom!.query(`memory_total_bytes{host="${HOST}"}`), 'memory_total_bytes');
  t.deepEqual(s.metric, { __name__: 'memory_total_bytes', host: HOST, instance: target, job: JOB });
  t.is(s.value, expected);
});

test.serial('cpu_usage_seconds_total is every fixture /proc/stat per-CPU column in seconds', async (t) => {
  const expected = perCpuSeconds();
  t.is(Object.keys(expected).length, 20, 'two CPUs x ten columns in the fixture');
  t.is(expected['0/user'], 20.23);
  const r = await prom!.query(`cpu_usage_seconds_total{host="${HOST}"}`);
  const got: Record<string, number> = {};
  for (const s of r) {
    t.deepEqual(Object.keys(s.metric).sort(), ['__name__', 'host', 'id', 'instance', 'job', 'state']);
    t.is(s.metric.instance, target);
    got[`${s.metric.id}/${s.metric.state}`] = s.value;
  }
  t.is(r.length, 20);
  t.deepEqual(got, expected);
});

test.serial('PromQL over our series: one CPU per cpu_cores', async (t) => {
  const cores = only(t, await prom!.query(`cpu_cores{host="${HOST}"}`), 'cpu_cores');
  t.is(cores.value, 2, 'fixture /sys/devices/system/cpu/online is 0-1');
  const ids = only(t, await prom!.query(`count(count by (id) (cpu_usage_seconds_total{host="${HOST}"}))`), 'count of ids');
  t.is(ids.value, cores.value);
});

test.serial('Prometheus stored every sample of the last scrape as its own series', async (t) => {
  const golden = fixture('../golden/fixture-rootfs.prom').split('\n').filter((l) => l !== '' && !l.startsWith('#')).length;
  t.true(agentSamples >= golden, `${agentSamples} fixture samples exposed, the golden file has ${golden}`);
  const scraped = only(t, await prom!.query(`scrape_samples_scraped{job="${JOB}"}`), 'scrape_samples_scraped');
  t.true(scraped.value > agentSamples, `${scraped.value} samples per scrape, the exporter's own included`);
  // One evaluation, so both sides come from the same scrape (Prometheus commits a scrape at once):
  // a duplicate or rejected sample would leave fewer series than samples.
  const diff = only(
    t,
    await prom!.query(`scrape_samples_scraped{job="${JOB}"} - on (job, instance) count by (job, instance) ({job="${JOB}",__name__!~"up|scrape_.+"})`),
    'samples minus series',
  );
  t.is(diff.value, 0);
});

test('dispose stops Prometheus and removes its temp dir', async (t) => {
  const other = await startPrometheus({ targets: [target], jobName: 'disposable' });
  t.true(existsSync(join(other.dir, 'prometheus.yml')));
  t.true(existsSync(join(other.dir, 'data')), 'the TSDB lives in the temp dir');
  t.true(existsSync(`/proc/${other.pid}`));
  const t0 = Date.now();
  await other.dispose();
  t.log(`ready in ${other.readySeconds}s, dispose took ${(Date.now() - t0) / 1000}s`);
  t.false(existsSync(`/proc/${other.pid}`), 'process gone (reaped)');
  t.false(existsSync(other.dir));
  await t.throwsAsync(fetch(`${other.url}/-/ready`));
});
