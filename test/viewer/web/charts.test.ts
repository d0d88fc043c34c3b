import test from 'ava';
import type { MetricEntry, QuerySeries } from '../../../src/viewer/api.js';
import { cpuLabelOf, labelValues, matchesFor, planCharts } from '../../../src/viewer/web/chart-plan.js';
import { ALL, BUSY, choices, defaultSelection, otherLabels, perCpuGrid, selected } from '../../../src/viewer/web/percpu.js';
import { mergeSections } from '../../../src/viewer/web/sections.js';
import { differs, flatZero, hoveredValues, isolatedPoints, legendName, lineChartData, positiveOnly } from '../../../src/viewer/web/series-shape.js';

const metric = (over: Partial<MetricEntry>): MetricEntry => ({
  name: 'm',
  kind: 'gauge',
  unit: 'bytes',
  description: '',
  section: 'Other',
  labels: [],
  series: [],
  ...over,
});

const s = (name: string, labels: Record<string, string>, avg: (number | null)[], min = avg, max = avg): QuerySeries => ({ id: name, name, labels, avg, min, max });

test('a metric gets its charts from kind and labels alone', (t) => {
  t.deepEqual(
    planCharts(metric({ kind: 'histogram' })).map((p) => [p.kind, p.fn]),
    [
      ['percentiles', 'percentiles'],
      ['heatmap', 'heatmap'],
    ],
  );
  t.deepEqual(
    planCharts(metric({ kind: 'counter', labels: ['state', 'id'] })).map((p) => [p.kind, p.fn]),
    [['percpu', 'rate']],
  );
  t.deepEqual(
    planCharts(metric({ kind: 'gauge', labels: ['cpu'] })).map((p) => [p.kind, p.fn]),
    [['percpu', 'value']],
  );
  t.deepEqual(
    planCharts(metric({ kind: 'counter', labels: ['direction'] })).map((p) => [p.kind, p.fn]),
    [['rate', 'rate']],
  );
  t.deepEqual(
    planCharts(metric({ kind: 'gauge' })).map((p) => [p.kind, p.fn]),
    [['value', 'value']],
  );
  t.is(cpuLabelOf(['state', 'id']), 'id');
  t.is(cpuLabelOf(['cgroup']), undefined);
});

test('label values of a section, and the match parameters of a metric', (t) => {
  const ms = [
    metric({ labels: ['cgroup'], series: [{ id: 'a', labels: { cgroup: '/b10' } }, { id: 'b', labels: { cgroup: '/b2' } }] }),
    metric({ labels: ['cgroup', 'state'], series: [{ id: 'c', labels: { cgroup: '/b2', state: 'user' } }] }),
    metric({ labels: [], series: [{ id: 'd', labels: {} }] }),
  ];
  t.deepEqual(labelValues(ms, 'cgroup'), ['/b2', '/b10']);
  t.deepEqual(matchesFor(ms[0]!, { cgroup: '/system.slice/*' }), ['cgroup=/system.slice/*']);
  t.deepEqual(matchesFor(ms[2]!, { cgroup: '/system.slice/*' }), []);
  t.deepEqual(matchesFor(ms[0]!, { cgroup: '' }), []);
  t.deepEqual(matchesFor(ms[0]!, { cgroup: '*' }), []);
});

test('per-CPU: rows are CPUs in numeric order, the selected series of each summed', (t) => {
  const series = [
    s('user/0', { state: 'user', id: '0' }, [1, 2]),
    s('system/0', { state: 'system', id: '0' }, [0.5, null]),
    s('idle/0', { state: 'idle', id: '0' }, [8, 7]),
    s('user/10', { state: 'user', id: '10' }, [3, 4]),
    s('user/2', { state: 'user', id: '2' }, [null, null]),
  ];
  const labels = otherLabels(series, 'id');
  t.deepEqual([...labels], [['state', ['idle', 'system', 'user']]]);
  t.deepEqual(choices(['idle', 'system', 'user']), [BUSY, ALL, 'idle', 'system', 'user']);
  t.deepEqual(choices(['receive', 'transmit']), [ALL, 'receive', 'transmit']);
  const sel = defaultSelection(labels);
  t.deepEqual(sel, { state: BUSY });
  const busy = perCpuGrid(series, 'id', sel, 2);
  t.deepEqual(busy.cpus, ['0', '2', '10']);
  t.deepEqual(busy.values, [
    [1.5, null, 3],
    [2, null, 4],
  ]);
  const all = perCpuGrid(series, 'id', { state: ALL }, 2);
  t.deepEqual(all.values[0], [9.5, null, 3]);
  const idle = perCpuGrid(series, 'id', { state: 'idle' }, 2);
  t.deepEqual(idle.cpus, ['0']);
  t.true(selected({ state: 'user', id: '1' }, { state: BUSY }));
  t.false(selected({ state: 'iowait', id: '1' }, { state: BUSY }));
});

