import test from 'ava';
import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { connect } from '@nats-io/transport-node';
import { Kvm } from '@nats-io/kv';
import { runAgent, type RunningAgent } from '../../src/agent/main.js';
import { loadAgentConfig } from '../../src/config/agent.js';
import { loadExporterConfig } from '../../src/config/exporter.js';
import { encodeFrame } from '../../src/frame/codec.js';
import { runExporter, type RunningExporter } from '../../src/exporter/main.js';
import { silentLogger } from '../../src/log/logger.js';
import { SAMPLER_NAMES, SAMPLERS } from '../../src/samplers/registry.js';
import { checkExposition } from '../helpers/exposition-check.js';
import { FIXTURE_ROOT, NO_KERNEL, PROC, SYS } from '../helpers/fixtures.js';
import { startTestNats, type TestNats } from '../helpers/nats.js';
import { promtoolCheck } from '../helpers/promtool.js';

const GOLDEN = join(FIXTURE_ROOT, '..', 'golden', 'fixture-rootfs.prom');
const UPDATE = process.env.REZOLUS_UPDATE_GOLDEN === '1';

let server: TestNats;
let agent: RunningAgent;
let exporter: RunningExporter;

async function scrape(): Promise<string> {
  const r = await exporter.app.inject({ method: 'GET', url: '/metrics' });
  return r.body;
}

/** The exposition without the exporter's own and process families, whose values depend on timing. */
function agentPart(text: string): string {
  return text
    .split('\n')
    .filter((l) => !/^(# (HELP|TYPE) )?(rezolus_exporter_|process_|nodejs_)/.test(l))
    .join('\n');
}

test.before(async () => {
  server = await startTestNats();
  const base = loadAgentConfig(undefined, SAMPLER_NAMES, { host: 'fixture', natsUrl: server.url });
  // rezolus_self measures this process, which is not deterministic
  const samplers = { ...base.samplers, rezolus_self: { enabled: false, intervalMs: 1000 } };
  agent = await runAgent({ ...base, procfs: PROC, sysfs: SYS, kernel: NO_KERNEL, samplers }, silentLogger());
  exporter = await runExporter(
    // rates between fixture frames are 0 and their presence depends on timing: tested elsewhere
    loadExporterConfig(undefined, { natsUrl: server.url, listen: { host: '127.0.0.1', port: 0 }, hosts: 'fixture', oversampleMetrics: [] }),
    silentLogger(),
  );
  const active = agent.agent.status().filter((s) => s.status.state === 'active').length;
  const deadline = Date.now() + 10_000;
  while (exporter.state.size < active && Date.now() < deadline) {
    await agent.agent.tickOnce();
    await new Promise((r) => setTimeout(r, 100));
  }
});

test.after.always(async () => {
  await exporter?.stop();
  await agent?.stop();
  await server?.dispose();
});

test.serial('agent on the fixture root -> NATS -> exporter equals the golden exposition', async (t) => {
  t.is(exporter.state.size, 9, 'all nine procfs/sysfs samplers arrived');
  const text = agentPart(await scrape());
  if (UPDATE || !existsSync(GOLDEN)) {
    writeFileSync(GOLDEN, text);
    t.log(`wrote ${GOLDEN}`);
  }
  t.is(text, readFileSync(GOLDEN, 'utf8'), 'exposition differs from test/golden/fixture-rootfs.prom (npm test -- --update rewrites it)');
  t.regex(text, /^cpu_usage_seconds_total\{host="fixture",state="user",id="0"\} \d/m);
  t.regex(text, /^memory_total_bytes\{host="fixture"\} \d+$/m);
});

test.serial('the exposition passes promtool and our own checks', async (t) => {
  const text = await scrape();
  t.deepEqual(checkExposition(text), []);
  const r = promtoolCheck(text);
  if (r === undefined) t.fail('promtool is missing (apt-get install prometheus)');
  else t.is(r.status, 0, r.output);
});

test.serial('garbage frames and unknown descriptors are skipped and counted, never a crash', async (t) => {
  const nc = await connect({ servers: server.url });
  nc.publish('rezolus.metrics.fixture.garbage', new TextEncoder().encode('not msgpack at all'));
  nc.publish('rezolus.metrics.fixture.bogus', encodeFrame(
    { host: 'fixture', sampler: 'bogus', instance: 7, seq: 1, beginNs: 1n, endNs: 2n, descriptor: 'ffffffffffffffff' },
    [1, 2, 3],
  ));
  await nc.flush();
  await nc.close();
  const deadline = Date.now() + 5000;
  let text = '';
  while (Date.now() < deadline) {
    text = await scrape();
    if (/reason="unknown_descriptor"\} 1/.test(text) && /reason="garbage"\} [1-9]/.test(text)) break;
    await new Promise((r) => setTimeout(r, 100));
  }
  t.regex(text, /^rezolus_exporter_frames_skipped_total\{reason="garbage"\} 1$/m);
  t.regex(text, /^rezolus_exporter_frames_skipped_total\{reason="unknown_descriptor"\} 1$/m);
  t.regex(text, /^memory_total_bytes\{host="fixture"\} \d+$/m, 'still serving the good frames');
});

test.serial('the agent reports each sampler\'s state in KV rezolus_status', async (t) => {
  const nc = await connect({ servers: server.url });
  const kv = await new Kvm(nc).open('rezolus_status');
  let doc: { host: string; samplers: { name: string; state: string; reason?: string }[] } | undefined;
  const deadline = Date.now() + 5000;
  while (doc === undefined && Date.now() < deadline) {
    const e = await kv.get('fixture');
    if (e !== null && e.value.length > 0) doc = e.json();
    else await new Promise((r) => setTimeout(r, 100));
  }
  await nc.close();
  if (doc === undefined) return t.fail('no status for host fixture');
  t.is(doc.host, 'fixture');
  const states = Object.fromEntries(doc.samplers.map((s) => [s.name, s.state]));
  const procfs = {
    blockio_diskstats: 'active', cgroup_resources: 'active', cpu_cores: 'active', cpu_usage: 'active', memory_meminfo: 'active', memory_vmstat: 'active',
    network_interfaces: 'active', network_protocols: 'active', rezolus_self: 'disabled', scheduler_procs: 'active',
  };
  const kernel = SAMPLERS.filter((s) => s.kernel).map((s) => s.name);
  t.true(kernel.includes('scheduler_runqueue'));
  t.deepEqual(states, { ...procfs, ...Object.fromEntries(kernel.map((n) => [n, 'disabled'])) });
  t.is(doc.samplers.find((s) => s.name === 'rezolus_self')?.reason, 'disabled in config');
  t.is(doc.samplers.find((s) => s.name === 'scheduler_runqueue')?.reason, 'kernel samplers are off ([kernel] enabled = false)');
});
