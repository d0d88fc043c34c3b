import test from 'ava';
import { mkdirSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { parseMountinfo, pickSources } from '../../src/samplers/cgroup/mounts.js';
import { CgroupSelection } from '../../src/samplers/cgroup/select.js';
import { listCgroups } from '../../src/samplers/cgroup/walk.js';
import { fixture } from '../helpers/fixtures.js';

test('a hybrid host (this machine): one v1 hierarchy per controller and the v2 tree', (t) => {
  const { mounts, skipped } = parseMountinfo(fixture('cgroup/mountinfo-hybrid'));
  t.is(skipped, 0);
  t.deepEqual(
    mounts.map((m) => `${m.version} ${m.path} ${m.controllers.join(',')}`),
    [
      '1 /sys/fs/cgroup/cpu cpu',
      '1 /sys/fs/cgroup/cpuacct cpuacct',
      '1 /sys/fs/cgroup/cpuset cpuset',
      '1 /sys/fs/cgroup/memory memory',
      '1 /sys/fs/cgroup/devices devices',
      '1 /sys/fs/cgroup/freezer freezer',
      '1 /sys/fs/cgroup/blkio blkio',
      '1 /sys/fs/cgroup/pids pids',
      '1 /sys/fs/cgroup/systemd ',
      '2 /sys/fs/cgroup/unified ',
    ],
  );
  const s = pickSources(mounts, []);
  t.deepEqual(
    Object.fromEntries([...s.byController].map(([c, m]) => [c, m.path])),
    {
      cpu: '/sys/fs/cgroup/cpu',
      cpuacct: '/sys/fs/cgroup/cpuacct',
      memory: '/sys/fs/cgroup/memory',
      blkio: '/sys/fs/cgroup/blkio',
      pids: '/sys/fs/cgroup/pids',
    },
  );
  t.is(s.unified?.path, '/sys/fs/cgroup/unified');
});

test('a unified host: every controller from the v2 tree; a bind mount of a sub-tree is not a hierarchy', (t) => {
  const { mounts } = parseMountinfo(fixture('cgroup/mountinfo-unified'));
  t.deepEqual(mounts, [{ version: 2, path: '/sys/fs/cgroup', controllers: [] }]);
  const s = pickSources(mounts, ['cpuset', 'cpu', 'io', 'memory', 'pids']);
  t.deepEqual(Object.fromEntries([...s.byController].map(([c, m]) => [c, m.version])), { cpu: 2, memory: 2, io: 2, pids: 2, cpuacct: 2 });
  t.deepEqual([...pickSources(mounts, []).byController.keys()], ['cpuacct'], 'without controllers, only the usage every v2 cgroup reports');
});

test('mountinfo lines without the separator are counted, not fatal; escaped mount points are decoded', (t) => {
  const r = parseMountinfo('garbage line\n40 31 0:37 / /sys/fs/cgroup/my\\040cpu rw - cgroup cgroup rw,cpu,cpuacct\n');
  t.is(r.skipped, 1);
  t.deepEqual(r.mounts, [{ version: 1, path: '/sys/fs/cgroup/my cpu', controllers: ['cpu', 'cpuacct'] }]);
});

test('cgroups are listed breadth first down to the depth limit', (t) => {
  const root = mkdtempSync(join(tmpdir(), 'rezolus-cgwalk-'));
  t.teardown(() => rmSync(root, { recursive: true, force: true }));
  for (const d of ['b.slice/x.service/deep', 'a.slice/y.service', 'a.slice/z.scope']) mkdirSync(join(root, d), { recursive: true });
  t.deepEqual(listCgroups(root, 0), ['/']);
  t.deepEqual(listCgroups(root, 2), ['/', '/a.slice', '/b.slice', '/a.slice/y.service', '/a.slice/z.scope', '/b.slice/x.service']);
  t.deepEqual(listCgroups(join(root, 'missing'), 3), ['/']);
});

test('at most max cgroups keep series; a cgroup keeps its place while it exists, freed places go to newcomers', (t) => {
  const s = new CgroupSelection(3);
  t.deepEqual(s.update(['/', '/a', '/b', '/c', '/d']), { kept: ['/', '/a', '/b'], folded: ['/c', '/d'] });
  // /a goes away: its place goes to the first folded newcomer in listing order
  t.deepEqual(s.update(['/', '/0', '/b', '/c', '/d']), { kept: ['/', '/0', '/b'], folded: ['/c', '/d'] });
  t.deepEqual(s.update(['/', '/0', '/b']), { kept: ['/', '/0', '/b'], folded: [] });
});

test('CPU usage: the exact total split in the proportion of the tick-sampled user/system, never going back', async (t) => {
  const { splitUsage } = await import('../../src/samplers/cgroup/read.js');
  const figures = (usageNs: number | bigint | undefined, userNs: number, systemNs: number) => ({
    pressure: new Map(), io: new Map(), skipped: 0, userNs, systemNs, ...(usageNs === undefined ? {} : { usageNs }),
  });
  // measured here under a 10 % quota: 456 + 16 ms of ticks for 374 ms of usage
  t.deepEqual(splitUsage(figures(374_256_039, 456_000_000, 16_000_000), undefined), { user: 361_569_393n, system: 12_686_646n });
  t.deepEqual(splitUsage(figures(undefined, 5, 7), undefined), { user: 5n, system: 7n }, 'no exact total: the split as given');
  t.deepEqual(splitUsage(figures(1000, 0, 0), undefined), { user: 0n, system: 0n });
  // the proportion moved towards system: user stays where it was
  t.deepEqual(splitUsage(figures(1100, 500, 600), { user: 900n, system: 100n }), { user: 900n, system: 600n });
  t.deepEqual(splitUsage(figures(2n ** 60n, 3, 1), undefined), { user: 3n * 2n ** 58n, system: 2n ** 58n }, 'bigint past 2^53');
});