test('lines: a rate gets its burst line only where the burst differs', (t) => {
  const flat = lineChartData({ t: [1000, 2000], series: [s('rx', {}, [1, 2], [1, 2], [1, 2])] }, 'rate');
  t.deepEqual(flat.x, [1, 2]);
  t.deepEqual(
    flat.lines.map((l) => [l.label, l.role]),
    [['rx', 'main']],
  );
  const burst = lineChartData({ t: [1000, 2000], series: [s('rx', {}, [1, 2], [0, 1], [1, 9]), s('', {}, [null, 1])] }, 'rate');
  t.deepEqual(
    burst.lines.map((l) => [l.label, l.role, l.series, l.values]),
    [
      ['rx', 'main', 0, [1, 2]],
      ['rx burst', 'burst', 0, [1, 9]],
      ['value', 'main', 1, [null, 1]],
    ],
  );
  t.deepEqual(burst.bands, []);
});

test('lines: a gauge gets a min/max band where a step holds several samples; percentiles one line each', (t) => {
  const g = lineChartData({ t: [0, 1000], series: [s('a', {}, [2, 3], [1, 3], [4, 3])] }, 'value');
  t.deepEqual(
    g.lines.map((l) => [l.label, l.role]),
    [
      ['a', 'main'],
      ['a max', 'max'],
      ['a min', 'min'],
    ],
  );
  t.deepEqual(g.bands, [[1, 2]]);
  const p = lineChartData({ t: [0], series: [s('p50', {}, [1], [0], [5]), s('p99', {}, [7])] }, 'percentiles');
  t.deepEqual(
    p.lines.map((l) => l.label),
    ['p50', 'p99'],
  );
  t.true(differs([1, 2.000001], [1, 2]));
  t.false(differs([1e12, null], [1e12 + 1e-3, 5]));
  t.deepEqual(positiveOnly([0, -1, 2, null]), [null, null, 2, null]);
});

test('sections of two hosts: the first host order, sections and metrics only the other has added', (t) => {
  t.deepEqual(
    mergeSections([
      [
        { name: 'Overview', metrics: ['a', 'b'] },
        { name: 'CPU', metrics: ['c'] },
      ],
      [
        { name: 'Overview', metrics: ['b', 'x'] },
        { name: 'GPU', metrics: ['g'] },
      ],
    ]),
    [
      { name: 'Overview', metrics: ['a', 'b', 'x'] },
      { name: 'CPU', metrics: ['c'] },
      { name: 'GPU', metrics: ['g'] },
    ],
  );
});

test('a value whose neighbours are gaps is a lone point (a line draws nothing there)', (t) => {
  t.deepEqual(isolatedPoints([null, 5, null, 1, 2, null, null, 7]), [1, 7]);
  t.deepEqual(isolatedPoints([3]), [0]);
  t.deepEqual(isolatedPoints([3, 4, null]), []);
  t.deepEqual(isolatedPoints([]), []);
});

test('a series without labels is named by its metric, not "total"', (t) => {
  const d = lineChartData({ metric: 'memory_available', t: [0], series: [s('total', {}, [1])] }, 'value');
  t.deepEqual(
    d.lines.map((l) => l.label),
    ['memory_available'],
  );
  t.is(legendName(s('total', { state: 'total' }, []), 'm'), 'total');
  t.is(legendName(s('p50', {}, []), 'm'), 'p50');
});

test('many lines: flat-zero lines are found, hovered values come largest first', (t) => {
  t.true(flatZero([0, null, 0]));
  t.false(flatZero([0, 1e-9]));
  const lines = [{ label: 'a' }, { label: 'b' }, { label: 'c' }];
  t.deepEqual(
    hoveredValues(lines, [[1, 5], [null, 9], [2, 7]], 1).map((h) => [h.line.label, h.value]),
    [
      ['b', 9],
      ['c', 7],
      ['a', 5],
    ],
  );
});
