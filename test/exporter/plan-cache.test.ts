import test from 'ava';
import { planOf } from '../../src/exporter/plan.js';
import { renderExposition } from '../../src/exporter/render.js';
import { ExporterState } from '../../src/exporter/state.js';
import { SECOND, m, makeDescriptor, makeFrame } from '../helpers/frames.js';

/** a descriptor of its own per test: plans (and their caches) are per descriptor */
const probe = (k: string) => makeDescriptor('cache_probe', { cache_probe: m('gauge', 'count', ['k'], 'Probe') }, [['cache_probe', [k]]]);

function fleet(d: ReturnType<typeof probe>, prefix: string, hosts: number): ExporterState {
  const state = new ExporterState({ intervalNs: SECOND });
  for (let h = 0; h < hosts; h++) state.ingest(makeFrame({ host: `${prefix}${h}`, descriptor: d, values: [h] }));
  return state;
}

test('past 1024 hosts, the hosts still rendered keep their cached line prefixes from render to render', (t) => {
  const d = probe('live');
  const state = fleet(d, 'live-', 1100);
  renderExposition(state.view(SECOND));
  const plan = planOf(d);
  const before = new Map(plan.prefixes);
  t.is(before.size, 1100);
  const r = renderExposition(state.view(SECOND));
  t.is(r.series, 1100);
  // not one prefix rebuilt (they were all dropped and rebuilt on every render before)
  t.true([...before].every(([host, p]) => plan.prefixes.get(host) === p));
});

test('hosts no render uses any more are let go once a plan caches 1024 hosts', (t) => {
  const d = probe('churn');
  renderExposition(fleet(d, 'gone-', 1000).view(SECOND));
  renderExposition([]); // a render without them: they are not among the last two renders' hosts any more
  const now = fleet(d, 'now-', 1100);
  renderExposition(now.view(SECOND));
  renderExposition(now.view(SECOND));
  const hosts = [...planOf(d).prefixes.keys()];
  t.is(hosts.length, 1100);
  t.true(hosts.every((h) => h.startsWith('now-')));
});
