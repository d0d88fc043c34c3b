/**
 * What the validators do not check: every rezolus command line in docker/compose.yaml, the
 * systemd units and the Kubernetes manifests is one the CLI accepts for its mode (parsed by the
 * CLI's own parseMode with each mode's option table, as `rezolus <mode> ARGS` would be), every
 * config file they name is shipped in config/, and their ports are the configs'.
 */
import test from 'ava';
import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { parse } from 'yaml';
import { loadAgentConfig } from '../../src/config/agent.js';
import { loadAlertsConfig } from '../../src/config/alerts.js';
import { metricCatalog } from '../../src/samplers/catalog.js';
import { loadExporterConfig } from '../../src/config/exporter.js';
import { loadHindsightConfig } from '../../src/config/hindsight.js';
import { SAMPLER_NAMES } from '../../src/samplers/registry.js';
import { type CommandLine, type K8sContainer, composeCommands, parseProblem, DOCKER_DIR, flagValue, k8sCommands, k8sContainers, loadCompose, loadK8s, ROOT, systemdCommands } from '../helpers/deploy.js';

/** A container that runs a shell script (`command: [/bin/sh, -c, SCRIPT]`, the bootstrap Job) rather than rezolus itself. */
const scriptOf = (c: K8sContainer): string | undefined => {
  const command = (c as K8sContainer & { command?: string[] }).command;
  return command?.[0] === '/bin/sh' && command[1] === '-c' ? command[2] : undefined;
};

/** How a script runs rezolus: the image's entrypoint. */
const SCRIPT_REZOLUS = 'node /opt/rezolus/bin/rezolus.js ';

/**
 * The rezolus command lines of the containers' scripts: each line that starts with the image's
 * entrypoint, its words up to the first redirection or `&`.
 */
function scriptCommands(): (CommandLine & { container: K8sContainer })[] {
  return k8sContainers().flatMap(({ where, container }) =>
    (scriptOf(container) ?? '')
      .split('\n')
      .map((l) => l.trim())
      .filter((l) => l.startsWith(SCRIPT_REZOLUS))
      .map((l) => {
        const words = l.slice(SCRIPT_REZOLUS.length).split(/\s+/);
        const end = words.findIndex((w) => w === '&' || /^\d?>/.test(w));
        return { where: `${where} (script)`, container, args: (end < 0 ? words : words.slice(0, end)).map((w) => w.replace(/^"(.*)"$/, '$1')) };
      }),
  );
}

const k8sScripted = (): Set<string> => new Set(k8sContainers().filter(({ container }) => scriptOf(container) !== undefined).map(({ where }) => where));
const all = (): CommandLine[] => [...composeCommands(), ...systemdCommands(), ...k8sCommands().filter((l) => !k8sScripted().has(l.where)), ...scriptCommands()];

test('the bootstrap Job runs rezolus setup on the cluster configs, and no container runs a shell script', (t) => {
  const job = k8sCommands().filter((l) => l.where.startsWith('k8s rezolus-bootstrap/'));
  t.deepEqual(job.map((l) => [l.args[0], flagValue(l.args, '--config'), flagValue(l.args, '--alerts')]), [['setup', '/etc/rezolus/cluster/agent.toml', '/etc/rezolus/cluster/alerts.toml']]);
  t.deepEqual([...k8sScripted()], [], 'no script: the image runs rezolus itself');
  t.deepEqual(scriptCommands(), []);
});

test('every command line of compose, systemd and k8s runs a mode with options that mode takes', (t) => {
  const lines = all();
  t.true(lines.length >= 15, `${lines.length} command lines`);
  const modes = new Set(lines.map((l) => l.args[0]));
  t.deepEqual([...modes].sort(), ['agent', 'alert', 'exporter', 'hindsight', 'setup', 'view'], 'each long-running mode is deployed, and setup');
  for (const l of lines) t.is(parseProblem(l.args), '', `${l.where}: rezolus ${l.args.join(' ')}`);
});

test('the check can fail: an option another mode takes, a misspelled one and a missing value are refused', (t) => {
  t.is(parseProblem(['exporter', '--procfs', '/host/proc']), 'option --procfs is not known to "rezolus exporter"');
  t.regex(parseProblem(['agent', '--sysfss', '/host/sys']), /Unknown option '--sysfss'/);
  t.regex(parseProblem(['agent', '--host']), /argument missing/);
  t.is(parseProblem(['agnet']), 'unknown mode agnet');
});

test('every config file a command names is shipped in config/ (the image copies config/ to /etc/rezolus)', (t) => {
  let n = 0;
  for (const l of all()) {
    const path = flagValue(l.args, '--config');
    if (path === undefined) continue;
    n++;
    t.true(path.startsWith('/etc/rezolus/'), `${l.where}: ${path}`);
    t.true(existsSync(join(ROOT, 'config', path.slice('/etc/rezolus/'.length))), `${l.where}: ${path} is not config/${path.slice('/etc/rezolus/'.length)}`);
  }
  t.true(n >= 12, `${n} config paths`);
  // Kubernetes mounts the ConfigMap rezolus-config over /etc/rezolus/cluster: it must hold each file named there
  const configMap = loadK8s().find((o) => o.object.kind === 'ConfigMap')?.object;
  const argsOf = [...k8sContainers().map(({ where, container }) => ({ where, container, args: container.args ?? [] })), ...scriptCommands()];
  for (const { where, container, args } of argsOf) {
    const path = flagValue(args, '--config') ?? '';
    if (!path.startsWith('/etc/rezolus/cluster/')) continue;
    t.true(container.volumeMounts?.some((m) => m.mountPath === '/etc/rezolus/cluster'), `${where} mounts the ConfigMap`);
    t.truthy(configMap?.data?.[path.slice('/etc/rezolus/cluster/'.length)], `${where}: ${path} in ConfigMap ${configMap?.metadata.name}`);
  }
});

