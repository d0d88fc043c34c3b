import test from 'ava';
import { readRules, conditionMet, type Catalog, type RuleDefaults } from '../../src/alert/rules.js';
import { formatValue, parseThreshold } from '../../src/alert/units.js';
import { loadAlertsConfig } from '../../src/config/alerts.js';
import { ConfigError } from '../../src/errors.js';
import { metricCatalog } from '../../src/samplers/catalog.js';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { tmpdir } from 'node:os';

const CATALOG: Catalog = metricCatalog();
const D: RuleDefaults = { windowMs: 10_000, forMs: 30_000, keepFiringForMs: 60_000, missing: 'stale', missingAfterMs: 60_000, severity: 'warning', capture: { beforeMs: 300_000, afterMs: 60_000 } };

const rule = (r: Record<string, unknown>) => readRules([r], 'rules.toml', CATALOG, D)[0];
const refused = (r: Record<string, unknown>): string => {
  try {
    readRules([r], 'rules.toml', CATALOG, D);
  } catch (error) {
    if (error instanceof ConfigError) return error.message;
    throw error;
  }
  return 'accepted';
};

test('thresholds in human units become the raw unit of the value', (t) => {
  t.is(parseThreshold('1ms', 'time', 'nanoseconds'), 1e6);
  t.is(parseThreshold('800us', 'time', 'nanoseconds'), 800_000);
  t.is(parseThreshold('2s', 'time', 'microseconds'), 2e6);
  t.is(parseThreshold('90%', 'time_rate', 'nanoseconds'), 0.9e9);
  t.is(parseThreshold(1.5, 'time_rate', 'nanoseconds'), 1.5e9);
  t.is(parseThreshold('500ms/s', 'time_rate', 'nanoseconds'), 0.5e9);
  t.is(parseThreshold('10MiB/s', 'bytes_rate', 'bytes'), 10 * 1024 * 1024);
  t.is(parseThreshold('256MiB', 'bytes', 'bytes'), 256 * 1024 * 1024);
  t.is(parseThreshold('100/s', 'count_rate', 'packets'), 100);
  t.is(parseThreshold(100, 'count_rate', 'packets'), 100);
  t.is(parseThreshold('1.5', 'time_rate', 'nanoseconds'), 1.5e9, 'a quoted number of cores');
  t.is(parseThreshold('90%', 'ratio', 'ratio'), 0.9);
  // a bad unit: a time for bytes, bytes without a unit, a rate for a level
  t.is(parseThreshold('1ms', 'bytes', 'bytes'), undefined);
  t.is(parseThreshold(1024, 'bytes', 'bytes'), undefined);
  t.is(parseThreshold('10MiB', 'bytes_rate', 'bytes'), undefined);
  t.is(parseThreshold('90%', 'count', 'count'), undefined);
  t.is(parseThreshold('1 parsec', 'time', 'nanoseconds'), undefined);
});

test('values are written for people', (t) => {
  t.is(formatValue(1_234_567, 'time', 'nanoseconds'), '1.235 ms');
  t.is(formatValue(20.97 * 1024 ** 3, 'bytes', 'bytes'), '20.97 GiB', 'not 21 GiB, which would read as a threshold of 21GiB');
  t.is(formatValue(0.93e9, 'time_rate', 'nanoseconds'), '93%');
  t.is(formatValue(35.2 * 1024 * 1024, 'bytes_rate', 'bytes'), '35.2 MiB/s');
  t.is(formatValue(null, 'time', 'nanoseconds'), 'no data');
  t.is(formatValue(42, 'count_rate', 'packets'), '42/s');
});

test('a rule is read with its defaults and its units', (t) => {
  const r = rule({ name: 'rq', metric: 'scheduler_runqueue_latency', reduce: 'p99', threshold: '1ms', clear: '800us' });
  t.is(r?.threshold, 1e6);
  t.is(r?.clear, 800_000);
  t.deepEqual(r?.reduce, { kind: 'quantile', q: 0.99 });
  t.is(r?.forMs, 30_000);
  t.is(r?.group, 'sum');
  t.deepEqual(r?.capture, { beforeMs: 300_000, afterMs: 60_000 });
  const m = rule({ name: 'mx', metric: 'scheduler_runqueue_latency', reduce: 'max', threshold: '1ms', capture: false, for: '0s' });
  t.deepEqual(m?.reduce, { kind: 'quantile', q: 1 });
  t.is(m?.capture, undefined);
  t.is(m?.forMs, 0);
});

