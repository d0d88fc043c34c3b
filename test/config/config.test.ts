import test from 'ava';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { hostname, tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { loadAgentConfig, type AgentConfig } from '../../src/config/agent.js';
import { loadExporterConfig } from '../../src/config/exporter.js';
import { loadUpConfig } from '../../src/config/up.js';
import { NO_NATS_SECURITY } from '../../src/config/nats.js';
import { parseDuration, parseSize } from '../../src/config/units.js';
import { ConfigError } from '../../src/errors.js';
import { SAMPLER_NAMES, SAMPLERS } from '../../src/samplers/registry.js';

const HERE = dirname(fileURLToPath(import.meta.url));
const REPO = join(HERE, '..', '..');
const FIXTURES = join(HERE, '..', 'fixtures', 'config');
const AGENT_FIXTURE = join(FIXTURES, 'agent.toml');
const EXPORTER_FIXTURE = join(FIXTURES, 'exporter.toml');
const UP_FIXTURE = join(FIXTURES, 'up', 'up.toml');

const TMP = mkdtempSync(join(tmpdir(), 'rezolus-config-test-'));
test.after.always(() => rmSync(TMP, { recursive: true, force: true }));

let counter = 0;
/** Writes `text` to a fresh .toml file and returns its path. */
function toml(text: string): string {
  const path = join(TMP, `case-${++counter}.toml`);
  writeFileSync(path, text);
  return path;
}

const esc = (s: string): string => s.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');

const ALL_SAMPLERS = [
  'blockio_diskstats', 'blockio_latency', 'blockio_requests', 'cgroup_resources', 'cpu_cores', 'cpu_migrations', 'cpu_perf', 'cpu_softirq',
  'cpu_usage', 'filesystem_latency', 'memory_meminfo', 'memory_vmstat', 'network_drops', 'network_interfaces',
  'network_protocols', 'network_traffic', 'rezolus_bpf', 'rezolus_self', 'scheduler_procs', 'scheduler_runqueue',
  'syscall_counts', 'syscall_latency', 'tcp_connect_latency', 'tcp_packet_latency', 'tcp_receive', 'tcp_retransmit',
];

// ---------------------------------------------------------------- agent

test('the registry has the samplers the config tests expect', (t) => {
  t.deepEqual([...SAMPLER_NAMES], ALL_SAMPLERS);
});

test('loadAgentConfig without a file gives every default', (t) => {
  const c = loadAgentConfig(undefined, SAMPLER_NAMES);
  const expected: AgentConfig = {
    file: '(defaults)',
    host: hostname(),
    procfs: '/proc',
    sysfs: '/sys',
    natsUrl: 'nats://127.0.0.1:4222',
    nats: NO_NATS_SECURITY,
    logLevel: 'info',
    samplers: Object.fromEntries(ALL_SAMPLERS.map((n) => [n, { enabled: true, intervalMs: 1000 }])),
    stream: {
      name: 'REZOLUS',
      maxAgeMs: 900_000,
      maxBytes: 1_073_741_824,
      maxMsgsPerSubject: 100_000,
      duplicateWindowMs: 120_000,
      replicas: 1,
    },
    bundle: true,
    bundleIntervalMs: 500,
    descriptorTtlMs: 86_400_000,
    bufferMaxBytes: 67_108_864,
    kernel: { enabled: true, bpfStats: false, syscallTimingBudget: 10_000 },
    cgroups: { maxCgroups: 1024, maxDepth: 6, openFiles: 1024 },
    http: { host: '127.0.0.1', port: 4241 },
  };
  t.deepEqual(c, expected);
});

test('the agent stream defaults are the ones subjects.json publishes', (t) => {
  const contract = JSON.parse(readFileSync(join(REPO, 'subjects', 'subjects.json'), 'utf8')) as {
    stream: { name: string; defaults: { max_age: string; max_bytes: string; max_msgs_per_subject: number; duplicate_window: string; replicas: number } };
  };
  const d = contract.stream.defaults;
  const s = loadAgentConfig(undefined, SAMPLER_NAMES).stream;
  t.is(s.name, contract.stream.name);
  t.is<number | undefined, number | undefined>(s.maxAgeMs, parseDuration(d.max_age));
  t.is<number | undefined, number | undefined>(s.maxBytes, parseSize(d.max_bytes));
  t.is(s.maxMsgsPerSubject, d.max_msgs_per_subject);
  t.is<number | undefined, number | undefined>(s.duplicateWindowMs, parseDuration(d.duplicate_window));
  t.is(s.replicas, d.replicas);
});

test('loadAgentConfig reads a file that overrides keys and one sampler', (t) => {
  const c = loadAgentConfig(AGENT_FIXTURE, SAMPLER_NAMES);
  t.is(c.file, AGENT_FIXTURE);
  t.is(c.host, 'fixture-host.example.com'); // the agent makes it a subject token, not the config
  t.is(c.procfs, '/host/proc');
  t.is(c.sysfs, '/sys');
  t.is(c.natsUrl, 'nats://10.0.0.5:4222,nats://10.0.0.6:4222');
  t.is(c.logLevel, 'debug');
  t.deepEqual(c.stream, {
    name: 'REZOLUS',
    maxAgeMs: 1_800_000,
    maxBytes: 2_147_483_648,
    maxMsgsPerSubject: 100_000,
    duplicateWindowMs: 120_000,
    replicas: 3,
  });
  t.is(c.descriptorTtlMs, 43_200_000);
  t.is(c.bufferMaxBytes, 16_777_216);
  t.deepEqual(c.samplers.cpu_usage, { enabled: false, intervalMs: 100 });
  for (const name of ALL_SAMPLERS.filter((n) => n !== 'cpu_usage')) {
    t.deepEqual(c.samplers[name], { enabled: true, intervalMs: 500 }, name);
  }
});

test('overrides win over the file', (t) => {
  const c = loadAgentConfig(AGENT_FIXTURE, SAMPLER_NAMES, { host: 'cli-host', intervalMs: 250, natsUrl: 'nats://cli:4333', logLevel: 'error' });
  t.is(c.host, 'cli-host');
  t.is(c.natsUrl, 'nats://cli:4333');
  t.is(c.logLevel, 'error');
  // --interval overrides every sampler, the one with its own table included; enabled stays as configured
  t.deepEqual(c.samplers.cpu_usage, { enabled: false, intervalMs: 250 });
  t.deepEqual(c.samplers.memory_meminfo, { enabled: true, intervalMs: 250 });
  // keys without an override keep the file's value
  t.is(c.procfs, '/host/proc');
  t.is(c.stream.replicas, 3);
});

test('undefined overrides do not clear the file values', (t) => {
  const c = loadAgentConfig(AGENT_FIXTURE, SAMPLER_NAMES, { host: undefined, intervalMs: undefined, natsUrl: undefined });
  t.is(c.host, 'fixture-host.example.com');
  t.is(c.samplers.cpu_usage?.intervalMs, 100);
  t.is(c.natsUrl, 'nats://10.0.0.5:4222,nats://10.0.0.6:4222');
});

test('an empty host in the file means this machine', (t) => {
  t.is(loadAgentConfig(toml('[general]\nhost = ""\n'), SAMPLER_NAMES).host, hostname());
});

test('defaults.enabled = false disables every sampler without its own table', (t) => {
  const c = loadAgentConfig(toml('[defaults]\nenabled = false\n[samplers.cpu_cores]\nenabled = true\n'), SAMPLER_NAMES);
  t.deepEqual(c.samplers.cpu_cores, { enabled: true, intervalMs: 1000 });
  t.deepEqual(c.samplers.cpu_usage, { enabled: false, intervalMs: 1000 });
});

test('an interval of exactly 10ms is accepted', (t) => {
  t.is(loadAgentConfig(toml('[samplers.cpu_usage]\ninterval = "10ms"\n'), SAMPLER_NAMES).samplers.cpu_usage?.intervalMs, 10);
});

test('the shipped config/agent.toml is the defaults', (t) => {
  const shipped = loadAgentConfig(join(REPO, 'config', 'agent.toml'), SAMPLERS);
  t.deepEqual({ ...shipped, file: '(defaults)' }, loadAgentConfig(undefined, SAMPLERS));
  // and it writes the slower defaults out, so a copy edited for a fleet keeps them
  t.is(loadAgentConfig(join(REPO, 'config', 'agent.toml'), SAMPLER_NAMES).samplers.rezolus_bpf?.intervalMs, 10_000);
});

test('cpu_perf and rezolus_bpf default to 10 s; [defaults] interval leaves them, their own table and --interval set them', (t) => {
  const slow = ['cpu_perf', 'rezolus_bpf'];
  t.deepEqual(SAMPLERS.filter((s) => s.defaultIntervalMs !== undefined).map((s) => [s.name, s.defaultIntervalMs]), slow.map((n) => [n, 10_000]));
  const plain = loadAgentConfig(undefined, SAMPLERS);
  for (const n of slow) t.is(plain.samplers[n]?.intervalMs, 10_000, n);
  t.is(plain.samplers.cpu_usage?.intervalMs, 1000);
  const fast = loadAgentConfig(toml('[defaults]\ninterval = "100ms"\n[samplers.rezolus_bpf]\ninterval = "1s"\n'), SAMPLERS);
  t.is(fast.samplers.cpu_usage?.intervalMs, 100);
  t.is(fast.samplers.cpu_perf?.intervalMs, 10_000, '[defaults] does not speed up a sampler with a default of its own');
  t.is(fast.samplers.rezolus_bpf?.intervalMs, 1000, 'its own table does');
  const flag = loadAgentConfig(undefined, SAMPLERS, { intervalMs: 200 });
  for (const n of slow) t.is(flag.samplers[n]?.intervalMs, 200, `--interval sets ${n} too`);
  const burst = loadAgentConfig(undefined, SAMPLERS, { samplerIntervalMs: { cpu_perf: 100 } });
  t.is(burst.samplers.cpu_perf?.intervalMs, 100, 'a per-sampler override (up\'s oversampling) wins');
});

/** [name, file text, patterns the message must match (besides the path)] */
const AGENT_ERRORS: readonly [string, string, RegExp[]][] = [
  ['an unknown section', '[bogus]\nx = 1\n', [/unknown section \[bogus\]/, /known: .*general/]],
  ['a section named like an Object.prototype member', '[toString]\nx = 1\n', [/unknown section \[toString\]/]],
  ['an unknown key', '[general]\nhostname = "a"\n', [/unknown key \[general\] hostname/, /known: host, procfs, sysfs/]],
  ['a key named like an Object.prototype member', '[general]\nconstructor = 1\n', [/unknown key \[general\] constructor/]],
  ['an unknown sampler entry', '[samplers.cpu_usagee]\ninterval = "1s"\n', [/unknown entry \[samplers\.cpu_usagee\]/, /known: blockio_diskstats/]],
  ['an unknown sampler key', '[samplers.cpu_usage]\nfrequency = "1s"\n', [/unknown key \[samplers\.cpu_usage\] frequency/]],
  ['a bad duration', '[defaults]\ninterval = "fast"\n', [/\[defaults\] interval/, /must be a duration/, /"fast"/]],
  ['a bad sampler duration', '[samplers.memory_vmstat]\ninterval = "1x"\n', [/\[samplers\.memory_vmstat\] interval/, /"1x"/]],
  ['an interval below 10ms', '[samplers.cpu_usage]\ninterval = "5ms"\n', [/\[samplers\.cpu_usage\] interval/, /at least 10ms/, /"5ms"/]],
  ['a default interval below 10ms', '[defaults]\ninterval = "9.5ms"\n', [/\[defaults\] interval/, /at least 10ms/, /"9\.5ms"/]],
  ['a number where a duration belongs', '[defaults]\ninterval = 5\n', [/\[defaults\] interval/, /got 5$/]],
  ['a string where a boolean belongs', '[defaults]\nenabled = "yes"\n', [/\[defaults\] enabled/, /true or false/, /"yes"/]],
  ['a number where a string belongs', '[general]\nhost = 42\n', [/\[general\] host/, /must be a string/, /got 42$/]],
  ['an integer out of range', '[stream]\nreplicas = 7\n', [/\[stream\] replicas/, /from 1 to 5/, /got 7$/]],
  ['a fractional integer', '[stream]\nmax_msgs_per_subject = 1.5\n', [/\[stream\] max_msgs_per_subject/, /got 1\.5$/]],
  ['a negative syscall timing budget', '[kernel]\nsyscall_timing_budget = -1\n', [/\[kernel\] syscall_timing_budget/, /got -1$/]],
  ['a syscall timing budget that is not a number', '[kernel]\nsyscall_timing_budget = "lots"\n', [/\[kernel\] syscall_timing_budget/, /"lots"/]],
  ['a bad size', '[buffer]\nmax_bytes = "lots"\n', [/\[buffer\] max_bytes/, /must be a size/, /"lots"/]],
  ['a zero size', '[stream]\nmax_bytes = "0B"\n', [/\[stream\] max_bytes/, /"0B"/]],
  ['a max_age below 1s', '[stream]\nmax_age = "500ms"\n', [/\[stream\] max_age/, /at least 1000ms/, /"500ms"/]],
  ['a bundle_interval above 500ms', '[stream]\nbundle_interval = "1s"\n', [/\[stream\] bundle_interval/, /at most 500ms/, /"1s"/]],
  ['an unknown log level', '[log]\nlevel = "loud"\n', [/\[log\] level/, /one of fatal, error, warn, info, debug, trace, silent/, /"loud"/]],
  ['a section that is not a table', 'general = 5\n', [/\[general\] must be a table/, /got 5$/]],
  ['samplers that is not a table', 'samplers = 5\n', [/\[samplers\] must be a table/]],
  ['a sampler entry that is not a table', '[samplers]\ncpu_usage = "fast"\n', [/\[samplers\.cpu_usage\] must be a table/, /"fast"/]],
  ['invalid TOML', '[general\nhost = "a"\n', [/is not valid TOML/]],
  ['a duplicate key', '[general]\nhost = "a"\nhost = "b"\n', [/is not valid TOML/]],
];

for (const [name, text, patterns] of AGENT_ERRORS) {
  test(`loadAgentConfig rejects ${name} with a ConfigError naming the file, key and value`, (t) => {
    const path = toml(text);
    const err = t.throws(() => loadAgentConfig(path, SAMPLER_NAMES), { instanceOf: ConfigError });
    t.is(err?.code, 'CONFIG_INVALID');
    t.regex(err?.message ?? '', new RegExp(esc(path)));
    for (const p of patterns) t.regex(err?.message ?? '', p);
  });
}

test('loadAgentConfig rejects a missing file with a ConfigError naming it', (t) => {
  const path = join(TMP, 'does-not-exist', 'agent.toml');
  const err = t.throws(() => loadAgentConfig(path, SAMPLER_NAMES), { instanceOf: ConfigError });
  t.regex(err?.message ?? '', new RegExp(`cannot read config file ${esc(path)}`));
  t.regex(err?.message ?? '', /ENOENT/);
});

test('an overriding --interval does not excuse a bad interval in the file', (t) => {
  const path = toml('[samplers.cpu_usage]\ninterval = "1ms"\n');
  t.throws(() => loadAgentConfig(path, SAMPLER_NAMES, { intervalMs: 1000 }), { instanceOf: ConfigError, message: /"1ms"/ });
});

// ---------------------------------------------------------------- exporter

test('loadExporterConfig without a file gives every default', (t) => {
  t.deepEqual(loadExporterConfig(undefined), {
    file: '(defaults)',
    listen: { host: '0.0.0.0', port: 4242 },
    hosts: '*',
    intervalMs: 1000,
    forgetAfterMs: 60_000,
    natsUrl: 'nats://127.0.0.1:4222',
    nats: NO_NATS_SECURITY,
    logLevel: 'info',
    summaries: true,
    percentiles: [0.5, 0.9, 0.99, 0.999, 0.9999, 1],
    histograms: false,
    histogramGroupingPower: 3,
    oversampleMetrics: ['cpu_usage', 'cpu_usage_all', 'network_device_bytes', 'network_device_packets', 'blockio_device_bytes', 'blockio_device_operations'],
    oversamplePercentiles: [0.5, 0.9, 0.99, 1],
  });
});

test('loadExporterConfig reads the fixture', (t) => {
  t.deepEqual(loadExporterConfig(EXPORTER_FIXTURE), {
    file: EXPORTER_FIXTURE,
    listen: { host: '127.0.0.1', port: 9100 },
    hosts: 'web01, web02',
    intervalMs: 15_000,
    forgetAfterMs: 300_000,
    natsUrl: 'nats://127.0.0.1:4222',
    nats: NO_NATS_SECURITY,
    logLevel: 'info',
    summaries: false,
    percentiles: [0.5, 0.99],
    histograms: true,
    histogramGroupingPower: 1,
    oversampleMetrics: ['cpu_usage'],
    oversamplePercentiles: [0.5, 1],
  });
});

test('exporter overrides win over the file', (t) => {
  const c = loadExporterConfig(EXPORTER_FIXTURE, {
    listen: { host: '::1', port: 9 },
    hosts: 'db-7',
    intervalMs: 30_000,
    natsUrl: 'nats://cli:1',
    logLevel: 'trace',
  });
  t.deepEqual(c.listen, { host: '::1', port: 9 });
  t.is(c.hosts, 'db-7');
  t.is(c.intervalMs, 30_000);
  t.is(c.natsUrl, 'nats://cli:1');
  t.is(c.logLevel, 'trace');
  t.is(c.forgetAfterMs, 300_000);
  t.deepEqual(c.percentiles, [0.5, 0.99]);
});

test('exporter listen accepts IPv6 and a bare port', (t) => {
  t.deepEqual(loadExporterConfig(toml('[general]\nlisten = "[::1]:9"\n')).listen, { host: '::1', port: 9 });
  t.deepEqual(loadExporterConfig(toml('[general]\nlisten = ":4243"\n')).listen, { host: '0.0.0.0', port: 4243 });
});

test('exporter percentiles accept the bounds 0 and 1', (t) => {
  t.deepEqual(loadExporterConfig(toml('[prometheus]\npercentiles = [0, 1]\n')).percentiles, [0, 1]);
});

test('the shipped config/exporter.toml is the defaults', (t) => {
  const shipped = loadExporterConfig(join(REPO, 'config', 'exporter.toml'));
  t.deepEqual({ ...shipped, file: '(defaults)' }, loadExporterConfig(undefined));
});

const EXPORTER_ERRORS: readonly [string, string, RegExp[]][] = [
  ['a port above 65535', '[general]\nlisten = "host:99999"\n', [/\[general\] listen/, /HOST:PORT/, /"host:99999"/]],
  ['a listen without a port', '[general]\nlisten = "localhost"\n', [/\[general\] listen/, /"localhost"/]],
  ['a percentile above 1', '[prometheus]\npercentiles = [0.5, 1.5]\n', [/\[prometheus\] percentiles/, /between 0 and 1/, /\[0\.5,1\.5\]/]],
  ['a negative percentile', '[prometheus]\npercentiles = [-0.1]\n', [/\[prometheus\] percentiles/, /\[-0\.1\]/]],
  ['an empty percentile list', '[prometheus]\npercentiles = []\n', [/\[prometheus\] percentiles/, /non-empty/, /\[\]/]],
  ['a percentile given as text', '[prometheus]\npercentiles = ["p99"]\n', [/\[prometheus\] percentiles/, /\["p99"\]/]],
  ['a single percentile that is not a list', '[prometheus]\npercentiles = 0.99\n', [/\[prometheus\] percentiles/, /got 0\.99$/]],
  ['forget_after below 1s', '[general]\nforget_after = "500ms"\n', [/\[general\] forget_after/, /at least 1000ms/, /"500ms"/]],
  ['an unknown key', '[prometheus]\nbuckets = true\n', [/unknown key \[prometheus\] buckets/]],
  ['a grouping power above 3', '[prometheus]\nhistogram_grouping_power = 4\n', [/\[prometheus\] histogram_grouping_power/, /from 0 to 3/, /got 4/]],
  ['histograms given as text', '[prometheus]\nhistograms = "yes"\n', [/\[prometheus\] histograms/, /true or false/]],
  ['an oversampled metric that is not a name', '[oversample]\nmetrics = ["cpu usage"]\n', [/\[oversample\] metrics/, /metric names/, /"cpu usage"/]],
  ['oversampled metrics not in a list', '[oversample]\nmetrics = "cpu_usage"\n', [/\[oversample\] metrics/, /"cpu_usage"/]],
  ['an oversample percentile above 1', '[oversample]\npercentiles = [2]\n', [/\[oversample\] percentiles/, /between 0 and 1/]],
  ['an agent section', '[stream]\nreplicas = 1\n', [/unknown section \[stream\]/]],
];

for (const [name, text, patterns] of EXPORTER_ERRORS) {
  test(`loadExporterConfig rejects ${name}`, (t) => {
    const path = toml(text);
    const err = t.throws(() => loadExporterConfig(path), { instanceOf: ConfigError });
    t.regex(err?.message ?? '', new RegExp(esc(path)));
    for (const p of patterns) t.regex(err?.message ?? '', p);
  });
}

// ---------------------------------------------------------------- up

test('loadUpConfig resolves the agent and exporter configs relative to up.toml', (t) => {
  const dir = dirname(UP_FIXTURE);
  t.deepEqual(loadUpConfig(UP_FIXTURE, '/ignored/when/a/file/is/given'), {
    file: UP_FIXTURE,
    dataDir: '/var/tmp/rezolus-fixture',
    agentConfig: join(dir, 'agents', 'a.toml'),
    exporterConfig: EXPORTER_FIXTURE,
    hindsightConfig: join(dir, 'hindsight.toml'),
    alertsConfig: join(dir, 'alerts.toml'),
    natsUrl: '',
    oversampleIntervalMs: 100,
    natsServer: '/usr/sbin/nats-server',
    natsPort: 0,
    logLevel: 'warn',
  });
});

test('loadUpConfig keeps absolute config paths', (t) => {
  const c = loadUpConfig(toml('[general]\nagent_config = "/etc/rezolus/agent.toml"\n'), undefined);
  t.is(c.agentConfig, '/etc/rezolus/agent.toml');
  t.is(c.exporterConfig, join(TMP, 'exporter.toml'));
});

test('loadUpConfig without a file puts the configs in the defaults directory', (t) => {
  t.deepEqual(loadUpConfig(undefined, '/opt/rezolus/config'), {
    file: '(defaults)',
    dataDir: './data',
    agentConfig: '/opt/rezolus/config/agent.toml',
    exporterConfig: '/opt/rezolus/config/exporter.toml',
    hindsightConfig: '/opt/rezolus/config/hindsight.toml',
    alertsConfig: '/opt/rezolus/config/alerts.toml',
    natsUrl: '',
    oversampleIntervalMs: 100,
    natsServer: '/usr/sbin/nats-server',
    natsPort: 4222,
    logLevel: 'info',
  });
});

test('loadUpConfig without a file or defaults directory leaves the configs unset', (t) => {
  const c = loadUpConfig(undefined, undefined);
  t.is(c.agentConfig, undefined);
  t.is(c.exporterConfig, undefined);
});

test('the shipped config/up.toml points at the shipped agent and exporter configs', (t) => {
  const c = loadUpConfig(join(REPO, 'config', 'up.toml'), undefined);
  t.is(c.agentConfig, join(REPO, 'config', 'agent.toml'));
  t.is(c.exporterConfig, join(REPO, 'config', 'exporter.toml'));
  t.is(c.alertsConfig, join(REPO, 'config', 'alerts.toml'));
  t.is(c.natsPort, 4222);
});

const UP_ERRORS: readonly [string, string, RegExp[]][] = [
  ['a port above 65535', '[nats]\nport = 70000\n', [/\[nats\] port/, /from 0 to 65535/, /got 70000$/]],
  ['a negative port', '[nats]\nport = -1\n', [/\[nats\] port/, /got -1$/]],
  ['a non-string agent_config', '[general]\nagent_config = 1\n', [/\[general\] agent_config/, /must be a string/, /got 1$/]],
  ['an unknown key', '[general]\nagent = "a.toml"\n', [/unknown key \[general\] agent/]],
  ['invalid TOML', '[nats]\nport = \n', [/is not valid TOML/]],
];

for (const [name, text, patterns] of UP_ERRORS) {
  test(`loadUpConfig rejects ${name}`, (t) => {
    const path = toml(text);
    const err = t.throws(() => loadUpConfig(path, undefined), { instanceOf: ConfigError });
    t.regex(err?.message ?? '', new RegExp(esc(path)));
    for (const p of patterns) t.regex(err?.message ?? '', p);
  });
}

test('loadUpConfig rejects a missing file', (t) => {
  const path = join(TMP, 'nope', 'up.toml');
  t.throws(() => loadUpConfig(path, undefined), { instanceOf: ConfigError, message: new RegExp(`cannot read config file ${esc(path)}`) });
});

test('up.toml oversample_interval: "" turns it off, a bad value names the key, and the agent override beats agent.toml but not --interval', (t) => {
  t.is(loadUpConfig(toml('[general]\noversample_interval = ""\n'), undefined).oversampleIntervalMs, undefined);
  t.is(loadUpConfig(toml('[general]\noversample_interval = "250ms"\n'), undefined).oversampleIntervalMs, 250);
  t.throws(() => loadUpConfig(toml('[general]\noversample_interval = "5ms"\n'), undefined), { message: /\[general\] oversample_interval must be "" or a duration of at least 10ms such as "100ms", got "5ms"/ });
  const file = toml('[samplers.cpu_usage]\ninterval = "2s"\n[samplers.memory_meminfo]\ninterval = "3s"\n');
  const over = loadAgentConfig(file, SAMPLER_NAMES, { samplerIntervalMs: { cpu_usage: 100 } });
  t.is(over.samplers.cpu_usage?.intervalMs, 100, 'the override beats the sampler\'s own table');
  t.is(over.samplers.memory_meminfo?.intervalMs, 3000, 'other samplers keep theirs');
  t.is(loadAgentConfig(file, SAMPLER_NAMES, { samplerIntervalMs: { cpu_usage: 100 }, intervalMs: 500 }).samplers.cpu_usage?.intervalMs, 500, '--interval beats both');
});
