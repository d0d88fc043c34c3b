/**
 * What each NATS failure rezolus acts on arrives as, measured against a real
 * nats-server running the `rezolus nats-auth` config, and the typed error
 * bus/api-errors.ts makes of it: a class and its fields or a JetStream API
 * code, never a message.
 */
import test from 'ava';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { jetstreamManager, JetStreamApiError } from '@nats-io/jetstream';
import { Kvm } from '@nats-io/kv';
import { InvalidArgumentError, PermissionViolationError, RequestError, type NatsConnection } from '@nats-io/nats-core';
import { connect } from '@nats-io/transport-node';
import { AckedPublisher } from '../../src/bus/acks.js';
import {
  isNoStreamAnswer, isStreamNotFound, isSubjectOverlap, jetStreamCode, JS_API_CODES, permissionViolation, publishFailure,
} from '../../src/bus/api-errors.js';
import { explainConnectError, isTransient } from '../../src/bus/auth.js';
import { connectBus } from '../../src/bus/connect.js';
import { Publisher } from '../../src/bus/publisher.js';
import { ensureStream } from '../../src/bus/stream.js';
import { DESCRIPTOR_BUCKET, STATUS_BUCKET } from '../../src/bus/subjects.js';
import { loadAgentConfig } from '../../src/config/agent.js';
import { MessageTooLargeError, NatsPermissionError, NoStreamError, PublishRefusedError } from '../../src/errors.js';
import { silentLogger } from '../../src/log/logger.js';
import { SAMPLER_NAMES } from '../../src/samplers/registry.js';
import { startAuthNats, type AuthNats } from '../helpers/auth-nats.js';
import { security } from '../helpers/security.js';

let dir: string;
let auth: AuthNats;
/** hosta's agent user, with its own inbox */
let agent: NatsConnection;
const STREAM = loadAgentConfig(undefined, SAMPLER_NAMES).stream;

test.before(async () => {
  dir = mkdtempSync(join(tmpdir(), 'rezolus-api-errors-test-'));
  auth = await startAuthNats(dir, ['hosta']);
  await auth.provision();
  agent = await connectBus({ url: auth.server.url, name: 'test-agent', log: silentLogger(), security: auth.user('agent-hosta', { inboxPrefix: '_INBOX_hosta' }) });
});

test.after.always(async () => {
  await agent?.close();
  await auth?.dispose();
  rmSync(dir, { recursive: true, force: true });
});

test.serial('a JetStream request the permissions refuse: a RequestError whose cause is the PermissionViolationError of the publish', async (t) => {
  const jsm = await jetstreamManager(agent);
  const info = await t.throwsAsync(jsm.streams.info('OTHER'));
  t.true(info instanceof RequestError);
  const refused = permissionViolation(info);
  t.true(refused instanceof PermissionViolationError);
  t.is(refused?.operation, 'publish');
  t.is(refused?.subject, '$JS.API.STREAM.INFO.OTHER');
  t.is(permissionViolation(await t.throwsAsync(jsm.streams.add({ name: 'OTHER', subjects: ['other.>'] })))?.subject, '$JS.API.STREAM.CREATE.OTHER');
  t.is(permissionViolation(await t.throwsAsync(jsm.streams.update(STREAM.name, { max_age: 1 })))?.subject, `$JS.API.STREAM.UPDATE.${STREAM.name}`);
  // ensureStream says which stream and why, as a NatsPermissionError
  const ensured = await t.throwsAsync(ensureStream(jsm, { ...STREAM, name: 'OTHER' }, silentLogger()), { instanceOf: NatsPermissionError });
  t.is(ensured.code, 'NATS_PERMISSION');
  t.true(permissionViolation(ensured) instanceof PermissionViolationError, 'the refusal is kept as the cause');
});

test.serial('a reply inbox the permissions refuse: the PermissionViolationError of the subscription, naming the inbox', async (t) => {
  // hosta's user with the client's default inbox (_INBOX), not its own (_INBOX_hosta)
  const nc = await connectBus({ url: auth.server.url, name: 'test-inbox', log: silentLogger(), security: auth.user('agent-hosta') });
  try {
    const refused = permissionViolation(await t.throwsAsync(jetstreamManager(nc)));
    t.is(refused?.operation, 'subscription');
    t.regex(refused?.subject ?? '', /^_INBOX\.\w+\.\*$/);
  } finally {
    await nc.close();
  }
});

test.serial('a descriptor put to another host\'s key is a PublishRefusedError: dropped and counted as refused, never retried', async (t) => {
  const kv = await new Kvm(agent).open(DESCRIPTOR_BUCKET);
  const subject = `$KV.${DESCRIPTOR_BUCKET}.hostb.0123456789abcdef`;
  const raw = await t.throwsAsync(kv.put('hostb.0123456789abcdef', '{}'));
  t.is(permissionViolation(raw)?.subject, subject);
  const mapped = publishFailure(raw, subject, 2);
  t.true(mapped instanceof PublishRefusedError);
  t.is((mapped as PublishRefusedError).subject, subject);
  // the publisher of an agent that claims hostb: its descriptor is refused, hosta's frames go on
  const retried: unknown[] = [];
  const publisher = new Publisher({
    nc: agent, descriptors: kv, host: 'hostb', maxBufferBytes: 1024 * 1024, log: silentLogger(), timeoutMs: 1000, onRetry: (e) => retried.push(e),
  });
  publisher.putDescriptor('0123456789abcdef', '{"v":1}');
  for (let i = 1; i <= 3; i++) publisher.publishFrame('rezolus.metrics.hosta.cpu_usage', new Uint8Array(16), 'hosta.cpu_usage.1.', i);
  t.true(await publisher.flush(5000), 'the refused descriptor does not hold the frames behind it');
  t.is(publisher.stats.refused, 1);
  t.is(publisher.stats.descriptorsPut, 0);
  t.is(publisher.stats.published, 3);
  t.deepEqual(retried, []);
  await publisher.close();
});