test('bad rules are refused naming the rule and the key', (t) => {
  t.regex(refused({ name: 'a', metric: 'no_such_metric', reduce: 'p99', threshold: '1ms' }), /rules\.toml: rule "a": metric "no_such_metric" is not a metric/);
  t.regex(refused({ name: 'b', metric: 'memory_available', reduce: 'p99', threshold: '1GiB' }), /rule "b": reduce "p99" does not apply to memory_available, a gauge/);
  t.regex(refused({ name: 'c', metric: 'memory_available', reduce: 'min', threshold: '1ms' }), /rule "c": threshold "1ms" is not a value for min of memory_available \(bytes\)/);
  t.regex(refused({ name: 'd', metric: 'cpu_usage', reduce: 'last', threshold: 1 }), /rule "d": reduce "last" does not apply to cpu_usage, a counter/);
  t.regex(refused({ name: 'e', metric: 'memory_available', reduce: 'min', threshold: '1GiB', match: { cgroup: '*' } }), /rule "e": match label "cgroup" is not a label of memory_available/);
  t.regex(refused({ name: 'f', metric: 'scheduler_runqueue_latency', reduce: 'p99', threshold: '1ms', clear: '2ms' }), /rule "f": clear must be on the quiet side/);
  t.regex(refused({ name: 'g', metric: 'scheduler_runqueue_latency', reduce: 'p99', threshold: '1ms', for: 'soon' }), /rule "g": for must be a duration/);
  t.regex(refused({ name: 'Bad-Name', metric: 'memory_available', reduce: 'min', threshold: '1GiB' }), /rule "Bad-Name": name must be lower case/);
  t.regex(refused({ name: 'h', metric: 'memory_available', reduce: 'min', threshold: '1GiB', treshold: '2GiB' }), /rule "h": treshold is not a rule key/);
  t.regex(refused({ name: 'i', metric: 'memory_available', reduce: 'min' }), /rule "i": threshold is missing/);
  t.regex(refused({ name: 'j', metric: 'cpu_usage', reduce: 'age', threshold: '30s', missing: 'fire' }), /rule "j": missing does not apply/);
  t.throws(() => readRules([{ name: 'k', metric: 'memory_available', reduce: 'min', threshold: '1GiB' }, { name: 'k', metric: 'memory_available', reduce: 'max', threshold: '1GiB' }], 'rules.toml', CATALOG, D), {
    message: /rule "k": name is used by an earlier rule/,
  });
});

test('every bad rule of a file is named at once, with the nearest name for a typo; summary placeholders must be fillable', (t) => {
  const error = t.throws(() =>
    readRules(
      [
        { name: 'a', metric: 'cpu_usge', reduce: 'rate', threshold: 1 },
        { name: 'b', metric: 'memory_available', reduce: 'min', threshold: '1GiB', severty: 'page' },
        { name: 'c', metric: 'memory_available', reduce: 'min', threshold: '1GiB', summary: 'low on {host}: {nolabel}' },
        { name: 'd', metric: 'memory_available', reduce: 'min', threshold: '1GiB', summary: '{host} {value} {threshold}' },
      ],
      'rules.toml', CATALOG, D,
    ),
  );
  const lines = error?.message.split('\n') ?? [];
  t.is(lines.length, 3, error?.message);
  t.regex(lines[0] ?? '', /rule "a": metric "cpu_usge" is not a metric any sampler declares \(did you mean "cpu_usage"\?\)/);
  t.regex(lines[1] ?? '', /rule "b": severty is not a rule key \(did you mean severity\?/);
  t.regex(lines[2] ?? '', /rule "c": summary has \{nolabel\}, which nothing fills/);
  t.notThrows(() => readRules([{ name: 'e', metric: 'cgroup_cpu_bandwidth_throttled_time', group: 'each', reduce: 'rate', threshold: '25%', summary: '{cgroup} on {host}' }], 'r', CATALOG, D));
  t.throws(() => readRules([{ name: 'f', metric: 'cgroup_cpu_bandwidth_throttled_time', reduce: 'rate', threshold: '25%', summary: '{cgroup} on {host}' }], 'r', CATALOG, D), { message: /series labels only with group = "each"/ });
});

test('hysteresis: a firing alert holds until the value is past clear', (t) => {
  const r = rule({ name: 'rq', metric: 'scheduler_runqueue_latency', reduce: 'p99', threshold: '1ms', clear: '500us' });
  if (r === undefined) return t.fail();
  t.false(conditionMet(r, 700_000, false));
  t.true(conditionMet(r, 700_000, true));
  t.false(conditionMet(r, 400_000, true));
  const low = rule({ name: 'mem', metric: 'memory_available', reduce: 'min', op: '<', threshold: '256MiB', clear: '512MiB' });
  if (low === undefined) return t.fail();
  t.true(conditionMet(low, 300 * 1024 * 1024, true));
  t.false(conditionMet(low, 300 * 1024 * 1024, false));
});

test('the shipped config/alerts.toml holds the default rules and passes the check', (t) => {
  const c = loadAlertsConfig('config/alerts.toml', CATALOG);
  const metrics = new Set(c.rules.map((r) => r.metric));
  for (const m of ['scheduler_runqueue_latency', 'cgroup_cpu_bandwidth_throttled_time', 'network_tcp_retransmitted_segments', 'memory_available', 'blockio_latency', 'cpu_usage', 'rezolus_sampler_state']) {
    t.true(metrics.has(m), m);
  }
  t.true(c.rules.some((r) => r.reduce.kind === 'age'), 'a host gone silent');
});

test('a file with an unknown section or a bad [general] key is refused with the file named', (t) => {
  const dir = mkdtempSync(join(tmpdir(), 'rezolus-rules-'));
  t.teardown(() => rmSync(dir, { recursive: true, force: true }));
  const f = join(dir, 'a.toml');
  writeFileSync(f, '[generl]\nhosts = "*"\n');
  t.throws(() => loadAlertsConfig(f, CATALOG), { message: /a\.toml: unknown section \[generl\]/ });
  writeFileSync(f, '[alertmanager]\nurls = "ftp://x"\n');
  t.throws(() => loadAlertsConfig(f, CATALOG), { message: /\[alertmanager\] urls must be http/ });
  writeFileSync(f, 'rule = 3\n');
  t.throws(() => loadAlertsConfig(f, CATALOG), { message: /rule must be an array of tables/ });
});
