/**
 * A 3-node JetStream cluster on loopback, started from the shipped
 * docker/nats/cluster.conf with the environment docker/compose.yaml gives each
 * node (NATS_NAME, NATS_ROUTE_PASSWORD, NATS_ROUTES), with only the ports, the
 * route hosts and the store dirs replaced, so the tests prove the files users run.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { ROOT } from '../../scripts/gen-docs.js';
import { loadCompose } from './deploy.js';
import { freePort, natsAnswers, portTakenIn } from '../../src/up/nats-server.js';
import { NATS_SERVER_BIN, reapOrphans } from './nats.js';
import { until } from './until.js';

const DIR_PREFIX = join(tmpdir(), 'rezolus-cluster-test-');

// cluster nodes orphaned by a killed run: their config file is in one of our temp dirs
reapOrphans((cmd) => {
  const config = cmd[cmd.indexOf('-c') + 1] ?? '';
  return config.startsWith(DIR_PREFIX) ? dirname(config) : undefined;
});

export interface ClusterNode {
  readonly name: string;
  readonly port: number;
  readonly configFile: string;
  readonly storeDir: string;
  /** the monitoring port (/jsz answers for this node's own replicas) */
  readonly httpPort: number;
  /** NATS_NAME, NATS_ROUTE_PASSWORD and NATS_ROUTES as compose.yaml gives them, routes on loopback */
  readonly env: Readonly<Record<string, string>>;
  process: ChildProcess;
}

export interface TestCluster {
  readonly nodes: readonly ClusterNode[];
  /** all three client URLs, comma-separated (what [nats] url takes) */
  readonly url: string;
  node(name: string): ClusterNode;
  kill(name: string): Promise<void>;
  restart(name: string): Promise<void>;
  /** kill -9, remove the node's whole store (as a lost disk), start it again empty */
  wipe(name: string): Promise<void>;
  dispose(): Promise<void>;
}

export const CLUSTER_CONF = join(ROOT, 'docker', 'nats', 'cluster.conf');

/** The shipped node config with this machine's ports and store (the route URLs are in NATS_ROUTES). */
export function localConfig(text: string, o: { port: number; httpPort: number; routePort: number; storeDir: string }): string {
  const out = text
    .replace(/^listen: .*$/m, `listen: 127.0.0.1:${o.port}`)
    .replace(/^http: .*$/m, `http: 127.0.0.1:${o.httpPort}`)
    .replace(/store_dir: .*$/m, `store_dir: ${JSON.stringify(o.storeDir)}`)
    .replace(/^(\s+)listen: .*$/m, `$1listen: 127.0.0.1:${o.routePort}`);
  for (const port of [o.port, o.httpPort, o.routePort]) if (!out.includes(`:${port}`)) throw new Error(`docker/nats/cluster.conf: could not place port ${port}`);
  return out;
}

/** A node's environment from compose.yaml, its route URLs pointed at the loopback route ports. */
export function nodeEnv(name: string, routePorts: readonly number[]): Record<string, string> {
  const service = loadCompose().services[`nats-${name.slice(1)}`];
  const env = service?.environment ?? {};
  const routes = env.NATS_ROUTES ?? '';
  const local = routes.replace(/@nats-(\d):6222/g, (_m, i: string) => `@127.0.0.1:${routePorts[Number(i) - 1] ?? 0}`);
  if (env.NATS_NAME !== name || local === routes) throw new Error(`docker/compose.yaml: nats-${name.slice(1)} has no NATS_NAME ${name} or no routes to nats-N:6222`);
  return { NATS_NAME: env.NATS_NAME, NATS_ROUTE_PASSWORD: env.NATS_ROUTE_PASSWORD ?? '', NATS_ROUTES: local };
}

function readText(file: string): string {
  try {
    return readFileSync(file, 'utf8');
  } catch {
    return '';
  }
}

async function waitListening(port: number, child: ChildProcess, ms: number): Promise<void> {
  const until = Date.now() + ms;
  while (Date.now() < until) {
    if (child.exitCode !== null) throw new Error(`nats-server exited with ${child.exitCode}`);
    if (await natsAnswers('127.0.0.1', port, 200)) return;
    await new Promise((r) => setTimeout(r, 50));
  }
  throw new Error(`nats-server on ${port} did not answer within ${ms} ms`);
}

export interface ClusterOptions {
  /** the text of auth.conf, the client users the config includes (default: the shipped docker/nats/auth.conf, none) */
  readonly auth?: string;
}

