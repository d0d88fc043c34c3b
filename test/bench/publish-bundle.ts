/**
 * What one message per host per tick would save, before anyone changes the
 * subject contract: the agent's real publish path (AckedPublisher: a core
 * publish with Nats-Msg-Id, its HMAC tag, a reply under one inbox, the
 * JetStream ack parsed) into a private nats-server, the same bytes sent two
 * ways, one tick after the other:
 *
 *   A. 25 frames a tick, one publish and one ack each (today: one subject per sampler);
 *   B. the same 25 frames in one message (length-prefixed), one publish, one ack.
 *
 * The frames are real: one tick of the 9 procfs samplers on this host's /proc,
 * cycled to 25 (the BPF samplers' frames are larger; the per-message cost
 * does not depend on it much). CPU of this process and of nats-server per
 * tick, back to back (JIT-warm) and paced at 20 and 250 ms (closer to a real
 * 1 s tick, where the code runs JIT-cold); nats-server's idle CPU over as long
 * a pause is taken off its figure.
 *
 *   npx tsx test/bench/publish-bundle.ts [--ticks N=2000] [--frames 25]
 */
import { randomInt } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import { jetstreamManager } from '@nats-io/jetstream';
import { connect } from '@nats-io/transport-node';
import { Agent, type FrameSink } from '../../src/agent/agent.js';
import { AckedPublisher } from '../../src/bus/acks.js';
import { MsgIdTags, taggedMsgId } from '../../src/bus/subjects.js';
import { silentLogger } from '../../src/log/logger.js';
import { SAMPLERS } from '../../src/samplers/registry.js';
import type { PublishStats } from '../../src/samplers/rezolus/introspection.js';
import { startNatsServer } from '../../src/up/nats-server.js';
import { CLK_TCK, cpuModel, cpuTicks, fmt, NATS_SERVER_BIN, PROCFS_SAMPLERS, say, sleep } from './common.js';

const { values: flags } = parseArgs({ options: { ticks: { type: 'string' }, frames: { type: 'string' } } });
const TICKS = Number(flags.ticks ?? 2000);
const FRAMES = Number(flags.frames ?? 25);
if (!(TICKS >= 100) || !(FRAMES >= 2)) {
  process.stderr.write('usage: npx tsx test/bench/publish-bundle.ts [--ticks N>=100] [--frames N>=2]\n');
  process.exit(2);
}

class Keep implements FrameSink {
  readonly frames: { subject: string; data: Uint8Array; idPrefix: string; seq: number }[] = [];
  get stats(): PublishStats {
    return { published: 0, dropped: 0, retries: 0, buffered: 0, bufferedBytes: 0 };
  }
  publishFrame(subject: string, data: Uint8Array, idPrefix: string, seq: number): void {
    this.frames.push({ subject, data, idPrefix, seq });
  }
  putDescriptor(): void {}
}

const sink = new Keep();
const agent = new Agent({
  host: 'bench',
  instance: randomInt(1, 2 ** 32 - 1),
  samplers: SAMPLERS.map((definition) => ({ definition, enabled: PROCFS_SAMPLERS.includes(definition.name), intervalMs: 86_400_000 })),
  context: { procRoot: '/proc', sysRoot: '/sys' },
  sink,
  descriptorTtlMs: 86_400_000,
  log: silentLogger(),
});
await agent.start();
await agent.tickOnce();
await agent.stop();
const one = sink.frames.slice(0, PROCFS_SAMPLERS.length);
const frames = Array.from({ length: FRAMES }, (_, i) => {
  const f = one[i % one.length] as (typeof one)[number];
  return { ...f, subject: `rezolus.metrics.bench.s${i}`, idPrefix: `bench.s${i}.00000001.` };
});
const bytes = frames.reduce((s, f) => s + f.data.byteLength, 0);
/** the bundle: u32 length + frame, back to back */
const bundle = (): Uint8Array => {
  const out = Buffer.allocUnsafe(bytes + 4 * frames.length);
  let o = 0;
  for (const f of frames) {
    out.writeUInt32BE(f.data.byteLength, o);
    out.set(f.data, o + 4);
    o += 4 + f.data.byteLength;
  }
  return out;
};