test.serial('a message above the stream\'s max_msg_size or the server\'s max_payload is a MessageTooLargeError', async (t) => {
  const admin = auth.admin;
  const jsm = await jetstreamManager(admin);
  await jsm.streams.add({ name: 'SMALL', subjects: ['small.>'], max_msg_size: 100 });
  const acks = new AckedPublisher(admin, 2000);
  try {
    const overStream = await t.throwsAsync(acks.publish('small.x', new Uint8Array(200), 'a'), { instanceOf: MessageTooLargeError });
    t.is(overStream.subject, 'small.x');
    t.is(overStream.bytes, 200);
    t.true(overStream.cause instanceof JetStreamApiError);
    t.is(jetStreamCode(overStream), JS_API_CODES.MessageExceedsMaximum);
    const maxPayload = admin.info?.max_payload ?? 0;
    const overPayload = await t.throwsAsync(acks.publish('small.x', new Uint8Array(maxPayload + 1), 'b'), { instanceOf: MessageTooLargeError });
    t.true(overPayload.cause instanceof InvalidArgumentError, 'the client\'s own check, before the message leaves');
    // another refusal by the stream stays a JetStreamApiError with its code (retried by the publisher)
    await jsm.streams.update('SMALL', { max_msg_size: 100, max_msgs: 1, discard: 'new' as never });
    await acks.publish('small.x', new Uint8Array(10), 'c');
    const full = await t.throwsAsync(acks.publish('small.x', new Uint8Array(10), 'd'), { instanceOf: JetStreamApiError });
    t.not(full.code, JS_API_CODES.MessageExceedsMaximum);
  } finally {
    acks.close();
  }
  // a KV put: the same
  await jsm.streams.add({ name: 'KV_small', subjects: ['$KV.small.>'], max_msg_size: 100, max_msgs_per_subject: 1, allow_direct: true, discard: 'new' as never });
  const kv = await new Kvm(admin).open('small');
  const put = publishFailure(await t.throwsAsync(kv.put('k', new Uint8Array(200))), '$KV.small.k', 200);
  t.true(put instanceof MessageTooLargeError);
  // and the publisher drops such a frame, counted, without stalling the frames behind it
  const descriptors = await new Kvm(admin).open(DESCRIPTOR_BUCKET);
  await jsm.streams.purge('SMALL');
  await jsm.streams.update('SMALL', { max_msg_size: 100, max_msgs: -1, discard: 'old' as never });
  const publisher = new Publisher({ nc: admin, descriptors, host: 'hosta', maxBufferBytes: 1024 * 1024, log: silentLogger(), timeoutMs: 1000 });
  publisher.publishFrame('small.x', new Uint8Array(10), 'small.x.', 1);
  publisher.publishFrame('small.x', new Uint8Array(200), 'small.x.', 2);
  publisher.publishFrame('small.x', new Uint8Array(10), 'small.x.', 3);
  t.true(await publisher.flush(5000));
  t.is(publisher.stats.dropped, 1);
  t.is(publisher.stats.published, 2);
  t.is(publisher.stats.retries, 0);
  await publisher.close();
  await jsm.streams.delete('SMALL');
  await jsm.streams.delete('KV_small');
});

test.serial('a KV put that no stream answers (the bucket is gone) is a NoStreamError', async (t) => {
  const jsm = await jetstreamManager(auth.admin);
  const kv = await new Kvm(auth.admin).create('gone');
  await jsm.streams.delete('KV_gone');
  const raw = await t.throwsAsync(kv.put('k', 'x'));
  t.true(isNoStreamAnswer(raw), 'JetStreamNotEnabled over a RequestError over NoRespondersError');
  const mapped = publishFailure(raw, '$KV.gone.k', 1);
  t.true(mapped instanceof NoStreamError);
  t.is((mapped as NoStreamError).subject, '$KV.gone.k');
});

test.serial('stream not found and subjects that overlap another stream are JetStream API codes', async (t) => {
  const jsm = await jetstreamManager(auth.admin);
  t.true(isStreamNotFound(await t.throwsAsync(jsm.streams.info('NOPE'))));
  const overlap = await t.throwsAsync(jsm.streams.add({ name: 'DUP', subjects: ['rezolus.metrics.>'] }));
  t.true(isSubjectOverlap(overlap));
  t.false(isStreamNotFound(overlap));
  t.false(isSubjectOverlap(await t.throwsAsync(jsm.streams.info(`KV_${STATUS_BUCKET}_nope`))));
});

test.serial('a refused connect is worth waiting out; a refused password is not, and is explained', async (t) => {
  // nothing listens on port 1
  const refused = await t.throwsAsync(connect({ servers: 'nats://127.0.0.1:1', noAsyncTraces: true, waitOnFirstConnect: false }));
  t.true(isTransient(refused));
  const password = await t.throwsAsync(connect({ servers: auth.server.url, user: 'agent-hosta', pass: 'wrong' }));
  t.false(isTransient(password));
  t.regex(explainConnectError(password, security({ user: 'agent-hosta' })), /^the server refused user "agent-hosta" \(AuthorizationError: Authorization Violation\)/);
});
