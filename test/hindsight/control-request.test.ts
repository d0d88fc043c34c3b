import test from 'ava';
import { headers } from '@nats-io/nats-core';
import { BadRequestError } from '../../src/errors.js';
import { controlRequestBody } from '../../src/hindsight/control-request.js';

const data = (s: string): Uint8Array => new TextEncoder().encode(s);

test('an empty body or {"output": ...} is a dump request', (t) => {
  t.is(controlRequestBody({ data: data(''), reply: '_INBOX.x' }), undefined);
  t.deepEqual(controlRequestBody({ data: data('{"output":"a.parquet"}'), reply: '_R_.a.b' }), { output: 'a.parquet' });
  t.deepEqual(controlRequestBody({ data: data('{}') }), {});
});

test('server answers are refused: unknown keys, null, not JSON', (t) => {
  for (const body of [
    '{"type":"io.nats.jetstream.api.v1.account_info_response","memory":0}',
    '{"stream":"REZOLUS", "seq":11}',
    '{"error":{"code":503}}',
    '{"output":"a.parquet","seq":1}',
  ]) {
    t.throws(() => controlRequestBody({ data: data(body) }), { instanceOf: BadRequestError, message: /^not a dump request: unknown key/ }, body);
  }
  t.throws(() => controlRequestBody({ data: data('null') }), { instanceOf: BadRequestError, message: /not a dump request: null/ });
  t.throws(() => controlRequestBody({ data: data('\x82\xa4host') }), { instanceOf: BadRequestError, message: /the request is not JSON/ });
});

test('messages the server itself sends are refused: a status, a JetStream delivery, a request whose shared info is not a client\'s', (t) => {
  t.throws(() => controlRequestBody({ data: data(''), headers: headers(404, 'No Messages') }), { message: /a NATS status message \(404\)/ });
  t.throws(() => controlRequestBody({ data: data('{"output":"evil.parquet"}'), reply: '$JS.ACK.REZOLUS.c.1.1.1.1.0' }), { message: /a JetStream consumer delivered \(\$JS\.ACK\.REZOLUS\.c…\)/ });
  const js = headers();
  js.set('Nats-Request-Info', '{"acc":"REZOLUS","kind":"JetStream"}');
  t.throws(() => controlRequestBody({ data: data(''), reply: '_R_.a.b', headers: js }), { message: /sent by the server \(JetStream\)/ });
  const admin = headers();
  admin.set('Nats-Request-Info', '{"acc":"REZOLUS","user":"rezolus-admin","kind":"Client"}');
  t.is(controlRequestBody({ data: data(''), reply: '_R_.a.b', headers: admin }), undefined);
});