const dir = mkdtempSync(join(tmpdir(), 'rezolus-publish-bundle-'));
const server = await startNatsServer({ binary: NATS_SERVER_BIN, port: 0, dataDir: join(dir, 'nats') });
try {
  const nc = await connect({ servers: server.url, name: 'rezolus-bench-publish-bundle' });
  const jsm = await jetstreamManager(nc);
  await jsm.streams.add({ name: 'BUNDLE', subjects: ['rezolus.metrics.>', 'rezolus.bundle.>'], max_age: 60e9, duplicate_window: 10e9 });
  const acks = new AckedPublisher(nc, 5000);
  const tags = new MsgIdTags();
  let seq = 0;
  const many = async (): Promise<void> => {
    seq++;
    await Promise.all(frames.map((f) => acks.publish(f.subject, f.data, taggedMsgId(f.idPrefix, seq, tags.next()))));
  };
  const single = async (): Promise<void> => {
    seq++;
    await acks.publish('rezolus.bundle.bench', bundle(), taggedMsgId('bench.bundle.00000001.', seq, tags.next()));
  };
  /**
   * CPU per tick: this process's summed over the ticks themselves (send to the last ack,
   * the pauses left out); nats-server's over the run, less its own CPU over as long a pause
   * with nothing sent (its housekeeping), measured right after.
   */
  const measure = async (tick: () => Promise<void>, n: number, paceMs: number): Promise<{ self: number; server: number }> => {
    for (let i = 0; i < 50; i++) await tick();
    let self = 0;
    const s0 = cpuTicks(server.pid);
    const t0 = Date.now();
    for (let i = 0; i < n; i++) {
      const c0 = process.cpuUsage();
      await tick();
      const c = process.cpuUsage(c0);
      self += c.user + c.system;
      if (paceMs > 0) await sleep(paceMs);
    }
    const serverMs = ((cpuTicks(server.pid) - s0) * 1000) / CLK_TCK;
    let idleMs = 0;
    if (paceMs > 0) {
      const i0 = cpuTicks(server.pid);
      await sleep(Date.now() - t0);
      idleMs = ((cpuTicks(server.pid) - i0) * 1000) / CLK_TCK;
    }
    return { self: self / 1000 / n, server: (serverMs - idleMs) / n };
  };
  say(`CPU: ${cpuModel()}; node ${process.version}; ${FRAMES} frames a tick, ${bytes} bytes (one tick of the procfs samplers cycled)`);
  for (const [label, n, pace] of [['back to back', TICKS, 0], ['paced 20 ms', Math.min(TICKS, 500), 20], ['paced 250 ms', Math.min(TICKS, 60), 250]] as const) {
    // A and B twice each, interleaved, so drift hits both
    const a1 = await measure(many, n, pace);
    const b1 = await measure(single, n, pace);
    const a2 = await measure(many, n, pace);
    const b2 = await measure(single, n, pace);
    const a = { self: (a1.self + a2.self) / 2, server: (a1.server + a2.server) / 2 };
    const b = { self: (b1.self + b2.self) / 2, server: (b1.server + b2.server) / 2 };
    // nats-server's CPU comes in 10 ms clock ticks and its housekeeping moves by more than the paced runs' work: back to back only
    const srv = (x: { server: number }): string => (pace === 0 ? `, nats-server ${fmt(x.server, 3)} ms/tick` : '');
    say(`${label} (${n} ticks x 2 each):`);
    say(`  A ${FRAMES} publishes + acks: publisher ${fmt(a.self, 3)} ms/tick${srv(a)}`);
    say(`  B 1 bundled publish + ack: publisher ${fmt(b.self, 3)} ms/tick${srv(b)}`);
    say(`  saved by bundling: publisher ${fmt(a.self - b.self, 3)} ms/tick (${fmt((1 - b.self / a.self) * 100, 0)} %)${pace === 0 ? `, nats-server ${fmt(a.server - b.server, 3)} ms/tick` : ''}`);
  }
  acks.close();
  await nc.close();
} finally {
  await server.stop();
  rmSync(dir, { recursive: true, force: true });
}
process.exit(0);
