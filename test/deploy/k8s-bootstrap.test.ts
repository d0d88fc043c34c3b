/**
 * The Kubernetes bootstrap Job and the consumers' NATS users, run here as far as they can be
 * without a cluster: `rezolus nats-auth --nkeys` makes the users (its accounts loaded into a real
 * nats-server, so credentials are checked), its secrets directory stands in for the Secret
 * rezolus-nats mounted as the manifests mount it, and the Job's own arguments (rezolus setup)
 * run with the Job's own environment. Only what a pod has that this machine has not is swapped:
 * the image's paths (/opt/rezolus, the ConfigMap at /etc/rezolus/cluster, the Secret at
 * /etc/rezolus/nats), the NATS service's URL, and in the cluster configs 3 replicas for 1 (one
 * server).
 */
import test from 'ava';
import { spawn } from 'node:child_process';
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { jetstreamManager } from '@nats-io/jetstream';
import { nkeys } from '@nats-io/nats-core';
import { parseAllDocuments } from 'yaml';
import { ALERT_STATE_BUCKET, ALERTS_STREAM } from '../../src/alert/contract.js';
import { connectBus } from '../../src/bus/connect.js';
import { DEFAULT_STREAM, DESCRIPTOR_BUCKET, STATUS_BUCKET } from '../../src/bus/subjects.js';
import { readNatsSecurity } from '../../src/config/nats.js';
import { silentLogger } from '../../src/log/logger.js';
import { runNatsAuth } from '../../src/security/nats-auth-command.js';
import { K8S_DIR, ROOT } from '../helpers/deploy.js';
import { startTestNats, type TestNats } from '../helpers/nats.js';
import { rezolusArgv } from '../helpers/rezolus-cli.js';

interface Container {
  name: string;
  command?: string[];
  args?: string[];
  env?: { name: string; value?: string }[];
  volumeMounts?: { name: string; mountPath: string }[];
}
interface Workload {
  metadata: { name: string };
  spec: { template: { spec: { containers: Container[]; volumes?: { name: string; configMap?: { name: string }; secret?: { secretName: string; items?: { key: string; path: string }[] } }[] } } };
}

function workload(file: string): Workload {
  return parseAllDocuments(readFileSync(join(K8S_DIR, file), 'utf8'))[0]?.toJS() as Workload;
}

/** `text` with each [from, to] applied; every one must apply. */
function edited(text: string, edits: readonly (readonly [string | RegExp, string])[], what: string): string {
  let out = text;
  for (const [from, to] of edits) {
    const next = out.replace(from, to);
    if (next === out) throw new Error(`the edit ${String(from)} does not apply to ${what}`);
    out = next;
  }
  return out;
}

/**
 * A container's environment as its pod gives it, with the Secret rezolus-nats's mount point
 * swapped for the directory nats-auth wrote it from (each item's path is its key, its file name).
 */
function podEnv(w: Workload, c: Container, secretsDir: string, natsUrl: string): Record<string, string> {
  const secretVolumes = new Set((w.spec.template.spec.volumes ?? []).filter((v) => v.secret?.secretName === 'rezolus-nats').map((v) => v.name));
  const mountPath = c.volumeMounts?.find((m) => secretVolumes.has(m.name))?.mountPath;
  const env: Record<string, string> = {};
  for (const e of c.env ?? []) {
    if (e.value === undefined) continue;
    if (e.name === 'REZOLUS_NATS_URL') env[e.name] = natsUrl;
    else env[e.name] = mountPath !== undefined && e.value.startsWith(`${mountPath}/`) ? join(secretsDir, e.value.slice(mountPath.length + 1)) : e.value;
  }
  return env;
}

let dir: string;
let server: TestNats | undefined;

test.before(() => {
  dir = mkdtempSync(join(tmpdir(), 'rezolus-k8s-bootstrap-'));
});
test.after.always(async () => {
  await server?.dispose();
  rmSync(dir, { recursive: true, force: true });
});

