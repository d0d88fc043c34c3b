/** `rezolus alert events`: the stream's events one line each, filtered by host, ended by --until. */
import test from 'ava';
import { runRezolus } from '../helpers/rezolus-cli.js';
import { jetstream } from '@nats-io/jetstream';
import { connect } from '@nats-io/transport-node';
import { ensureAlertStream } from '../../src/alert/bus.js';
import { alertSubject, transitionEvent, transitionMsgId, type AlertRecord } from '../../src/alert/contract.js';
import { silentLogger } from '../../src/log/logger.js';
import { startTestNats } from '../helpers/nats.js';


test('alert events prints the stored events one line each, by host, and ends at --until', async (t) => {
  const server = await startTestNats();
  const nc = await connect({ servers: server.url });
  t.teardown(async () => {
    await nc.close();
    await server.dispose();
  });
  const empty = await runRezolus('alert', 'events', '--nats', server.url, '--until', '0s');
  t.is(empty.code, 0, empty.stderr);
  t.regex(empty.stderr, /no alert events since/);

  await ensureAlertStream(nc, { maxAgeMs: 3_600_000, maxBytes: 1 << 20, replicas: 1 }, silentLogger());
  const now = Date.now();
  const base: AlertRecord = {
    v: 1, rule: 'memory_low', host: 'db-1', series: {}, state: 'firing', previous: 'pending', seq: 2, activeAt: now - 5000, firedAt: now - 2000,
    value: 50 * 1024 * 1024, threshold: 100 * 1024 * 1024, unit: 'bytes', severity: 'page', labels: {}, summary: 'db-1 has only 50 MiB available',
    evaluator: 'test', at: now - 2000, published: true,
  };
  const records = [base, { ...base, host: 'web-1', summary: 'web-1 low' }];
  for (const r of records) await jetstream(nc).publish(alertSubject(r.host, r.rule), JSON.stringify(transitionEvent(r, '50 MiB', '100MiB')), { msgID: transitionMsgId(r) });

  const all = await runRezolus('alert', 'events', '--nats', server.url, '--since', '10m', '--until', '0s');
  t.is(all.code, 0, all.stderr);
  const lines = all.stdout.trim().split('\n');
  t.is(lines.length, 2, all.stdout);
  t.regex(lines[0] ?? '', /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ {2}db-1 {2}memory_low {2}pending -> firing {2}50 MiB \(threshold 100MiB\) {2}db-1 has only 50 MiB available$/);
  const one = await runRezolus('alert', 'events', '--nats', server.url, '--since', '10m', '--until', '0s', '--hosts', 'web-*');
  t.is(one.stdout.trim().split('\n').length, 1, one.stdout);
  t.regex(one.stdout, /web-1 {2}memory_low/);
  const bad = await runRezolus('alert', 'events', '--nats', server.url, '--since', 'yesterday');
  t.is(bad.code, 2);
  t.regex(bad.stderr, /--since must be a duration ago/);
});
