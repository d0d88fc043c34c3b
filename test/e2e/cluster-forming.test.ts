/**
 * An agent started before its cluster can answer JetStream (a deployment
 * without health checks, or nodes coming up after the agents): the shipped
 * 3-node cluster with two nodes stopped has no meta leader and no quorum.
 * The agent waits and says what for, rather than exiting after one 5-s
 * request with "NATS has no JetStream", and runs once the nodes are back,
 * its stream at 3 replicas. Before: in test/e2e/deploy.test.ts the compose
 * agent, started as the nodes listened, sometimes never published (its one
 * JetStream request went out before the cluster had elected its leader).
 */
import test from 'ava';
import { jetstreamManager } from '@nats-io/jetstream';
import pino from 'pino';
import { runAgent, type RunningAgent } from '../../src/agent/main.js';
import { connectBus } from '../../src/bus/connect.js';
import { retryOnTimeout } from '../../src/bus/retry.js';
import { loadAgentConfig } from '../../src/config/agent.js';
import { silentLogger } from '../../src/log/logger.js';
import { SAMPLER_NAMES } from '../../src/samplers/registry.js';
import { startCluster, type TestCluster } from '../helpers/cluster.js';
import { NO_KERNEL, PROC, SYS } from '../helpers/fixtures.js';
import { until } from '../helpers/until.js';

const HOST = 'forming';

let cluster: TestCluster;
let agent: RunningAgent | undefined;

test.before(async () => {
  cluster = await startCluster();
});

test.after.always(async () => {
  await agent?.stop().catch(() => undefined);
  await cluster?.dispose();
});

interface Line {
  level: number;
  msg: string;
}

test('an agent started while its cluster has no JetStream meta leader waits, says what for, and runs once the nodes are back', async (t) => {
  t.timeout(180_000);
  // one node of three: no quorum, so no meta leader (or one that can place no stream at 3 replicas)
  await cluster.kill('n2');
  await cluster.kill('n3');
  const lines: Line[] = [];
  const log = pino({ level: 'info' }, { write: (s: string) => void lines.push(JSON.parse(s) as Line) });
  const config = loadAgentConfig(undefined, SAMPLER_NAMES, { host: HOST, natsUrl: cluster.url, intervalMs: 500 });
  const starting = runAgent({ ...config, procfs: PROC, sysfs: SYS, kernel: NO_KERNEL, http: undefined, stream: { ...config.stream, replicas: 3 } }, log);
  let failed: unknown;
  starting.then((a) => (agent = a), (error: unknown) => (failed = error));

  const waiting = (): Line | undefined => lines.find((l) => l.level === 40 && /does not answer yet/.test(l.msg));
  t.true(await until(() => waiting() !== undefined || failed !== undefined, 60_000), `the agent says it waits; log: ${lines.map((l) => l.msg).join(' | ')}`);
  t.is(failed, undefined, 'it waits instead of failing');
  t.regex(waiting()?.msg ?? '', /^(JetStream at nats:\/\/127\.0\.0\.1:\d+(,nats:\/\/127\.0\.0\.1:\d+){2}|stream REZOLUS and its buckets at 3 replicas) does not answer yet \(a cluster that has not elected its JetStream meta leader/);
  t.is(agent, undefined, 'not running yet');

  await cluster.restart('n2');
  await cluster.restart('n3');
  t.true(await until(() => agent !== undefined || failed !== undefined, 120_000), `the agent runs once the cluster is back; log: ${lines.map((l) => l.msg).join(' | ')}`);
  t.is(failed, undefined);
  const said = lines.map((l) => l.msg);
  t.true(said.some((m) => /answers after \d+ s$/.test(m)), 'and says the wait is over');
  t.true(said.indexOf('agent running') > said.findIndex((m) => /does not answer yet/.test(m)));

  const nc = await connectBus({ url: cluster.url, name: 'forming-observer', log: silentLogger() });
  try {
    const jsm = await retryOnTimeout(() => jetstreamManager(nc));
    const stored = async (): Promise<number> => {
      const info = await jsm.streams.info('REZOLUS', { subjects_filter: `rezolus.metrics.${HOST}.>` }).catch(() => undefined);
      return info === undefined ? 0 : Object.values(info.state.subjects ?? {}).reduce((a, b) => a + b, 0);
    };
    t.true(await until(async () => (await stored()) >= 5, 60_000), 'frames stored');
    t.is((await retryOnTimeout(() => jsm.streams.info('REZOLUS'))).config.num_replicas, 3);
  } finally {
    await nc.close();
  }
});
