import { readFileSync } from 'node:fs';
import test from 'ava';
import { OVERVIEW_METRICS, SECTIONS, defaultFn, sectionOf } from '../../../src/viewer/query/sections.js';

/** name → kind of every metric documented in METRICS.md. */
const documented = new Map<string, string>();
for (const line of readFileSync(new URL('../../../METRICS.md', import.meta.url), 'utf8').split('\n')) {
  const m = /^\| `([a-z0-9_]+)` \| (counter|gauge|histogram) \|/.exec(line);
  if (m) documented.set(m[1] as string, m[2] as string);
}

test('sectionOf by the name prefix', (t) => {
  const cases: [string, string][] = [
    ['cpu_usage', 'CPU'],
    ['cpu_cores', 'CPU'],
    ['memory_available', 'Memory'],
    ['network_bytes', 'Network'],
    ['network_tcp_timeouts', 'Network'],
    ['tcp_srtt', 'TCP'],
    ['scheduler_runqueue_latency', 'Scheduler'],
    ['syscall', 'Syscalls'],
    ['syscall_latency', 'Syscalls'],
    ['softirq', 'Softirq'],
    ['softirq_time', 'Softirq'],
    ['blockio_latency', 'Block IO'],
    ['filesystem_latency', 'Filesystem'],
    ['cgroup_cpu_usage', 'cgroups'],
    ['cgroup_syscall', 'cgroups'],
    ['rezolus_exporter_hosts', 'Rezolus'],
    ['gpu_utilization', 'Other'],
    ['cpux_thing', 'Other'],
    ['constructor', 'Other'],
    ['toString_x', 'Other'],
    ['', 'Other'],
  ];
  for (const [name, section] of cases) t.is<string, string>(sectionOf(name), section, name);
});

test('every documented metric has a section of its own, and every section is listed', (t) => {
  t.true(documented.size > 200, `${documented.size} metrics parsed from METRICS.md`);
  for (const name of documented.keys()) t.not(sectionOf(name), 'Other', name);
  for (const name of documented.keys()) t.true((SECTIONS as readonly string[]).includes(sectionOf(name)));
});

test('SECTIONS: Overview first, Other last, no duplicates', (t) => {
  t.is(SECTIONS[0], 'Overview');
  t.is(SECTIONS[SECTIONS.length - 1], 'Other');
  t.is(new Set(SECTIONS).size, SECTIONS.length);
  t.deepEqual(
    [...SECTIONS],
    ['Overview', 'CPU', 'Memory', 'Network', 'TCP', 'Scheduler', 'Syscalls', 'Softirq', 'Block IO', 'Filesystem', 'cgroups', 'Rezolus', 'Other'],
  );
});

test('OVERVIEW_METRICS are documented metrics', (t) => {
  t.true(OVERVIEW_METRICS.length >= 6 && OVERVIEW_METRICS.length <= 12);
  for (const name of OVERVIEW_METRICS) t.true(documented.has(name), name);
  t.is(documented.get('scheduler_runqueue_latency'), 'histogram');
  t.is(documented.get('cpu_usage_all'), 'counter');
  t.is(documented.get('memory_available'), 'gauge');
  t.is(new Set(OVERVIEW_METRICS).size, OVERVIEW_METRICS.length);
});

test('defaultFn by kind', (t) => {
  t.is(defaultFn('counter'), 'rate');
  t.is(defaultFn('gauge'), 'value');
  t.is(defaultFn('histogram'), 'percentiles');
});
