/**
 * The deployment files through the validators their ecosystems use (there is no Docker engine
 * here): dclint and docker-compose 1.29 on the compose file, nats-server -t on the cluster
 * config, promtool on the Prometheus config, shellcheck on every shell script, systemd-analyze
 * on the units, the upstream Kubernetes OpenAPI schemas on the manifests. Each also gets a
 * broken copy, to show it can fail. scripts/test.mjs installs the Debian tools.
 */
import test from 'ava';
import { copyFileSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { parseAllDocuments } from 'yaml';
import * as appsV1 from 'kubernetes-models/apps/v1';
import * as batchV1 from 'kubernetes-models/batch/v1';
import * as coreV1 from 'kubernetes-models/v1';
import { bin, COMPOSE_ENV, COMPOSE_FILE, DOCKER_DIR, K8S_DIR, k8sFiles, parseUnit, ROOT, run, SYSTEMD_DIR, unitFiles } from '../helpers/deploy.js';

let dir: string;
test.before(() => {
  dir = mkdtempSync(join(tmpdir(), 'rezolus-deploy-'));
});
test.after.always(() => rmSync(dir, { recursive: true, force: true }));

/** A copy of a shipped file with one edit, in a fresh directory; the edit must apply. */
function broken(path: string, from: string | RegExp, to: string, name = path.split('/').pop() as string): string {
  const text = readFileSync(path, 'utf8');
  const changed = text.replace(from, to);
  if (changed === text) throw new Error(`the edit ${String(from)} does not apply to ${path}`);
  const sub = mkdtempSync(join(dir, 'case-'));
  writeFileSync(join(sub, name), changed);
  return join(sub, name);
}

// Style rules left out: key order and service order (the file is ordered by data flow), and
// `name:`, which docker-compose 1.29 refuses.
const DCLINT = (file: string) => run(bin('dclint'), [file, '--max-warnings', '0', '--disable-rule', 'service-keys-order', 'services-alphabetical-order', 'top-level-properties-order', 'require-project-name-field']);

test('dclint: compose.yaml passes the compose schema and its rules with no warning; a typo fails', (t) => {
  const ok = DCLINT(COMPOSE_FILE);
  t.is(ok.status, 0, ok.output2);
  const typo = DCLINT(broken(COMPOSE_FILE, 'privileged: true', 'privilegd: true', 'compose.yaml'));
  t.is(typo.status, 1);
  t.regex(typo.output2, /services\/agent.*must NOT have additional properties/);
  const condition = DCLINT(broken(COMPOSE_FILE, 'condition: service_healthy', 'condition: service_ready', 'compose.yaml'));
  t.is(condition.status, 1, condition.output2);
});

const COMPOSE_V1 = '/usr/bin/docker-compose';
const composeConfig = (file: string, env: Record<string, string> = COMPOSE_ENV) =>
  run(COMPOSE_V1, ['-f', file, '--project-directory', DOCKER_DIR, 'config', '-q'], { env: { ...process.env, ...env } });

test('docker-compose 1.29 config -q: valid with the required variables set; refuses a typo and a missing variable', (t) => {
  const ok = composeConfig(COMPOSE_FILE);
  t.is(ok.status, 0, ok.output2);
  t.notRegex(ok.output2, /WARNING/);
  t.is(composeConfig(broken(COMPOSE_FILE, 'network_mode: host', 'network_mod: host', 'compose.yaml')).status, 1);
  const { NATS_ROUTE_PASSWORD: _, ...without } = COMPOSE_ENV;
  const missing = run(COMPOSE_V1, ['-f', COMPOSE_FILE, 'config', '-q'], { env: { PATH: process.env.PATH, ...without } });
  t.is(missing.status, 1);
  t.regex(missing.output2, /NATS_ROUTE_PASSWORD/);
});

const CLUSTER_CONF = join(DOCKER_DIR, 'nats', 'cluster.conf');
const NATS_ENV = { NATS_NAME: 'n1', NATS_ROUTE_PASSWORD: 'x', NATS_ROUTES: '[nats-route://route:x@nats-1:6222, nats-route://route:x@nats-2:6222, nats-route://route:x@nats-3:6222]' };

test('nats-server -t: the cluster config is valid for nats-server 2.9 with the variables compose sets; not without them, nor with a misspelled key', (t) => {
  const check = (file: string, env: Record<string, string>) => run('/usr/sbin/nats-server', ['-t', '-c', file], { env: { PATH: process.env.PATH, ...env } });
  const ok = check(CLUSTER_CONF, NATS_ENV);
  t.is(ok.status, 0, ok.output2);
  t.regex(ok.output2, /is valid/);
  const { NATS_NAME: _, ...noName } = NATS_ENV;
  const unset = check(CLUSTER_CONF, noName);
  t.is(unset.status, 1);
  t.regex(unset.output2, /NATS_NAME/);
  const file = broken(CLUSTER_CONF, 'max_file_store', 'max_file_stor', 'cluster.conf');
  copyFileSync(join(DOCKER_DIR, 'nats', 'auth.conf'), join(file, '..', 'auth.conf'));
  const typo = check(file, NATS_ENV);
  t.is(typo.status, 1, typo.output2);
});

test('promtool check config: prometheus.yml is valid; a bad duration is not', (t) => {
  const ok = run('/usr/bin/promtool', ['check', 'config', join(DOCKER_DIR, 'prometheus.yml')]);
  t.is(ok.status, 0, ok.output2);
  t.is(run('/usr/bin/promtool', ['check', 'config', broken(join(DOCKER_DIR, 'prometheus.yml'), 'scrape_interval: 15s\n  evaluation', 'scrape_interval: 15 seconds\n  evaluation')]).status, 1);
});

/** Every shell script shipped for deployment: *.sh, or a file with a sh/bash shebang. */
function shellScripts(): string[] {
  const out: string[] = [];
  for (const d of ['docker', 'docker/nats', 'systemd', 'k8s', 'scripts', 'bin']) {
    for (const f of readdirSync(join(ROOT, d), { withFileTypes: true })) {
      if (!f.isFile()) continue;
      const path = join(ROOT, d, f.name);
      if (f.name.endsWith('.sh') || /^#!\s*\S*\/(env +)?(ba)?sh\b/.test(readFileSync(path, 'utf8').slice(0, 40))) out.push(path);
    }
  }
  return out;
}

test('shellcheck: every shipped shell script is clean; an unquoted expansion is not', (t) => {
  const scripts = shellScripts();
  t.true(scripts.some((s) => s.endsWith('docker/nats-auth.sh')), scripts.join(' '));
  for (const s of scripts) {
    const r = run('/usr/bin/shellcheck', [s]);
    t.is(r.status, 0, `${s}: ${r.output2}`);
  }
  t.is(run('/usr/bin/shellcheck', [broken(join(DOCKER_DIR, 'nats-auth.sh'), 'mkdir -p "$secrets"', 'mkdir -p $secrets')]).status, 1);
});

/** systemd-analyze verify prints unknown keys and bad values as warnings with exit 0: any output fails. */
function verify(files: readonly string[]): string {
  const r = run('/usr/bin/systemd-analyze', ['verify', '--man=no', ...files]);
  return `${r.status === 0 ? '' : `exit ${r.status}\n`}${r.output2}`.trim();
}

test('systemd-analyze verify: the units say nothing; a misspelled key or a bad value is reported', (t) => {
  const units = unitFiles().map((f) => join(SYSTEMD_DIR, f));
  t.deepEqual(unitFiles(), ['rezolus-agent.service', 'rezolus-alert.service', 'rezolus-exporter.service', 'rezolus-hindsight.service', 'rezolus-view.service']);
  t.is(verify(units), '');
  const agent = join(SYSTEMD_DIR, 'rezolus-agent.service');
  t.regex(verify([broken(agent, 'Restart=on-failure', 'Restrat=on-failure')]), /Restrat/);
  t.regex(verify([broken(agent, 'KillMode=control-group', 'KillMode=everything')]), /kill mode.*everything/);
});

/** The keys the units may use, by section: a misspelling systemd would only warn about fails here. */
const ALLOWED: Record<string, readonly string[]> = {
  Unit: ['Description', 'Documentation', 'Wants', 'After', 'Requires', 'Before'],
  Service: [
    'Type', 'User', 'Group', 'DynamicUser', 'EnvironmentFile', 'Environment', 'ExecStart', 'ExecReload', 'Restart', 'RestartSec', 'KillMode',
    'LimitMEMLOCK', 'LimitNOFILE', 'StateDirectory', 'NoNewPrivileges', 'ProtectSystem', 'ProtectHome', 'PrivateTmp',
  ],
  Install: ['WantedBy', 'Alias'],
};

function unitProblems(text: string): string[] {
  const lines = parseUnit(text);
  const bad = lines.filter((l) => !(ALLOWED[l.section] ?? []).includes(l.key)).map((l) => `[${l.section}] ${l.key}`);
  const has = (k: string, v?: string) => lines.some((l) => l.key === k && (v === undefined || l.value === v));
  if (!has('Wants', 'network-online.target') || !has('After', 'network-online.target')) bad.push('Wants= and After=network-online.target');
  if (!has('WantedBy', 'multi-user.target')) bad.push('WantedBy=multi-user.target');
  return bad;
}

test('each unit uses only known keys, waits for the network and is wanted by multi-user.target; the agent runs as root, the others unprivileged', (t) => {
  for (const f of unitFiles()) {
    const text = readFileSync(join(SYSTEMD_DIR, f), 'utf8');
    t.deepEqual(unitProblems(text), [], f);
    const lines = parseUnit(text);
    const value = (k: string) => lines.find((l) => l.key === k)?.value;
    if (f === 'rezolus-agent.service') {
      t.is(value('User'), 'root');
      t.is(value('LimitMEMLOCK'), 'infinity');
    } else {
      t.is(value('DynamicUser'), 'yes', f);
      t.is(value('User'), undefined, f);
    }
  }
  t.deepEqual(unitProblems(readFileSync(join(SYSTEMD_DIR, 'rezolus-agent.service'), 'utf8').replace('Restart=', 'Restrat=')), ['[Service] Restrat']);
  t.deepEqual(unitProblems(readFileSync(join(SYSTEMD_DIR, 'rezolus-agent.service'), 'utf8').replace(/^Wants=.*\n/m, '')), ['Wants= and After=network-online.target']);
});

const MODELS: Record<string, Record<string, unknown>> = { 'apps/v1': appsV1, 'batch/v1': batchV1, v1: coreV1 };

/** The objects of a manifest file that fail the upstream OpenAPI schema (kubernetes-models' ajv validators). */
function schemaErrors(path: string): string[] {
  const errors: string[] = [];
  for (const doc of parseAllDocuments(readFileSync(path, 'utf8'))) {
    const o = doc.toJS() as { apiVersion: string; kind: string };
    const Model = MODELS[o.apiVersion]?.[o.kind] as (new (data: unknown) => { validate(): void }) | undefined;
    if (Model === undefined) {
      errors.push(`${o.apiVersion} ${o.kind}: no model`);
      continue;
    }
    try {
      new Model(o).validate();
    } catch (error) {
      errors.push(`${o.kind}: ${(error as Error).message}`);
    }
  }
  return errors;
}

test('Kubernetes: every object passes the upstream OpenAPI schema; a wrong type and a missing name do not', (t) => {
  t.deepEqual(k8sFiles(), ['agent-daemonset.yaml', 'bootstrap-job.yaml', 'configmap.yaml', 'consumers.yaml']);
  for (const f of k8sFiles()) t.deepEqual(schemaErrors(join(K8S_DIR, f)), [], f);
  const ds = join(K8S_DIR, 'agent-daemonset.yaml');
  t.regex(schemaErrors(broken(ds, 'hostPID: true', 'hostPID: "yes"')).join(), /hostPID must be boolean/);
  t.regex(schemaErrors(broken(ds, '- name: proc\n', '- nam: proc\n')).join(), /must have required property 'name'|must have required property name/);
  const job = join(K8S_DIR, 'bootstrap-job.yaml');
  t.regex(schemaErrors(broken(job, 'backoffLimit: 6', 'backoffLimit: six')).join(), /backoffLimit must be integer/);
});

test('Kubernetes: the agent runs on every node with the host\'s PID namespace, privileged, the node\'s name from the downward API', (t) => {
  const ds = parseAllDocuments(readFileSync(join(K8S_DIR, 'agent-daemonset.yaml'), 'utf8'))[0]?.toJS() as {
    kind: string;
    spec: { template: { spec: { hostPID: boolean; tolerations: { operator: string }[]; containers: { args: string[]; securityContext: { privileged: boolean }; env: { name: string; valueFrom?: { fieldRef?: { fieldPath: string } } }[]; volumeMounts: { mountPath: string }[] }[] } } };
  };
  t.is(ds.kind, 'DaemonSet');
  const pod = ds.spec.template.spec;
  const c = pod.containers[0];
  t.true(pod.hostPID);
  t.deepEqual(pod.tolerations, [{ operator: 'Exists' }]);
  t.true(c?.securityContext.privileged);
  t.is(c?.env.find((e) => e.name === 'NODE_NAME')?.valueFrom?.fieldRef?.fieldPath, 'spec.nodeName');
  t.is(c?.args[c.args.indexOf('--host') + 1], '$(NODE_NAME)');
  t.deepEqual(c?.volumeMounts.map((m) => m.mountPath).sort(), ['/etc/rezolus/cluster', '/host/proc', '/host/sys', '/host/sys/fs/cgroup', '/sys/kernel/btf']);
});