test('the bootstrap Job creates the streams and buckets as the admin from the Secret; the consumers\' seeds log their users in', async (t) => {
  t.timeout(180_000);
  const secrets = join(dir, 'secrets');
  const { config } = runNatsAuth({ hosts: 'node-1,node-2', nkeys: true, secretsDir: secrets, stream: DEFAULT_STREAM });
  const conf = join(dir, 'auth.conf');
  writeFileSync(conf, config);
  server = await startTestNats(0, undefined, conf);

  // the ConfigMap's files (config/cluster/), for one server and this machine
  const cluster = join(dir, 'cluster');
  mkdirSync(cluster);
  const agentToml = readFileSync(join(ROOT, 'config', 'cluster', 'agent.toml'), 'utf8');
  writeFileSync(join(cluster, 'agent.toml'), edited(agentToml, [
    [/^replicas = 3$/m, 'replicas = 1'],
  ], 'config/cluster/agent.toml'));
  writeFileSync(join(cluster, 'alerts.toml'), edited(readFileSync(join(ROOT, 'config', 'cluster', 'alerts.toml'), 'utf8'), [[/^replicas = 3$/m, 'replicas = 1']], 'config/cluster/alerts.toml'));

  const job = workload('bootstrap-job.yaml');
  const container = job.spec.template.spec.containers[0] as Container;
  t.deepEqual(container.volumeMounts?.find((m) => m.mountPath === '/etc/rezolus/cluster')?.name, job.spec.template.spec.volumes?.find((v) => v.configMap?.name === 'rezolus-config')?.name, 'the Job mounts the ConfigMap there');
  rezolusArgv(); // builds dist/ when stale
  t.is(container.command, undefined, 'the image\'s entrypoint runs it: node /opt/rezolus/bin/rezolus.js (docker/Dockerfile)');
  const args = (container.args ?? []).map((a) => a.replace(/^\/etc\/rezolus\/cluster\//, `${cluster}/`));
  const env = podEnv(job, container, secrets, server.url);
  t.deepEqual(Object.keys(env).sort(), ['REZOLUS_NATS_NKEY_SEED_FILE', 'REZOLUS_NATS_URL']);
  t.is(env.REZOLUS_NATS_NKEY_SEED_FILE, join(secrets, 'rezolus-admin.nk'));

  const child = spawn(process.execPath, [join(ROOT, 'bin', 'rezolus.js'), ...args], {
    cwd: dir,
    env: { PATH: `${dirname(process.execPath)}:${process.env.PATH ?? ''}`, TMPDIR: dir, ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let stdout = '';
  let stderr = '';
  child.stdout.on('data', (d: Buffer) => (stdout += d.toString()));
  child.stderr.on('data', (d: Buffer) => (stderr += d.toString()));
  const code = await new Promise<number | null>((r) => child.once('close', r));
  t.is(code, 0, `${stdout}\n${stderr}`);
  t.deepEqual(stdout.trim().split('\n').map((l) => l.split(':')[0]), [
    `stream ${DEFAULT_STREAM}`, `bucket ${DESCRIPTOR_BUCKET}`, `bucket ${STATUS_BUCKET}`, `stream ${ALERTS_STREAM}`, `bucket ${ALERT_STATE_BUCKET}`,
  ], 'the Job\'s log says what is ready');

  // what the per-role users may not create is there, and no host was left in the status bucket
  const admin = await connectBus({ url: server.url, name: 'test', log: silentLogger(), security: readNatsSecurity(undefined, 'test', env) });
  try {
    const jsm = await jetstreamManager(admin);
    const streams: string[] = [];
    for await (const s of jsm.streams.list()) streams.push(s.config.name);
    t.deepEqual(streams.sort(), [DEFAULT_STREAM, `KV_${ALERT_STATE_BUCKET}`, `KV_${DESCRIPTOR_BUCKET}`, `KV_${STATUS_BUCKET}`, ALERTS_STREAM].sort());
    t.is((await jsm.streams.info(`KV_${STATUS_BUCKET}`)).state.messages, 0, 'no host\'s status: nothing shows in rezolus status');
    t.is((await jsm.streams.info(DEFAULT_STREAM)).state.messages, 0, 'no frame');
  } finally {
    await admin.close();
  }

  // each consumer container's seed, read where the Deployment mounts it, logs its user in
  const consumers = workload('consumers.yaml');
  const logins: string[] = [];
  for (const c of consumers.spec.template.spec.containers) {
    const e = podEnv(consumers, c, secrets, server.url);
    const nc = await connectBus({ url: server.url, name: `test-${c.name}`, log: silentLogger(), security: readNatsSecurity(undefined, c.name, e) });
    await nc.close();
    logins.push(`${c.name} ${e.REZOLUS_NATS_NKEY_SEED_FILE?.slice(secrets.length + 1)}`);
  }
  t.deepEqual(logins, ['exporter rezolus-exporter.nk', 'hindsight rezolus-hindsight.nk', 'viewer rezolus-recorder.nk', 'alert rezolus-alert.nk']);
  // and the server does check: a seed it does not know is refused
  const stranger = join(dir, 'stranger.nk');
  writeFileSync(stranger, `${new TextDecoder().decode(nkeys.createUser().getSeed())}\n`);
  const refused = await t.throwsAsync(connectBus({ url: server.url, name: 'test', log: silentLogger(), waitOnFirstConnect: false, security: readNatsSecurity(undefined, 'test', { REZOLUS_NATS_NKEY_SEED_FILE: stranger }) }));
  t.regex(refused?.message ?? '', /refused/);
});
