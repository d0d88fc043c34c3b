/**
 * docker/compose.yaml run here without Docker: the three NATS nodes from the shipped
 * docker/nats/cluster.conf with the environment compose gives them (startCluster; only ports,
 * route hosts and store dirs are loopback ones), then the agent and the exporter with the
 * command lines and environment compose gives them, read from compose.yaml: the container
 * paths they name become the host paths compose mounts there (the image's /etc/rezolus is
 * config/), the NATS URLs the loopback nodes, and the exporter gets a free port. Frames arrive
 * in the stream at 3 replicas, /metrics serves them, and the image's healthcheck says so.
 */
import test from 'ava';
import { jetstreamManager } from '@nats-io/jetstream';
import { type ChildProcess, spawn, spawnSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { connectBus } from '../../src/bus/connect.js';
import { retryOnTimeout } from '../../src/bus/retry.js';
import { freePort } from '../../src/up/nats-server.js';
import { silentLogger } from '../../src/log/logger.js';
import { clusterHealthy, startCluster, type TestCluster } from '../helpers/cluster.js';
import { COMPOSE_ENV, type ComposeService, loadCompose, ROOT } from '../helpers/deploy.js';
import { rezolusArgv } from '../helpers/rezolus-cli.js';
import { until } from '../helpers/until.js';

const HOST = COMPOSE_ENV.REZOLUS_HOST as string;
let cluster: TestCluster;
const children: ChildProcess[] = [];

test.before(async () => {
  cluster = await startCluster();
  // as compose starts the agent and exporter: once every node is healthy (depends_on: service_healthy)
  if (!(await clusterHealthy(cluster))) throw new Error('the cluster\'s nodes did not answer 200 on /healthz within 60 s');
});
test.after.always(async () => {
  for (const c of children) if (c.exitCode === null) c.kill('SIGKILL');
  await cluster?.dispose();
});

/** Container path -> host path: the service's bind mounts, and the image's COPY config /etc/rezolus. */
function hostPath(service: ComposeService, arg: string): string {
  const mounts: [string, string][] = [['/etc/rezolus', join(ROOT, 'config')]];
  for (const v of service.volumes ?? []) {
    const [src, dst] = v.split(':');
    if (src?.startsWith('/') && dst !== undefined) mounts.push([dst, src]);
  }
  const hit = mounts.filter(([dst]) => arg === dst || arg.startsWith(`${dst}/`)).sort((a, b) => b[0].length - a[0].length)[0];
  return hit === undefined ? arg : hit[1] + arg.slice(hit[0].length);
}

/** A compose NATS URL list pointed at the loopback nodes: nats-N:4222 by name, or the port nats-N publishes. */
function localUrls(urls: string, services: Record<string, ComposeService>): string {
  return urls.split(',').map((u) => {
    const url = new URL(u);
    const n = /^nats-(\d)$/.exec(url.hostname)?.[1] ?? ['1', '2', '3'].find((i) => services[`nats-${i}`]?.ports?.[0]?.split(':')[1] === url.port);
    if (n === undefined) throw new Error(`compose NATS URL ${u} names no node`);
    return `nats://127.0.0.1:${cluster.node(`n${n}`).port}`;
  }).join(',');
}

function start(name: string, extra: readonly string[] = []): { child: ChildProcess; args: string[]; stderr: () => string } {
  const { services } = loadCompose();
  const s = services[name] as ComposeService;
  const args = [...(s.command ?? []).map((a) => hostPath(s, a)), ...extra];
  const env: NodeJS.ProcessEnv = { ...process.env, ...s.environment };
  env.REZOLUS_NATS_URL = localUrls(s.environment?.REZOLUS_NATS_URL ?? '', services);
  const child = spawn(process.execPath, rezolusArgv(...args), { cwd: ROOT, env, stdio: ['ignore', 'ignore', 'pipe'] });
  let err = '';
  child.stderr?.on('data', (b: Buffer) => (err = (err + b.toString()).slice(-4000)));
  children.push(child);
  return { child, args, stderr: () => err };
}

const healthcheck = (url: string) => spawnSync(process.execPath, [join(ROOT, 'docker', 'healthcheck.mjs'), url], { encoding: 'utf8', timeout: 20_000 });

test('the compose agent and exporter on the shipped 3-node cluster: frames stored at R3, served on /metrics', async (t) => {
  t.timeout(150_000);
  const agent = start('agent');
  t.deepEqual(agent.args.slice(0, 8), ['agent', '--config', join(ROOT, 'config/cluster/agent.toml'), '--procfs', '/proc', '--sysfs', '/sys', '--host']);
  const port = await freePort();
  // the one change: a free port, as 4242 may be taken here (the last --listen wins)
  const exporter = start('exporter', ['--listen', `127.0.0.1:${port}`]);
  const url = `http://127.0.0.1:${port}/metrics`;

  const nc = await connectBus({ url: cluster.url, name: 'deploy-observer', log: silentLogger() });
  try {
    // a JetStream API call can time out on a loaded machine: asked again, as consumers do
    const api = await retryOnTimeout(() => jetstreamManager(nc));
    const stored = async (): Promise<number> => {
      const info = await api.streams.info('REZOLUS', { subjects_filter: `rezolus.metrics.${HOST}.>` }).catch(() => undefined);
      return info === undefined ? 0 : Object.values(info.state.subjects ?? {}).reduce((a, b) => a + b, 0);
    };
    t.true(await until(async () => (await stored()) >= 20, 90_000), `frames of ${HOST} in the stream; agent: ${agent.stderr().slice(-1500)}`);
    // a JetStream API call can time out on a loaded machine: asked again, as consumers do
    const info = await retryOnTimeout(() => api.streams.info('REZOLUS'));
    t.is(info.config.num_replicas, 3, 'config/cluster/agent.toml: [stream] replicas = 3');
    t.is(info.cluster?.replicas?.length, 2, 'a leader and two replicas');
    for (const bucket of ['KV_rezolus_descriptors', 'KV_rezolus_status']) t.is((await retryOnTimeout(() => api.streams.info(bucket))).config.num_replicas, 3, bucket);

    // the lines asserted, each sampler's frames arriving in their own time (rezolus_cpu_usage_seconds_total{ is not cpu_usage's)
    const cpu = new RegExp(`^cpu_usage_seconds_total\\{[^}]*host="${HOST}"`, 'm');
    const memory = new RegExp(`^memory_total_bytes\\{host="${HOST}"\\} \\d+`, 'm');
    let body = '';
    t.true(await until(async () => {
      body = await fetch(url).then((r) => r.text()).catch(() => '');
      return cpu.test(body) && memory.test(body);
    }, 60_000), `the exporter serves ${HOST}'s cpu_usage and memory_meminfo; exporter: ${exporter.stderr().slice(-1500)}`);
    // figures for the README's sizing: the stream's bytes per second of one host, each node's RSS
    let state = info.state;
    await until(async () => {
      state = (await retryOnTimeout(() => api.streams.info('REZOLUS'))).state;
      return Date.parse(state.last_ts) - Date.parse(state.first_ts) >= 5000;
    }, 60_000);
    const spanS = (Date.parse(state.last_ts) - Date.parse(state.first_ts)) / 1000;
    const rss = cluster.nodes.map((n) => Number(/VmRSS:\s+(\d+)/.exec(readFileSync(`/proc/${n.process.pid}/status`, 'utf8'))?.[1] ?? 0) >> 10);
    t.log(`stream: ${state.messages} frames, ${state.bytes} B over ${spanS.toFixed(1)} s (${Math.round(state.bytes / Math.max(spanS, 1))} B/s for one host, ${Math.round(state.bytes / state.messages)} B/frame stored); nats-server RSS ${rss.join(', ')} MiB`);
    const healthy = healthcheck(url);
    t.is(healthy.status, 0, healthy.stderr);
    const closed = healthcheck(`http://127.0.0.1:${await freePort()}/metrics`);
    t.is(closed.status, 1);
    t.regex(closed.stderr, /ECONNREFUSED/);
  } finally {
    await nc.close();
  }
  // both stop cleanly on SIGTERM, as docker stop sends it
  for (const p of [agent, exporter]) {
    const exit = new Promise<number | null>((r) => p.child.once('exit', (code) => r(code)));
    p.child.kill('SIGTERM');
    t.is(await exit, 0, p.stderr().slice(-1000));
  }
});
