/**
 * Nats-Msg-Id between hosts (issue 14, part 3, the other headers), against a
 * real nats-server with the users `rezolus nats-auth` makes. JetStream
 * deduplicates message ids across the whole stream, and a per-host user
 * learns the newest stored id from the refusal of a publish with a wrong
 * `Nats-Expected-Last-Msg-Id`. When ids followed from one another
 * (`<host>.<sampler>.<instance>.<seq>`), host B could publish under host A's
 * next ids on its own subjects and A's frames were acked as duplicates and
 * never stored. The agent's ids carry a tag keyed by a secret of its run, so
 * B cannot name the next ones.
 */
import test from 'ava';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { jetstream, jetstreamManager, JetStreamApiError } from '@nats-io/jetstream';
import { headers, type NatsConnection } from '@nats-io/nats-core';
import { runAgent, type RunningAgent } from '../../src/agent/main.js';
import { connectBus } from '../../src/bus/connect.js';
import { agentInboxPrefix, bundleSubject, metricsSubject } from '../../src/bus/subjects.js';
import { bundleFrames } from '../../src/frame/bundle.js';
import { loadAgentConfig, type AgentConfig } from '../../src/config/agent.js';
import type { NatsSecurity } from '../../src/config/nats.js';
import { decodeFrame } from '../../src/frame/codec.js';
import { silentLogger } from '../../src/log/logger.js';
import { SAMPLER_NAMES } from '../../src/samplers/registry.js';
import { NO_KERNEL, PROC, SYS } from '../helpers/fixtures.js';
import { startAuthNats, type AuthNats } from '../helpers/auth-nats.js';
import type { TestNats } from '../helpers/nats.js';
import { security } from '../helpers/security.js';
import { until } from '../helpers/until.js';

const SAMPLER = 'memory_meminfo';
/** how many of A's next ids B publishes under, in each form it can guess */
const AHEAD = 30;

let server: TestNats;
let dir: string;
let auth: AuthNats;
let admin: NatsConnection;
let agent: RunningAgent | undefined;

const user = (name: string, inboxPrefix = ''): NatsSecurity => security({ user: name, password: auth.password(name), inboxPrefix });

function agentConfig(host: string): AgentConfig {
  const base = loadAgentConfig(undefined, SAMPLER_NAMES, { host, natsUrl: server.url });
  const samplers = Object.fromEntries(SAMPLER_NAMES.map((n) => [n, { enabled: n === SAMPLER, intervalMs: 100 }]));
  // a message a tick (bundle_interval 0): stored() counts messages of one frame each
  return { ...base, procfs: PROC, sysfs: SYS, kernel: NO_KERNEL, samplers, http: undefined, nats: user(`agent-${host}`), bundleIntervalMs: 0 };
}

/** What the stream holds of A's one sampler: its messages (a bundle of its one frame each), and the seq of the newest frame. */
async function stored(): Promise<{ count: number; lastSeq: number }> {
  const jsm = await jetstreamManager(admin);
  const subject = bundleSubject('hosta');
  const info = await jsm.streams.info('REZOLUS', { subjects_filter: subject });
  const last = await jsm.streams.getMessage('REZOLUS', { last_by_subj: subject });
  return { count: info.state.subjects?.[subject] ?? 0, lastSeq: last === null ? 0 : decodeFrame(bundleFrames(last.data)[0] as Uint8Array).seq };
}

test.before(async () => {
  dir = mkdtempSync(join(tmpdir(), 'rezolus-msg-id-test-'));
  auth = await startAuthNats(dir, ['hosta', 'hostb']);
  server = auth.server;
  admin = auth.admin;
  await auth.provision();
});

test.after.always(async () => {
  await agent?.stop().catch(() => undefined);
  await auth?.dispose();
  if (dir !== undefined) rmSync(dir, { recursive: true, force: true });
});

test.serial("a host that learns another's newest message id cannot take that host's next ids", async (t) => {
  agent = await runAgent(agentConfig('hosta'), silentLogger());
  t.true(await until(async () => (await stored()).count >= 3, 20_000), 'hosta\'s frames are stored');

  // B learns the newest id of the stream: a refused conditional publish names it
  const b = await connectBus({ url: server.url, name: 'test-hostb', log: silentLogger(), security: user('agent-hostb', agentInboxPrefix('hostb')) });
  const js = jetstream(b);
  const probe = headers();
  probe.set('Nats-Expected-Last-Msg-Id', 'no-such-id');
  const refusal = await js.publish(metricsSubject('hostb', SAMPLER), 'probe', { headers: probe }).catch((e: unknown) => e);
  t.true(refusal instanceof JetStreamApiError);
  const leaked = /wrong last msg ID: (\S+)/.exec(refusal instanceof Error ? refusal.message : '')?.[1] ?? '';
  t.log(`hostb learned the last stored id: ${leaked}`);
  const m = /^(hosta\.[a-z_]+\.[0-9a-f]+\.)(\d+)(?:\.([0-9a-f]+))?$/.exec(leaked);
  t.truthy(m, `the leaked id is one of hosta's (${leaked})`);
  if (m === null) return;
  const [, prefix, seqText, tag] = m as unknown as [string, string, string, string | undefined];
  const from = Number(seqText);

  // B publishes on its own subject under A's next ids: the bare form, and with the tag it saw
  const guesses = Array.from({ length: AHEAD }, (_, k) => from + 1 + k).flatMap((n) => [`${prefix}${n}`, ...(tag === undefined ? [] : [`${prefix}${n}.${tag}`])]);
  for (const id of guesses) await js.publish(bundleSubject('hostb'), 'spoof', { msgID: id });
  await b.close();

  // A goes on past those ids: every frame of its run is stored, none is taken as a duplicate
  t.true(await until(async () => (await stored()).lastSeq > from + AHEAD + 2, 30_000), 'hosta published past the guessed ids');
  const s = await stored();
  t.is(s.count, s.lastSeq, `hosta's ${SAMPLER} frames 1..${s.lastSeq} are all stored`);
  t.is(agent.publisher.stats.duplicates, 0, 'no frame of hosta was acked as a duplicate');
});
