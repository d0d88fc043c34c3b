import test from 'ava';
import { mkdtempSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { ConfigError } from '../../src/errors.js';
import { runNatsAuth, hostList } from '../../src/security/nats-auth-command.js';
import { natsAuthConfig } from '../../src/security/nats-auth-config.js';
import { agentPermissions, alertPermissions, authUsers, consumerPermissions, type Credential } from '../../src/security/nats-permissions.js';

const TMP = mkdtempSync(join(tmpdir(), 'rezolus-nats-auth-test-'));
test.after.always(() => rmSync(TMP, { recursive: true, force: true }));

const fixed = (user: string): Credential => ({ kind: 'password', password: `pw-${user}` });

test('an agent may publish only its own host subjects, its own status and descriptors, and read only its own inbox', (t) => {
  const p = agentPermissions('Web01.example.com', 'REZOLUS');
  t.true(p.publish.includes('rezolus.metrics.web01_example_com.>'));
  t.true(p.publish.includes('$KV.rezolus_status.web01_example_com'));
  t.deepEqual(p.subscribe, ['_INBOX_web01_example_com.>']);
  // no other host, no wildcard over hosts, no right to create or change the stream or buckets
  t.false(p.publish.some((s) => s.startsWith('rezolus.metrics.*') || s === 'rezolus.metrics.>' || s === 'rezolus.>'));
  t.false(p.publish.some((s) => /STREAM\.(CREATE|UPDATE|DELETE|PURGE)|CONSUMER|\$JS\.API\.>/.test(s)));
  t.false(p.publish.includes('rezolus.control.hindsight.dump'));
  // its own descriptors (<host>.<hash>) and status key: no other host's, no other bucket
  t.deepEqual(p.publish.filter((s) => s.startsWith('$KV.')).sort(), ['$KV.rezolus_descriptors.web01_example_com.*', '$KV.rezolus_status.web01_example_com']);
});

test('each consumer gets only the consumer rights it uses: none of the stream for the exporter, ordered for hindsight, durable and acks for the recorder', (t) => {
  const rights = (role: 'exporter' | 'recorder' | 'hindsight'): string[] => consumerPermissions(role, 'REZOLUS').publish.filter((s) => /CONSUMER|\$JS\.ACK|\$JS\.FC/.test(s));
  // the exporter's only consumer is its watch of the alert state bucket
  t.deepEqual(rights('exporter'), ['$JS.API.CONSUMER.CREATE.KV_rezolus_alert_state.>', '$JS.API.CONSUMER.DELETE.KV_rezolus_alert_state.>', '$JS.FC.KV_rezolus_alert_state.>']);
  for (const role of ['recorder', 'hindsight'] as const) t.false(rights(role).some((s) => s.includes('alert')), role);
  t.true(rights('hindsight').includes('$JS.API.CONSUMER.MSG.NEXT.REZOLUS.>'));
  t.false(rights('hindsight').some((s) => s.includes('DURABLE') || s.startsWith('$JS.ACK')));
  t.true(rights('recorder').includes('$JS.API.CONSUMER.DURABLE.CREATE.REZOLUS.>'));
  t.true(rights('recorder').includes('$JS.ACK.REZOLUS.>'));
});

test('consumers read but publish no frames; only hindsight answers on the control subject', (t) => {
  for (const role of ['exporter', 'recorder', 'hindsight'] as const) {
    const p = consumerPermissions(role, 'REZOLUS');
    t.false(p.publish.some((s) => s.startsWith('rezolus.') || s.startsWith('$KV.')), role);
    t.true(p.subscribe.includes('rezolus.metrics.>'));
    // a direct get by sequence has no trailing token on 2.9 (research §7)
    t.true(p.publish.includes('$JS.API.DIRECT.GET.REZOLUS') && p.publish.includes('$JS.API.DIRECT.GET.REZOLUS.>'));
    t.false(p.publish.some((s) => /STREAM\.(CREATE|UPDATE|DELETE|PURGE)/.test(s)), role);
  }
  t.true(consumerPermissions('hindsight', 'REZOLUS').subscribe.includes('rezolus.control.hindsight.dump'));
  t.deepEqual(consumerPermissions('hindsight', 'REZOLUS').serves, ['rezolus.control.hindsight.dump']);
  t.false(consumerPermissions('exporter', 'REZOLUS').subscribe.includes('rezolus.control.hindsight.dump'));
});

test('the exporter follows the alert state bucket read only; the other consumers do not see it', (t) => {
  const p = consumerPermissions('exporter', 'REZOLUS');
  t.true(p.publish.includes('$JS.API.STREAM.INFO.KV_rezolus_alert_state'));
  // a watch: no gets, no writes, no events
  t.deepEqual(p.publish.filter((s) => s.includes('alert')), ['$JS.API.STREAM.INFO.KV_rezolus_alert_state', '$JS.API.CONSUMER.CREATE.KV_rezolus_alert_state.>', '$JS.API.CONSUMER.DELETE.KV_rezolus_alert_state.>', '$JS.FC.KV_rezolus_alert_state.>']);
  // the watch's deliveries come on _INBOX.<nuid>.<n> in the stream's account
  t.deepEqual(p.pushed, ['_INBOX.>']);
  t.is(consumerPermissions('recorder', 'REZOLUS').pushed, undefined);
  t.is(consumerPermissions('hindsight', 'REZOLUS').pushed, undefined);
});

test('the alert evaluator: exactly the subjects a tracing server saw it use (test/security/trace-subjects.ts), widened to every host, rule and key', (t) => {
  const p = alertPermissions('REZOLUS');
  t.deepEqual(p.publish, [
    '$JS.API.INFO',
    '$JS.API.STREAM.INFO.REZOLUS',
    // incident captures: ordered consumers of the frames stream
    '$JS.API.CONSUMER.CREATE.REZOLUS.>',
    '$JS.API.CONSUMER.INFO.REZOLUS.>',
    '$JS.API.CONSUMER.DELETE.REZOLUS.>',
    '$JS.API.CONSUMER.MSG.NEXT.REZOLUS.>',
    // descriptors, read as every consumer reads them
    '$JS.API.STREAM.INFO.KV_rezolus_descriptors',
    '$JS.API.STREAM.MSG.GET.KV_rezolus_descriptors',
    '$JS.API.DIRECT.GET.KV_rezolus_descriptors',
    '$JS.API.DIRECT.GET.KV_rezolus_descriptors.>',
    // events
    '$JS.API.STREAM.INFO.REZOLUS_ALERTS',
    'rezolus.alerts.>',
    // its state: the watch, a record read back, compare-and-set writes
    '$JS.API.STREAM.INFO.KV_rezolus_alert_state',
    '$JS.API.CONSUMER.CREATE.KV_rezolus_alert_state.>',
    '$JS.API.CONSUMER.DELETE.KV_rezolus_alert_state.>',
    '$JS.FC.KV_rezolus_alert_state.>',
    '$JS.API.DIRECT.GET.KV_rezolus_alert_state.$KV.rezolus_alert_state.>',
    '$KV.rezolus_alert_state.>',
  ]);
  t.deepEqual(p.subscribe, ['rezolus.metrics.>', '_INBOX.>']);
  t.deepEqual(p.pushed, ['_INBOX.>']);
  t.is(p.serves, undefined);
});

test('the alert evaluator publishes no frames, writes neither the descriptors nor the status, creates and changes no stream', (t) => {
  const p = alertPermissions('REZOLUS');
  t.false(p.publish.some((s) => s.startsWith('rezolus.metrics') || s === 'rezolus.>' || s === '>'));
  t.false(p.publish.some((s) => s.startsWith('$KV.rezolus_descriptors') || s.startsWith('$KV.rezolus_status') || s === '$KV.>'));
  t.false(p.publish.some((s) => /STREAM\.(CREATE|UPDATE|DELETE|PURGE)|\$JS\.API\.>|DURABLE|\$JS\.ACK/.test(s)));
  t.false(p.publish.includes('rezolus.control.hindsight.dump'));
  // consumers only of the frames stream (captures) and of its own bucket (the watch)
  const streams = new Set(p.publish.filter((s) => s.startsWith('$JS.API.CONSUMER.')).map((s) => s.replace(/^\$JS\.API\.CONSUMER\.(MSG\.NEXT|[A-Z]+)\./, '').split('.')[0]));
  t.deepEqual([...streams], ['REZOLUS', 'KV_rezolus_alert_state']);
});

test('the config has one user per host, the consumers, the alert evaluator and the admin, with quoted subjects', (t) => {
  const text = natsAuthConfig(authUsers(['web-1', 'web-2'], 'REZOLUS', fixed), { account: 'REZOLUS', stream: 'REZOLUS' });
  t.regex(text, /accounts \{\n {2}"REZOLUS" \{\n {4}jetstream: enabled/);
  // every user but the admin alone in an account of its own, without JetStream
  for (const a of ['REZOLUS_HOST_web-1', 'REZOLUS_HOST_web-2', 'REZOLUS_EXPORTER', 'REZOLUS_RECORDER', 'REZOLUS_HINDSIGHT', 'REZOLUS_ALERT']) {
    t.regex(text, new RegExp(`\\n {2}"${a}" \\{\\n {4}users: \\[`), a);
  }
  t.is((text.match(/jetstream: enabled/g) ?? []).length, 1);
  for (const u of ['agent-web-1', 'agent-web-2', 'rezolus-exporter', 'rezolus-recorder', 'rezolus-hindsight', 'rezolus-alert']) {
    t.regex(text, new RegExp(`\\{ user: "${u}", password: "pw-${u}", permissions: \\{`));
  }
  t.regex(text, /\{ user: "rezolus-admin", password: "pw-rezolus-admin" \}/, 'the admin has every right');
  // a $ outside quotes would be a variable reference in the nats-server config language
  t.false(/[^"]\$JS/.test(text));
  t.regex(text, /"rezolus\.metrics\.web-2\.>"/);
  t.is((text.match(/allow_responses: true/g) ?? []).length, 1);
});

test('nkey users carry the public key only', (t) => {
  const text = natsAuthConfig(authUsers(['h'], 'REZOLUS', () => ({ kind: 'nkey', publicKey: 'UABC' })), { account: 'A', stream: 'REZOLUS' });
  t.regex(text, /\{ nkey: "UABC", permissions: \{/);
  t.false(text.includes('password'));
});

test('hosts that become the same subject token are refused', (t) => {
  const err = t.throws(() => authUsers(['web.1', 'WEB_1'], 'REZOLUS', fixed), { instanceOf: ConfigError });
  t.regex(err?.message ?? '', /"web\.1" and "WEB_1" are the same subject token "web_1"/);
  t.throws(() => authUsers([], 'REZOLUS', fixed), { instanceOf: ConfigError, message: /no hosts given/ });
});

test('hosts come from --hosts and --hosts-file, without globs or repeats', (t) => {
  const file = join(TMP, 'hosts.txt');
  writeFileSync(file, '# fleet\nweb-2\n\ndb-1  # primary\nweb-1\n');
  t.deepEqual(hostList({ hosts: 'web-1, web-2', hostsFile: file }), ['web-1', 'web-2', 'db-1']);
  t.throws(() => hostList({ hosts: 'web-*' }), { instanceOf: ConfigError, message: /"web-\*" is not a host name/ });
  t.throws(() => hostList({ hostsFile: join(TMP, 'missing') }), { instanceOf: ConfigError, message: /--hosts-file .*missing: cannot read it \(ENOENT\)/ });
});

test('--nkeys writes one 0600 seed per user and never overwrites one: a second run with one more host keeps every seed and adds one', (t) => {
  const dir = join(TMP, 'seeds');
  const out = runNatsAuth({ hosts: 'web-1', nkeys: true, secretsDir: dir, stream: 'REZOLUS' });
  const seed = readFileSync(join(dir, 'agent-web-1.nk'), 'utf8').trim();
  t.regex(seed, /^SU[A-Z2-7]{56}$/);
  t.is(statSync(join(dir, 'agent-web-1.nk')).mode & 0o777, 0o600);
  t.false(out.config.includes(seed), 'the seed stays out of the server config');
  t.regex(out.config, /\{ nkey: "U[A-Z2-7]{55}", permissions/);
  t.regex(out.summary, /agent-web-1: .*agent-web-1\.nk/);
  const publicKeys = (config: string): string[] => [...config.matchAll(/nkey: "(U[A-Z2-7]{55})"/g)].map((m) => m[1] as string);
  const again = runNatsAuth({ hosts: 'web-1,web-2', nkeys: true, secretsDir: dir, stream: 'REZOLUS' });
  t.is(readFileSync(join(dir, 'agent-web-1.nk'), 'utf8').trim(), seed, 'the seed of web-1 is kept');
  t.deepEqual(publicKeys(again.config).filter((k) => publicKeys(out.config).includes(k)).length, publicKeys(out.config).length, 'every earlier user keeps its public key');
  t.is(publicKeys(again.config).length, publicKeys(out.config).length + 1, 'one user more: agent-web-2');
  t.regex(again.summary, /agent-web-1: .*agent-web-1\.nk \(kept\)/);
  t.regex(readFileSync(join(dir, 'agent-web-2.nk'), 'utf8'), /^SU/);
  writeFileSync(join(dir, 'agent-web-3.nk'), 'not a seed\n');
  t.throws(() => runNatsAuth({ hosts: 'web-3', nkeys: true, secretsDir: dir, stream: 'REZOLUS' }), { instanceOf: ConfigError, message: /agent-web-3\.nk does not hold an nkey user seed/ });
  t.throws(() => runNatsAuth({ hosts: 'web-1', nkeys: true, stream: 'REZOLUS' }), { instanceOf: ConfigError, message: /--nkeys needs --secrets-dir/ });
});

test('passwords are random and differ per user', (t) => {
  const a = runNatsAuth({ hosts: 'web-1,web-2', nkeys: false, stream: 'REZOLUS' }).config;
  const pw = [...a.matchAll(/password: "([^"]+)"/g)].map((m) => m[1]);
  t.is(pw.length, 7);
  t.is(new Set(pw).size, 7);
  for (const p of pw) t.true((p ?? '').length >= 24);
});
