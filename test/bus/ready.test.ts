/**
 * untilReady (src/bus/ready.ts): what a forming cluster answers (no answer
 * in time, "temporarily unavailable", "no suitable peers") is retried and
 * said once, then every so often; anything else is thrown at once.
 */
import test from 'ava';
import { JetStreamApiError } from '@nats-io/jetstream';
import { TimeoutError } from '@nats-io/nats-core';
import pino from 'pino';
import { NatsPermissionError } from '../../src/errors.js';
import { isNotReadyYet, NOT_READY_CODES, untilReady } from '../../src/bus/ready.js';

function apiError(code: number, description: string): JetStreamApiError {
  return new JetStreamApiError({ code: 503, err_code: code, description });
}

test('a timeout (also under a RequestError) and the forming-cluster codes are "not ready yet"; a stream not found or a refusal is not', (t) => {
  t.true(isNotReadyYet(new TimeoutError()));
  t.true(isNotReadyYet(new Error('request failed', { cause: new TimeoutError() })));
  t.true(isNotReadyYet(apiError(NOT_READY_CODES.NotAvailable, 'JetStream system temporarily unavailable')));
  t.true(isNotReadyYet(apiError(NOT_READY_CODES.NoPeers, 'no suitable peers for placement')));
  t.false(isNotReadyYet(apiError(10059, 'stream not found')));
  t.false(isNotReadyYet(new NatsPermissionError('refused')));
});

test('retries until it answers, says so once and when it answers; anything else is thrown at once', async (t) => {
  const msgs: string[] = [];
  const log = pino({ level: 'info' }, { write: (s: string) => void msgs.push((JSON.parse(s) as { msg: string }).msg) });
  let calls = 0;
  const value = await untilReady(async () => {
    if (++calls < 4) throw new TimeoutError();
    return 'ok';
  }, { log, what: 'JetStream at nats://x', retryMs: 10, stillEveryMs: 25 });
  t.is(value, 'ok');
  t.is(calls, 4);
  t.regex(msgs[0] ?? '', /^JetStream at nats:\/\/x does not answer yet \(a cluster that has not elected its JetStream meta leader/);
  t.regex(msgs.at(-1) ?? '', /^JetStream at nats:\/\/x answers after \d+ s$/);
  const refused = new NatsPermissionError('refused');
  await t.throwsAsync(untilReady(() => Promise.reject(refused), { log, what: 'x', retryMs: 10 }), { is: refused });
});

test('a long wait is said again every so often, with how long', async (t) => {
  const msgs: string[] = [];
  const log = pino({ level: 'info' }, { write: (s: string) => void msgs.push((JSON.parse(s) as { msg: string }).msg) });
  let calls = 0;
  // every failure after the first is "so often" at stillEveryMs 0
  await untilReady(async () => {
    if (++calls <= 4) throw new TimeoutError();
  }, { log, what: 'stream REZOLUS', retryMs: 5, stillEveryMs: 0 });
  t.is(msgs.filter((m) => /^still waiting for stream REZOLUS after \d+ s \(is every node of the cluster up\?/.test(m)).length, 3);
});
