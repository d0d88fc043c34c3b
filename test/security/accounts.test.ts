import test from 'ava';
import { accountLayout, subjectCovers } from '../../src/security/nats-accounts.js';
import { agentPermissions, authUsers, type Credential } from '../../src/security/nats-permissions.js';

const fixed = (user: string): Credential => ({ kind: 'password', password: `pw-${user}` });
const layout = accountLayout(authUsers(['web-1', 'web-2'], 'REZOLUS', fixed), 'REZOLUS');
const account = (name: string) => {
  const a = layout.find((x) => x.name === name);
  if (a === undefined) throw new Error(`no account ${name}`);
  return a;
};

test('subjectCovers follows NATS wildcards', (t) => {
  t.true(subjectCovers('rezolus.metrics.>', 'rezolus.metrics.web-1.>'));
  t.true(subjectCovers('rezolus.metrics.>', 'rezolus.metrics.web-1.cpu_usage'));
  t.true(subjectCovers('a.*.c', 'a.b.c'));
  t.false(subjectCovers('a.b.c', 'a.*.c'));
  t.false(subjectCovers('rezolus.metrics.>', 'rezolus.metrics'));
  t.false(subjectCovers('rezolus.metrics.web-1.>', 'rezolus.metrics.>'));
  t.false(subjectCovers('$KV.rezolus_status.web-1', '$KV.rezolus_status.web-2'));
});

test('only the stream\'s account has JetStream; the admin is its only user, every other user is alone in its account', (t) => {
  t.deepEqual(layout.map((a) => a.name), ['REZOLUS', 'REZOLUS_HOST_web-1', 'REZOLUS_HOST_web-2', 'REZOLUS_EXPORTER', 'REZOLUS_RECORDER', 'REZOLUS_HINDSIGHT']);
  t.deepEqual(layout.filter((a) => a.jetstream).map((a) => a.name), ['REZOLUS']);
  t.deepEqual(account('REZOLUS').users.map((u) => u.name), ['rezolus-admin']);
  for (const a of layout.slice(1)) t.is(a.users.length, 1, a.name);
});

test('a host\'s account imports exactly what its agent may publish, and exports its own frames to the consumers only', (t) => {
  const host = account('REZOLUS_HOST_web-1');
  t.deepEqual(host.imports.map((i) => `${i.kind} ${i.account} ${i.subject}`), agentPermissions('web-1', 'REZOLUS').publish.map((s) => `service REZOLUS ${s}`));
  t.deepEqual(host.exports, [{ kind: 'stream', subject: 'rezolus.metrics.web-1.>', accounts: ['REZOLUS_EXPORTER', 'REZOLUS_RECORDER', 'REZOLUS_HINDSIGHT'] }]);
  const own = account('REZOLUS').exports.filter((e) => e.subject.includes('web-1'));
  for (const e of own) t.deepEqual(e.accounts, ['REZOLUS_HOST_web-1'], e.subject);
});

test('consumers import the frames from every host and the stream\'s account; pulls are streamed answers; the admin imports the control subject', (t) => {
  const exporter = account('REZOLUS_EXPORTER');
  t.deepEqual(exporter.imports.filter((i) => i.kind === 'stream').map((i) => `${i.account} ${i.subject}`), [
    'REZOLUS_HOST_web-1 rezolus.metrics.web-1.>', 'REZOLUS_HOST_web-2 rezolus.metrics.web-2.>', 'REZOLUS rezolus.metrics.>',
  ]);
  const next = account('REZOLUS').exports.find((e) => e.subject === '$JS.API.CONSUMER.MSG.NEXT.REZOLUS.>');
  t.deepEqual(next, { kind: 'service', subject: '$JS.API.CONSUMER.MSG.NEXT.REZOLUS.>', accounts: ['REZOLUS_RECORDER', 'REZOLUS_HINDSIGHT'], streamed: true });
  t.deepEqual(account('REZOLUS').imports, [{ kind: 'service', account: 'REZOLUS_HINDSIGHT', subject: 'rezolus.control.hindsight.dump', share: true }]);
  t.deepEqual(account('REZOLUS_HINDSIGHT').exports, [{ kind: 'service', subject: 'rezolus.control.hindsight.dump', accounts: ['REZOLUS'], streamed: false }]);
  t.false(account('REZOLUS_HINDSIGHT').imports.some((i) => i.subject.includes('control')));
});
