import test from 'ava';
import { silentLogger } from '../../src/log/logger.js';
import type { AgentIntrospection, SamplerStats, SamplerStateName } from '../../src/samplers/rezolus/introspection.js';
import { rezolusSelfSampler } from '../../src/samplers/rezolus/self/sampler.js';
import type { Point } from '../../src/samplers/types.js';

/** An agent whose figures the test sets. */
class Figures implements AgentIntrospection {
  stats: SamplerStats[] = [];
  states: { name: string; state: SamplerStateName }[] = [];
  published = 0;
  samplerStats(): readonly SamplerStats[] {
    return this.stats;
  }
  samplerStates(): readonly { readonly name: string; readonly state: SamplerStateName }[] {
    return this.states;
  }
  publishStats() {
    return { published: this.published, dropped: 0, retries: 0, refused: 0, buffered: 0, bufferedBytes: 0 };
  }
}

const stats = (name: string, refreshes: number): SamplerStats => ({ name, refreshNs: BigInt(refreshes) * 1000n, refreshes, errors: 0, skipped: 0, overruns: 0 });
const seriesValue = (points: readonly Point[], metric: string, labels: Record<string, string> = {}): unknown =>
  points.find((p) => p.metric.name === metric && Object.entries(labels).every(([k, v]) => p.labels[k] === v))?.value;

test('rezolus_self writes new values into the points of an unchanged layout, and makes new points when the samplers change', async (t) => {
  const agent = new Figures();
  agent.stats = [stats('a', 1)];
  agent.states = [{ name: 'a', state: 'active' }, { name: 'b', state: 'disabled' }];
  const sampler = await rezolusSelfSampler.init({ procRoot: '/proc', sysRoot: '/sys', log: silentLogger(), agent });

  const first = (await sampler.refresh()).points;
  t.is(first.length, 10 + 5 + 2 * 5);
  t.is(seriesValue(first, 'rezolus_sampler_refreshes', { sampler: 'a' }), 1);
  t.is(seriesValue(first, 'rezolus_sampler_state', { sampler: 'b', state: 'disabled' }), 1);

  // same samplers: the same points, this refresh's values
  agent.stats = [stats('a', 2)];
  agent.states = [{ name: 'a', state: 'failed' }, { name: 'b', state: 'disabled' }];
  agent.published = 7;
  const second = (await sampler.refresh()).points;
  t.is(second, first);
  t.is(seriesValue(second, 'rezolus_sampler_refreshes', { sampler: 'a' }), 2);
  t.is(seriesValue(second, 'rezolus_sampler_refresh_time', { sampler: 'a' }), 2000n);
  t.is(seriesValue(second, 'rezolus_publish_frames'), 7);
  t.is(seriesValue(second, 'rezolus_sampler_state', { sampler: 'a', state: 'active' }), 0);
  t.is(seriesValue(second, 'rezolus_sampler_state', { sampler: 'a', state: 'failed' }), 1);

  // another sampler with stats: a new array (the agent's layout check compares arrays), with its series
  agent.stats = [stats('a', 3), stats('b', 1)];
  const third = (await sampler.refresh()).points;
  t.not(third, first);
  t.is(third.length, 10 + 2 * 5 + 2 * 5);
  t.is(seriesValue(third, 'rezolus_sampler_refreshes', { sampler: 'b' }), 1);
  t.is(seriesValue(first, 'rezolus_sampler_refreshes', { sampler: 'a' }), 2, 'the old array is left as it was');
});