/**
 * Starts the cluster on nine free ports. A port free when picked may be taken
 * before its node binds (by another test, or as an outgoing connection's
 * ephemeral port): then the whole cluster starts again on new ports.
 */
export async function startCluster(o: ClusterOptions = {}): Promise<TestCluster> {
  for (let attempt = 1; ; attempt++) {
    try {
      return await startClusterOnce(o);
    } catch (error) {
      if (!(error instanceof PortTaken) || attempt === 5) throw error;
    }
  }
}

class PortTaken extends Error {}

async function startClusterOnce(o: ClusterOptions): Promise<TestCluster> {
  const dir = mkdtempSync(DIR_PREFIX);
  const ports = await Promise.all([0, 1, 2].map(() => freePort()));
  const routePorts = await Promise.all([0, 1, 2].map(() => freePort()));
  const httpPorts = await Promise.all([0, 1, 2].map(() => freePort()));
  const nodes: ClusterNode[] = [];
  const launch = (node: Omit<ClusterNode, 'process'>): ChildProcess =>
    spawn(NATS_SERVER_BIN, ['-c', node.configFile, '-l', join(dir, `${node.name}.log`)], { stdio: 'ignore', env: { PATH: process.env.PATH, ...node.env } });
  const text = readFileSync(CLUSTER_CONF, 'utf8');
  // the config includes auth.conf from its own directory
  writeFileSync(join(dir, 'auth.conf'), o.auth ?? readFileSync(join(dirname(CLUSTER_CONF), 'auth.conf'), 'utf8'));
  for (let i = 0; i < 3; i++) {
    const name = `n${i + 1}`;
    const storeDir = join(dir, name);
    mkdirSync(storeDir);
    const configFile = join(dir, `${name}.conf`);
    writeFileSync(configFile, localConfig(text, { port: ports[i] as number, httpPort: httpPorts[i] as number, routePort: routePorts[i] as number, storeDir }));
    const base = { name, port: ports[i] as number, configFile, storeDir, httpPort: httpPorts[i] as number, env: nodeEnv(name, routePorts) };
    nodes.push({ ...base, process: launch(base) });
  }
  const self: TestCluster = {
    nodes,
    url: nodes.map((n) => `nats://127.0.0.1:${n.port}`).join(','),
    node(name) {
      const n = nodes.find((x) => x.name === name);
      if (n === undefined) throw new Error(`no node ${name}`);
      return n;
    },
    async kill(name) {
      const n = self.node(name);
      if (n.process.exitCode !== null || n.process.signalCode !== null) return;
      n.process.kill('SIGKILL');
      await new Promise((r) => n.process.once('exit', r));
    },
    async restart(name) {
      const n = self.node(name);
      await self.kill(name);
      n.process = launch(n);
      await waitListening(n.port, n.process, 10_000);
    },
    async wipe(name) {
      const n = self.node(name);
      await self.kill(name);
      rmSync(n.storeDir, { recursive: true, force: true });
      mkdirSync(n.storeDir);
      await self.restart(name);
    },
    async dispose() {
      for (const n of nodes) await self.kill(n.name);
      rmSync(dir, { recursive: true, force: true });
    },
  };
  try {
    for (const n of nodes) await waitListening(n.port, n.process, 10_000);
  } catch (error) {
    const taken = nodes.some((n) => portTakenIn(readText(join(dir, `${n.name}.log`))));
    await self.dispose();
    throw taken ? new PortTaken(`a port was taken before its node bound (${String(error)})`) : error;
  }
  return self;
}

/** Whether a node's /healthz answers 200: its JetStream is up and current with the meta leader. */
async function nodeHealthy(node: ClusterNode): Promise<boolean> {
  const ac = new AbortController();
  const timer = setTimeout(() => ac.abort(), 3000);
  try {
    return (await fetch(`http://127.0.0.1:${node.httpPort}/healthz`, { signal: ac.signal })).status === 200;
  } catch {
    return false;
  } finally {
    clearTimeout(timer);
  }
}

/**
 * Waits until every node's /healthz answers 200, as docker/compose.yaml
 * does before it starts the rezolus services (depends_on: service_healthy;
 * the nodes' healthcheck gets /healthz). Until then a fresh cluster may
 * have no JetStream meta leader. False after `ms`.
 */
export async function clusterHealthy(cluster: TestCluster, ms = 60_000): Promise<boolean> {
  return until(async () => (await Promise.all(cluster.nodes.map(nodeHealthy))).every((ok) => ok), ms);
}
