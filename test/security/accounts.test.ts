import test from 'ava';
import { accountLayout, subjectCovers } from '../../src/security/nats-accounts.js';
import { agentPermissions, alertPermissions, authUsers, type Credential } from '../../src/security/nats-permissions.js';

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
  t.deepEqual(layout.map((a) => a.name), ['REZOLUS', 'REZOLUS_HOST_web-1', 'REZOLUS_HOST_web-2', 'REZOLUS_EXPORTER', 'REZOLUS_RECORDER', 'REZOLUS_HINDSIGHT', 'REZOLUS_ALERT']);
  t.deepEqual(layout.filter((a) => a.jetstream).map((a) => a.name), ['REZOLUS']);
  t.deepEqual(account('REZOLUS').users.map((u) => u.name), ['rezolus-admin']);
  for (const a of layout.slice(1)) t.is(a.users.length, 1, a.name);
});

test('a host\'s account imports exactly what its agent may publish, and exports its own frames to the consumers only', (t) => {
  const host = account('REZOLUS_HOST_web-1');
  t.deepEqual(host.imports.map((i) => `${i.kind} ${i.account} ${i.subject}`), agentPermissions('web-1', 'REZOLUS').publish.map((s) => `service REZOLUS ${s}`));
  t.deepEqual(host.exports, [{ kind: 'stream', subject: 'rezolus.metrics.web-1.>', accounts: ['REZOLUS_EXPORTER', 'REZOLUS_RECORDER', 'REZOLUS_HINDSIGHT', 'REZOLUS_ALERT'] }]);
  const own = account('REZOLUS').exports.filter((e) => e.subject.includes('web-1'));
  for (const e of own) t.deepEqual(e.accounts, ['REZOLUS_HOST_web-1'], e.subject);
});

test('consumers import the frames from every host and the stream\'s account; pulls are streamed answers; the admin imports the control subject', (t) => {
  const exporter = account('REZOLUS_EXPORTER');
  t.deepEqual(exporter.imports.filter((i) => i.kind === 'stream').map((i) => `${i.account} ${i.subject}`), [
    'REZOLUS_HOST_web-1 rezolus.metrics.web-1.>', 'REZOLUS_HOST_web-2 rezolus.metrics.web-2.>', 'REZOLUS rezolus.metrics.>', 'REZOLUS _INBOX.>',
  ]);
  const next = account('REZOLUS').exports.find((e) => e.subject === '$JS.API.CONSUMER.MSG.NEXT.REZOLUS.>');
  t.deepEqual(next, { kind: 'service', subject: '$JS.API.CONSUMER.MSG.NEXT.REZOLUS.>', accounts: ['REZOLUS_RECORDER', 'REZOLUS_HINDSIGHT', 'REZOLUS_ALERT'], streamed: true });
  t.deepEqual(account('REZOLUS').imports, [{ kind: 'service', account: 'REZOLUS_HINDSIGHT', subject: 'rezolus.control.hindsight.dump', share: true }]);
  t.deepEqual(account('REZOLUS_HINDSIGHT').exports, [{ kind: 'service', subject: 'rezolus.control.hindsight.dump', accounts: ['REZOLUS'], streamed: false }]);
  t.false(account('REZOLUS_HINDSIGHT').imports.some((i) => i.subject.includes('control')));
});

test('the alert account imports what its evaluator publishes as services, the frames as streams, and the stream\'s account\'s inboxes for its watch', (t) => {
  const alert = account('REZOLUS_ALERT');
  t.deepEqual(alert.users.map((u) => u.name), ['rezolus-alert']);
  t.false(alert.jetstream);
  t.deepEqual(alert.imports.filter((i) => i.kind === 'service').map((i) => `${i.account} ${i.subject}`), alertPermissions('REZOLUS').publish.map((s) => `REZOLUS ${s}`));
  t.deepEqual(alert.imports.filter((i) => i.kind === 'stream').map((i) => `${i.account} ${i.subject}`), [
    'REZOLUS_HOST_web-1 rezolus.metrics.web-1.>', 'REZOLUS_HOST_web-2 rezolus.metrics.web-2.>', 'REZOLUS rezolus.metrics.>', 'REZOLUS _INBOX.>',
  ]);
  t.deepEqual(alert.exports, [], 'nothing of it is read from its account');
  const home = account('REZOLUS');
  const to = (subject: string): readonly string[] | undefined => home.exports.find((e) => e.subject === subject)?.accounts;
  // its events, its records and their writes go to it alone; the bucket's watch is shared with the exporter
  for (const s of ['rezolus.alerts.>', '$KV.rezolus_alert_state.>', '$JS.API.DIRECT.GET.KV_rezolus_alert_state.$KV.rezolus_alert_state.>', '$JS.API.STREAM.INFO.REZOLUS_ALERTS']) t.deepEqual(to(s), ['REZOLUS_ALERT'], s);
  t.deepEqual(to('$JS.API.CONSUMER.CREATE.KV_rezolus_alert_state.>'), ['REZOLUS_EXPORTER', 'REZOLUS_ALERT']);
  // the inboxes of the stream's account: only to the two that watch a bucket
  t.deepEqual(home.exports.find((e) => e.kind === 'stream' && e.subject === '_INBOX.>'), { kind: 'stream', subject: '_INBOX.>', accounts: ['REZOLUS_EXPORTER', 'REZOLUS_ALERT'] });
  // no other account imports the alert's subjects
  for (const a of layout.filter((x) => x.name !== 'REZOLUS_ALERT')) t.false(a.imports.some((i) => i.subject.startsWith('rezolus.alerts') || i.subject.startsWith('$KV.rezolus_alert_state')), a.name);
});