const portOf = (hostPort: string | undefined): number => Number(/:(\d+)(?:\/\w+)?$/.exec(hostPort ?? '')?.[1]);

test('ports: the configs\' defaults, and the same viewer port everywhere', (t) => {
  const agent = loadAgentConfig(undefined, SAMPLER_NAMES).http?.port;
  const exporter = loadExporterConfig(undefined).listen.port;
  const hindsight = loadHindsightConfig(undefined, {}).listen?.port;
  const viewer = 4244;
  t.deepEqual([agent, exporter, hindsight], [4241, 4242, 4243]);
  const { services } = loadCompose();
  t.is(portOf(services.exporter?.ports?.[0]), exporter);
  t.is(portOf(flagValue(services.hindsight?.command ?? [], '--listen')), hindsight);
  t.is(portOf(services.hindsight?.ports?.[0]), hindsight);
  t.is(portOf(flagValue(services.viewer?.command ?? [], '--listen')), viewer);
  t.is(portOf(services.viewer?.ports?.[0]), viewer);
  // healthchecks ask each service's own port
  const health = (s: string): number => Number(/:(\d+)\//.exec(services[s]?.healthcheck?.test.at(-1) ?? '')?.[1]);
  t.deepEqual(['agent', 'exporter', 'hindsight', 'viewer'].map(health), [agent, exporter, hindsight, viewer]);
  // the NATS URLs reach the nodes' client port (cluster.conf listen) and the ports the nodes publish
  const natsPort = Number(/^listen: .*:(\d+)$/m.exec(readFileSync(join(DOCKER_DIR, 'nats', 'cluster.conf'), 'utf8'))?.[1]);
  t.is(natsPort, 4222);
  for (const s of ['exporter', 'hindsight', 'viewer', 'alert']) {
    t.deepEqual(services[s]?.environment?.REZOLUS_NATS_URL?.split(',').map((u) => new URL(u).port), ['4222', '4222', '4222'], s);
  }
  const published = ['nats-1', 'nats-2', 'nats-3'].map((n) => services[n]?.ports?.[0] ?? '');
  t.true(published.every((p) => p.endsWith(`:${natsPort}`)));
  t.deepEqual(services.agent?.environment?.REZOLUS_NATS_URL?.split(',').map((u) => new URL(u).port), published.map((p) => p.split(':')[1]));
  // Prometheus scrapes the exporter's port, as often as the exporter's window
  const prom = parse(readFileSync(join(DOCKER_DIR, 'prometheus.yml'), 'utf8')) as { scrape_configs: { job_name: string; scrape_interval: string; static_configs: { targets: string[] }[] }[] };
  const job = prom.scrape_configs.find((j) => j.job_name === 'rezolus');
  t.deepEqual(job?.static_configs[0]?.targets, [`exporter:${exporter}`]);
  t.is(job?.scrape_interval, flagValue(services.exporter?.command ?? [], '--interval'), 'scrape_interval = the exporter\'s --interval');
  // Kubernetes and systemd
  const ports = Object.fromEntries(k8sContainers().map(({ container }) => [container.name, container.ports?.[0]?.containerPort]));
  t.deepEqual([ports.exporter, ports.hindsight, ports.viewer], [exporter, hindsight, viewer]);
  const service = loadK8s().find((o) => o.object.kind === 'Service')?.object;
  t.deepEqual(service?.spec?.ports?.map((p) => p.port).sort(), [exporter, hindsight, viewer]);
  const view = systemdCommands().find((l) => l.args[0] === 'view');
  t.is(portOf(flagValue(view?.args ?? [], '--listen')), viewer);
  // the image exposes them all
  const expose = /^EXPOSE (.+)$/m.exec(readFileSync(join(DOCKER_DIR, 'Dockerfile'), 'utf8'))?.[1]?.split(/\s+/).map(Number);
  t.deepEqual(expose, [agent, exporter, hindsight, viewer]);
});

test('services that need each other wait for each other to be healthy', (t) => {
  const { services } = loadCompose();
  const rezolus = Object.entries(services).filter(([, s]) => s.image === 'rezolus-nats');
  for (const [name, s] of rezolus) {
    t.deepEqual(Object.keys(s.depends_on ?? {}).sort(), ['nats-1', 'nats-2', 'nats-3'], name);
    t.true(Object.values(s.depends_on ?? {}).every((d) => d.condition === 'service_healthy'), name);
    if (name !== 'agent') t.is(s.user, 'node', `${name} runs unprivileged`);
  }
  t.is(services.prometheus?.depends_on?.exporter?.condition, 'service_healthy');
  for (const n of ['nats-1', 'nats-2', 'nats-3']) t.truthy(services[n]?.healthcheck, n);
});

test('the cluster configs the fleet files name keep the stream, buckets and alert events at 3 replicas', (t) => {
  const agent = loadAgentConfig(join(ROOT, 'config/cluster/agent.toml'), SAMPLER_NAMES);
  t.is(agent.stream.replicas, 3);
  const alerts = loadAlertsConfig(join(ROOT, 'config/cluster/alerts.toml'), metricCatalog());
  t.is(alerts.replicas, 3);
  t.true(alerts.rules.length > 0, 'with the shipped rules');
  t.is(loadAgentConfig(join(ROOT, 'config/agent.toml'), SAMPLER_NAMES).stream.replicas, 1, 'config/agent.toml stays at 1 (one server)');
});
