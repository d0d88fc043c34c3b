/** The last-per-subject scan of `rezolus status` on real streams: every subject once, and an empty stream at once. */
import test from 'ava';
import { jetstream, jetstreamManager } from '@nats-io/jetstream';
import { Kvm } from '@nats-io/kv';
import { connect } from '@nats-io/transport-node';
import { scanLastPerSubject } from '../../src/status/scan.js';
import { startTestNats } from '../helpers/nats.js';

test('an empty bucket (an alert evaluator with no alert yet) is scanned at once; a full one gives each key\'s newest value', async (t) => {
  const server = await startTestNats();
  const nc = await connect({ servers: server.url });
  try {
    const kvm = new Kvm(nc);
    await kvm.create('scan_empty');
    const full = await kvm.create('scan_full');
    await full.put('a', '1');
    await full.put('a', '2');
    await full.put('b', '3');
    const js = jetstream(nc);
    const started = Date.now();
    const none = await scanLastPerSubject(js, { stream: 'KV_scan_empty', filter: '$KV.scan_empty.>', headersOnly: false, patienceMs: 30_000 }, () => t.fail('no message'));
    t.is(none, 0);
    t.true(Date.now() - started < 20_000, `an empty stream is not waited on (${Date.now() - started} ms)`);
    const seen = new Map<string, string>();
    const n = await scanLastPerSubject(js, { stream: 'KV_scan_full', filter: '$KV.scan_full.>', headersOnly: false }, (m) => seen.set(m.subject, m.string()));
    t.is(n, 2);
    t.deepEqual(Object.fromEntries(seen), { '$KV.scan_full.a': '2', '$KV.scan_full.b': '3' });
    const jsm = await jetstreamManager(nc);
    const left = [];
    for await (const c of jsm.consumers.list('KV_scan_full')) left.push(c.name);
    t.deepEqual(left, [], 'the scan deleted its consumer');
  } finally {
    await nc.close();
    await server.dispose();
  }
});
