import test from 'ava';
import type { HostSummary } from '../../../src/viewer/api.js';
import { FLEET_COLUMNS, fleetColumns, fleetRow, STALE_MS } from '../../../src/viewer/web/fleet-rows.js';
import { compareValues, nextSort, sortRows } from '../../../src/viewer/web/sort.js';

const host = (over: Partial<HostSummary>): HostSummary => ({
  host: 'web01',
  lastMs: 10_000,
  cpu: 0.25,
  cpus: 8,
  runqueueP99Ns: 48_000,
  memoryTotalBytes: 16 * 1024 ** 3,
  memoryAvailableBytes: 6 * 1024 ** 3,
  networkRxBps: 1.5 * 1024 * 1024,
  networkTxBps: 512,
  blockReadBps: null,
  blockWriteBps: 0,
  samplers: { cpu_usage: { state: 'active' }, scheduler_runqueue: { state: 'failed', reason: 'no BTF' }, gpu: { state: 'disabled' } },
  buffered: 3,
  refused: null,
  ...over,
});

test('a host row: values to sort by and text to show', (t) => {
  const r = fleetRow(host({}), 12_500);
  t.is(r.values.memUsed, 10 * 1024 ** 3);
  t.is(r.values.age, 2500);
  t.is(r.values.active, 1);
  t.is(r.values.failed, 1);
  t.deepEqual(r.cells, {
    host: 'web01',
    cpu: '25% of 8',
    runqueue: '48 µs',
    memUsed: '10 GiB',
    memAvailable: '6 GiB',
    rx: '1.5 MiB/s',
    tx: '512 B/s',
    read: '—',
    write: '0 B/s',
    active: '1 of 2',
    failed: '1',
    age: '2.5 s',
    buffered: '3',
    refused: '—',
  });
  t.is(r.failedReasons, 'scheduler_runqueue: no BTF');
  t.is(r.memoryNote, '10 GiB used of 16 GiB');
  t.deepEqual(
    FLEET_COLUMNS.map((c) => c.key),
    Object.keys(r.cells),
  );
});

test('a host with nothing known: dashes, and unknowns sort last', (t) => {
  const r = fleetRow(
    host({ cpu: null, cpus: null, memoryTotalBytes: null, memoryAvailableBytes: null, samplers: {}, buffered: null, runqueueP99Ns: null }),
    10_000,
  );
  t.is(r.cells.cpu, '—');
  t.is(r.cells.memUsed, '—');
  t.is(r.cells.active, '—');
  t.is(r.values.failed, null);
  t.is(r.memoryNote, '');
});

test('sort: numbers as numbers, text in natural order, unknowns last both ways, stable', (t) => {
  const rows = [
    { h: 'host10', v: 3 as number | null },
    { h: 'host2', v: null },
    { h: 'host1', v: 3 },
    { h: 'host3', v: 1 },
  ];
  t.deepEqual(
    sortRows(rows, (r) => r.h, 'asc').map((r) => r.h),
    ['host1', 'host2', 'host3', 'host10'],
  );
  t.deepEqual(
    sortRows(rows, (r) => r.v, 'asc').map((r) => r.h),
    ['host3', 'host10', 'host1', 'host2'],
  );
  t.deepEqual(
    sortRows(rows, (r) => r.v, 'desc').map((r) => r.h),
    ['host10', 'host1', 'host3', 'host2'],
  );
  t.deepEqual(
    sortRows([1, Number.NaN, 0], (v) => v, 'desc'),
    [1, 0, Number.NaN],
  );
  t.is(compareValues(2, 10), -1);
  t.is(compareValues('a2', 'a10'), -1);
});

test('clicking a column: the same one flips, a new number column starts biggest first', (t) => {
  t.deepEqual(nextSort({ key: 'host', dir: 'asc' }, 'host', true), { key: 'host', dir: 'desc' });
  t.deepEqual(nextSort({ key: 'host', dir: 'asc' }, 'cpu', false), { key: 'cpu', dir: 'desc' });
  t.deepEqual(nextSort({ key: 'cpu', dir: 'desc' }, 'host', true), { key: 'host', dir: 'asc' });
});

test('samplers: active of enabled (disabled ones do not count), the others and why on hover', (t) => {
  const r = fleetRow(
    host({
      samplers: {
        cpu_usage: { state: 'active' },
        memory: { state: 'active' },
        scheduler_runqueue: { state: 'failed', reason: 'no BTF' },
        gpu: { state: 'disabled' },
        tcp: { state: 'disabled' },
        block_io: { state: 'degraded', reason: 'partial' },
        rapl: { state: 'unsupported' },
      },
    }),
    12_500,
  );
  t.is(r.cells.active, '2 of 5');
  t.is(r.values.active, 2);
  t.is(r.samplersNote, 'block_io: degraded (partial)\nrapl: unsupported\nscheduler_runqueue: failed (no BTF)\n2 disabled (not counted): gpu, tcp');
  const all = fleetRow(host({ samplers: { a: { state: 'active' }, b: { state: 'disabled' } } }), 12_500);
  t.is(all.cells.active, '1 of 1');
  t.is(all.samplersNote, '1 disabled (not counted): b');
  t.is(fleetRow(host({ samplers: { a: { state: 'active' } } }), 12_500).samplersNote, '');
  t.is(fleetRow(host({ samplers: { b: { state: 'disabled' } } }), 12_500).cells.active, '—');
});

test('stale: live only, a newest frame more than 10 s old', (t) => {
  t.is(STALE_MS, 10_000);
  t.false(fleetRow(host({ lastMs: 0 }), 10_000, true).stale);
  t.true(fleetRow(host({ lastMs: 0 }), 10_001, true).stale);
  t.false(fleetRow(host({ lastMs: 0 }), 60_000, false).stale, 'a recording is never stale');
});

test('columns: a recording hides the live-only ones (last frame, buffered, refused)', (t) => {
  t.deepEqual(
    fleetColumns(true).map((c) => c.key),
    FLEET_COLUMNS.map((c) => c.key),
  );
  const file = fleetColumns(false).map((c) => c.key);
  for (const k of ['age', 'buffered', 'refused'] as const) t.false(file.includes(k));
  t.is(file.length, FLEET_COLUMNS.length - 3);
});
