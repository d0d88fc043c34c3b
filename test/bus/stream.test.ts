import test from 'ava';
import { connect } from '@nats-io/transport-node';
import { jetstreamManager, StorageType } from '@nats-io/jetstream';
import { ensureStream, STREAM_SUBJECT, type StreamOptions } from '../../src/bus/stream.js';
import { StreamConflictError } from '../../src/errors.js';
import { silentLogger } from '../../src/log/logger.js';
import { startTestNats, type TestNats } from '../helpers/nats.js';

const OPTS: StreamOptions = {
  name: 'REZOLUS', maxAgeMs: 15 * 60_000, maxBytes: 64 * 1024 * 1024, maxMsgsPerSubject: 1000, duplicateWindowMs: 120_000, replicas: 1,
};

let server: TestNats;
test.before(async () => {
  server = await startTestNats();
});
test.after.always(async () => {
  await server?.dispose();
});

test.serial('ensureStream creates the rolling window with the contract settings', async (t) => {
  const nc = await connect({ servers: server.url });
  const jsm = await jetstreamManager(nc);
  const info = await ensureStream(jsm, OPTS, silentLogger());
  t.deepEqual(info.config.subjects, [STREAM_SUBJECT]);
  t.is(info.config.storage, StorageType.File);
  t.is(info.config.discard, 'old');
  t.is(info.config.retention, 'limits');
  t.is(info.config.max_age, 15 * 60 * 1e9);
  t.is(info.config.max_bytes, 64 * 1024 * 1024);
  t.is(info.config.max_msgs_per_subject, 1000);
  t.is(info.config.duplicate_window, 120 * 1e9);
  // a second call with new limits updates them in place
  const updated = await ensureStream(jsm, { ...OPTS, maxAgeMs: 30 * 60_000, maxBytes: 32 * 1024 * 1024 }, silentLogger());
  t.is(updated.config.max_age, 30 * 60 * 1e9);
  t.is(updated.config.max_bytes, 32 * 1024 * 1024);
  // duplicate window is capped at max_age
  const capped = await ensureStream(jsm, { ...OPTS, maxAgeMs: 60_000, duplicateWindowMs: 120_000 }, silentLogger());
  t.is(capped.config.duplicate_window, 60 * 1e9);
  await jsm.streams.delete('REZOLUS');
  await nc.close();
});

test.serial('ensureStream refuses a stream whose storage and discard conflict, naming both', async (t) => {
  const nc = await connect({ servers: server.url });
  const jsm = await jetstreamManager(nc);
  await jsm.streams.add({ name: 'CONFLICT', subjects: [STREAM_SUBJECT], storage: StorageType.Memory, discard: 'new' as never });
  const error = await t.throwsAsync(ensureStream(jsm, { ...OPTS, name: 'CONFLICT' }, silentLogger()), { instanceOf: StreamConflictError });
  t.regex(error.message, /stream CONFLICT/);
  t.regex(error.message, /storage is "memory", rezolus needs "file"/);
  t.regex(error.message, /discard is "new"/);
  // and another stream cannot take the same subjects: the overlap is explained
  const overlap = await t.throwsAsync(ensureStream(jsm, OPTS, silentLogger()), { instanceOf: StreamConflictError });
  t.regex(overlap.message, /another stream already captures "rezolus\.metrics\.>"/);
  await jsm.streams.delete('CONFLICT');
  await nc.close();
});

test.serial('ensureStream makes the stream refuse rollups, and turns them off on a stream that allows them', async (t) => {
  const nc = await connect({ servers: server.url });
  const jsm = await jetstreamManager(nc);
  t.false((await ensureStream(jsm, OPTS, silentLogger())).config.allow_rollup_hdrs === true, 'created without rollups');
  await jsm.streams.update('REZOLUS', { allow_rollup_hdrs: true });
  t.true((await jsm.streams.info('REZOLUS')).config.allow_rollup_hdrs);
  t.false((await ensureStream(jsm, OPTS, silentLogger())).config.allow_rollup_hdrs === true, 'turned off again');
  await jsm.streams.delete('REZOLUS');
  await nc.close();
});
