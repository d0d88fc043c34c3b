import test from 'ava';
import { silentLogger } from '../../src/log/logger.js';
import { SAMPLERS } from '../../src/samplers/registry.js';
import type { AgentIntrospection } from '../../src/samplers/rezolus/introspection.js';
import type { Reading } from '../../src/samplers/types.js';
import { PROC, SYS } from '../helpers/fixtures.js';

/** rezolus_self reads the agent; a fixed stand-in makes it deterministic. */
const agent: AgentIntrospection = {
  samplerStats: () => [{ name: 'cpu_usage', refreshNs: 5000n, refreshes: 1, errors: 0, skipped: 0, overruns: 0 }],
  publishStats: () => ({ published: 1, dropped: 0, retries: 0, buffered: 0, bufferedBytes: 0 }),
  samplerStates: () => [{ name: 'cpu_usage', state: 'active' }, { name: 'cpu_perf', state: 'degraded' }],
};

for (const definition of SAMPLERS) {
  test(`${definition.name}: a stable layout of declared, unique series on the fixture root`, async (t) => {
    const s = await definition.init({ procRoot: PROC, sysRoot: SYS, log: silentLogger(), agent });
    // a kernel sampler's layout may grow between two refreshes (network_drops: a drop reason seen
    // for the first time on the live kernel); the layout must then stay put once it has grown
    let a: Reading = await s.refresh();
    let b: Reading = await s.refresh();
    for (let tries = 0; tries < 5 && b.points.length > a.points.length; tries++) [a, b] = [b, await s.refresh()];
    t.is(a.skipped, 0);
    t.true(a.points.length > 0);
    // the agent compares layouts by identity: same metric and label objects, same order
    t.is(b.points.length, a.points.length);
    a.points.forEach((p, i) => {
      t.is(b.points[i]?.metric, p.metric, `point ${i} metric`);
      t.is(b.points[i]?.labels, p.labels, `point ${i} labels object`);
    });
    const seen = new Set<string>();
    for (const p of a.points) {
      t.true(definition.metrics.includes(p.metric), `${p.metric.name} is declared by ${definition.name}`);
      t.deepEqual(Object.keys(p.labels).sort(), [...p.metric.labels].sort(), `${p.metric.name} label keys`);
      const key = `${p.metric.name}${JSON.stringify(p.labels)}`;
      t.false(seen.has(key), `duplicate series ${key}`);
      seen.add(key);
    }
    await s.close?.();
  });
}
