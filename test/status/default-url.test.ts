/**
 * `rezolus status` without --nats, REZOLUS_NATS_URL or a `rezolus up` in the
 * directory takes the default URL (oneShotNats: how "default"); when that
 * finds no stream, or nothing at all, the message says it fell back and what
 * to do. A real nats-server on a free port stands in for the default one
 * (the shared server on 4222 is never asked).
 */
import test from 'ava';
import { silentLogger } from '../../src/log/logger.js';
import { gatherStatus } from '../../src/status/gather.js';
import { startTestNats } from '../helpers/nats.js';

test('fell back to the default URL: the message says no rezolus up runs here, for a server without the stream and for no server', async (t) => {
  const server = await startTestNats();
  try {
    const log = silentLogger();
    const noStream = await t.throwsAsync(gatherStatus({ url: server.url, stream: 'REZOLUS', hosts: '*', log, fellBack: true }));
    t.is(noStream?.message, `no rezolus up runs in this directory (./data/nats.url) and ${server.url} has no rezolus stream REZOLUS: start one with npm start, or pass --nats URL`);
    // a URL that was given: as before, no word of rezolus up
    const given = await t.throwsAsync(gatherStatus({ url: server.url, stream: 'REZOLUS', hosts: '*', log }));
    t.is(given?.message, `no rezolus stream REZOLUS on ${server.url}: is an agent running?`);
    const nothing = await t.throwsAsync(gatherStatus({ url: 'nats://127.0.0.1:1', stream: 'REZOLUS', hosts: '*', log, fellBack: true }));
    t.regex(nothing?.message ?? '', /^no rezolus up runs in this directory \(\.\/data\/nats\.url\) and nothing answers at nats:\/\/127\.0\.0\.1:1 \(.*connection refused.*\): start one with npm start, or pass --nats URL$/i);
    const refused = await t.throwsAsync(gatherStatus({ url: 'nats://127.0.0.1:1', stream: 'REZOLUS', hosts: '*', log }));
    t.regex(refused?.message ?? '', /^cannot connect to NATS at nats:\/\/127\.0\.0\.1:1: /);
  } finally {
    await server.dispose();
  }
});
