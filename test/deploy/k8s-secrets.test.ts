/**
 * The Kubernetes manifests read NATS credentials from the Secret rezolus-nats, made with
 * `kubectl create secret generic rezolus-nats --from-file=DIR` from the files `rezolus nats-auth
 * --nkeys --secrets-dir DIR` writes (a file's name becomes its key). The key names are checked
 * against the files nats-auth writes now (run here), not against a copy of them: each key a
 * manifest names is one of those files, each container that connects reads the seed of its
 * role's user from a mount of exactly that key, and the consumers' pod holds no other user's seed.
 */
import test from 'ava';
import { mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { basename, dirname, join } from 'node:path';
import { parseAllDocuments } from 'yaml';
import { runNatsAuth } from '../../src/security/nats-auth-command.js';
import { authUsers, type Role } from '../../src/security/nats-permissions.js';
import { K8S_DIR, k8sFiles } from '../helpers/deploy.js';

interface SecretVolume {
  name: string;
  secret?: { secretName: string; items?: { key: string; path: string }[] };
}
interface Container {
  name: string;
  env?: { name: string; value?: string; valueFrom?: { secretKeyRef?: { name: string; key: string } } }[];
  volumeMounts?: { name: string; mountPath: string }[];
}
interface Workload {
  kind: string;
  metadata: { name: string };
  spec?: { template?: { spec: { containers: Container[]; volumes?: SecretVolume[] } } };
}

const SECRET = 'rezolus-nats';
const SEED_ENV = 'REZOLUS_NATS_NKEY_SEED_FILE';

/** The NATS user role each container connects as; the agent has none here (one pod spec for every node). */
const ROLE_OF: Readonly<Record<string, Role | undefined>> = { exporter: 'exporter', hindsight: 'hindsight', viewer: 'recorder', alert: 'alert', bootstrap: 'admin', agent: undefined };

/** The files `rezolus nats-auth --nkeys --hosts node-1 --secrets-dir DIR` writes, and each role's user. */
function natsAuthFiles(): { files: Set<string>; userOf: (role: Role) => string } {
  const dir = mkdtempSync(join(tmpdir(), 'rezolus-k8s-secrets-'));
  try {
    runNatsAuth({ hosts: 'node-1', nkeys: true, secretsDir: dir, stream: 'REZOLUS' });
    const users = authUsers(['node-1'], 'REZOLUS', () => ({ kind: 'password', password: 'x' }));
    return {
      files: new Set(readdirSync(dir)),
      userOf: (role) => users.find((u) => u.role === role)?.name ?? `(no ${role} user)`,
    };
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

const workloads = (): Workload[] =>
  k8sFiles().flatMap((f) => parseAllDocuments(readFileSync(join(K8S_DIR, f), 'utf8')).map((d) => d.toJS() as Workload)).filter((o) => o.spec?.template !== undefined);

/** What is wrong with the NATS credentials of one workload, one line each. */
function problems(w: Workload, files: ReadonlySet<string>, userOf: (role: Role) => string): string[] {
  const out: string[] = [];
  const pod = w.spec?.template?.spec;
  const volumes = new Map((pod?.volumes ?? []).filter((v) => v.secret?.secretName === SECRET).map((v) => [v.name, v.secret?.items ?? []]));
  for (const [name, items] of volumes) {
    if (items.length === 0) out.push(`${w.metadata.name}: volume ${name} mounts every key of ${SECRET} (the admin's and every agent's seed): list the items it needs`);
    for (const i of items) {
      if (!files.has(i.key)) out.push(`${w.metadata.name}: volume ${name} wants key ${i.key}, which nats-auth --nkeys does not write (${[...files].sort().join(', ')})`);
      if (i.path !== i.key) out.push(`${w.metadata.name}: volume ${name} puts key ${i.key} at ${i.path}`);
    }
  }
  const mounted = new Set<string>();
  for (const c of pod?.containers ?? []) {
    const where = `${w.metadata.name}/${c.name}`;
    if (!Object.hasOwn(ROLE_OF, c.name)) out.push(`${where}: no NATS role known for container ${c.name}`);
    const role = ROLE_OF[c.name];
    for (const e of c.env ?? []) {
      if (e.valueFrom?.secretKeyRef?.name === SECRET) out.push(`${where}: ${e.name} from key ${e.valueFrom.secretKeyRef.key} of ${SECRET}: nats-auth writes files, read them as files`);
    }
    const seed = c.env?.find((e) => e.name === SEED_ENV)?.value;
    if (role === undefined) {
      if (seed !== undefined) out.push(`${where}: ${SEED_ENV} set for a container with no user`);
      continue;
    }
    const want = `${userOf(role)}.nk`;
    if (seed === undefined) {
      out.push(`${where}: no ${SEED_ENV} (its user is ${userOf(role)})`);
      continue;
    }
    if (basename(seed) !== want) out.push(`${where}: ${SEED_ENV}=${seed}, but its user ${userOf(role)} has the seed ${want}`);
    const mount = c.volumeMounts?.find((m) => m.mountPath === dirname(seed));
    const items = mount === undefined ? undefined : volumes.get(mount.name);
    if (items === undefined) out.push(`${where}: nothing of ${SECRET} is mounted at ${dirname(seed)}`);
    else if (!items.some((i) => i.path === basename(seed))) out.push(`${where}: the volume at ${dirname(seed)} has no ${basename(seed)}`);
    mounted.add(want);
  }
  // no seed in the pod that none of its containers uses
  for (const [name, items] of volumes) {
    for (const i of items) if (!mounted.has(i.key)) out.push(`${w.metadata.name}: volume ${name} holds ${i.key}, which no container of the pod uses`);
  }
  return out;
}

test('the Secret rezolus-nats keys the manifests use are the files rezolus nats-auth --nkeys writes, each container its own role\'s', (t) => {
  const { files, userOf } = natsAuthFiles();
  t.true(files.has('rezolus-exporter.nk') && files.has('agent-node-1.nk'), [...files].join(', '));
  const all = workloads();
  t.deepEqual(all.map((w) => `${w.kind} ${w.metadata.name}`).sort(), ['DaemonSet rezolus-agent', 'Deployment rezolus-consumers', 'Job rezolus-bootstrap']);
  for (const w of all) t.deepEqual(problems(w, files, userOf), [], w.metadata.name);
  // what each pod can read: the consumers their four users, the bootstrap Job the admin, the agents nothing
  const keys = (name: string): string[] =>
    (all.find((w) => w.metadata.name === name)?.spec?.template?.spec.volumes ?? []).flatMap((v) => (v.secret?.secretName === SECRET ? (v.secret.items ?? []).map((i) => i.key) : [])).sort();
  t.deepEqual(keys('rezolus-consumers'), (['alert', 'exporter', 'hindsight', 'recorder'] as const).map((r) => `${userOf(r)}.nk`).sort());
  t.deepEqual(keys('rezolus-bootstrap'), [`${userOf('admin')}.nk`]);
  t.deepEqual(keys('rezolus-agent'), []);
});

test('the check can fail: a key nats-auth does not write, a password from an env var, another role\'s seed, an unused seed', (t) => {
  const { files, userOf } = natsAuthFiles();
  const consumers = workloads().find((w) => w.metadata.name === 'rezolus-consumers') as Workload;
  const edit = (from: string, to: string): string[] => {
    const text = JSON.stringify(consumers);
    if (!text.includes(from)) throw new Error(`the edit ${from} does not apply`);
    return problems(JSON.parse(text.replaceAll(from, to)) as Workload, files, userOf);
  };
  t.true(edit('"key":"rezolus-exporter.nk","path":"rezolus-exporter.nk"', '"key":"exporter-password","path":"rezolus-exporter.nk"').some((p) => /wants key exporter-password, which nats-auth --nkeys does not write/.test(p)));
  t.true(edit(`"name":"${SEED_ENV}","value":"/etc/rezolus/nats/rezolus-exporter.nk"`, `"name":"REZOLUS_NATS_PASSWORD","valueFrom":{"secretKeyRef":{"name":"${SECRET}","key":"rezolus-exporter.password"}}`).some((p) =>
    /exporter: REZOLUS_NATS_PASSWORD from key rezolus-exporter.password of rezolus-nats/.test(p),
  ));
  t.true(edit('"value":"/etc/rezolus/nats/rezolus-recorder.nk"', '"value":"/etc/rezolus/nats/rezolus-admin.nk"').some((p) => /viewer: .* its user rezolus-recorder has the seed rezolus-recorder\.nk/.test(p)));
  t.true(edit('"key":"rezolus-alert.nk","path":"rezolus-alert.nk"', '"key":"rezolus-admin.nk","path":"rezolus-admin.nk"').some((p) => /holds rezolus-admin\.nk, which no container of the pod uses/.test(p)));
});
