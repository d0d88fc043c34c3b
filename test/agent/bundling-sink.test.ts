/**
 * The agent with [stream] bundle on: the frames of a tick leave as one
 * message on rezolus.metrics.<host>._bundle, after the descriptors they
 * need; a refresh that overruns its tick goes with its own tick's end; a
 * bundle never exceeds what the server takes.
 */
import test from 'ava';
import { Agent, type FrameSink } from '../../src/agent/agent.js';
import { BundlingSink, type BundleTarget } from '../../src/agent/bundling-sink.js';
import { bundleFrames, MAX_BUNDLE_FRAMES } from '../../src/frame/bundle.js';
import { decodeFrame } from '../../src/frame/codec.js';
import { silentLogger } from '../../src/log/logger.js';
import { metric, MetricKind, Unit } from '../../src/metrics/metric.js';
import type { PublishStats } from '../../src/samplers/rezolus/introspection.js';
import type { Reading, SamplerDefinition } from '../../src/samplers/types.js';
import { PROC, SYS } from '../helpers/fixtures.js';

type Event =
  | { readonly kind: 'put'; readonly key: string }
  | { readonly kind: 'frame'; readonly subject: string; readonly data: Uint8Array }
  | { readonly kind: 'bundle'; readonly subject: string; readonly data: Uint8Array; readonly msgId: string; readonly frames: number };

class Collector implements BundleTarget {
  readonly events: Event[] = [];
  stats: PublishStats = { published: 0, dropped: 0, retries: 0, buffered: 0, bufferedBytes: 0 };
  constructor(private readonly limit?: number) {}
  maxPayload(): number | undefined {
    return this.limit;
  }
  publishFrame(subject: string, data: Uint8Array): void {
    this.events.push({ kind: 'frame', subject, data });
  }
  publishBundle(subject: string, data: Uint8Array, idPrefix: string, seq: number, frames: number): void {
    this.events.push({ kind: 'bundle', subject, data, msgId: `${idPrefix}${seq}`, frames });
  }
  putDescriptor(key: string): void {
    this.events.push({ kind: 'put', key });
  }
  bundles(): Extract<Event, { kind: 'bundle' }>[] {
    return this.events.filter((e): e is Extract<Event, { kind: 'bundle' }> => e.kind === 'bundle');
  }
}

const level = metric({ name: 'fake_level', kind: MetricKind.Gauge, unit: Unit.Count, labels: ['i'], description: 'Fake level.' });

/** A sampler of `series` series of `value` + the refresh number; `delay` before each reading. */
function fake(name: string, o: { series?: number; value?: number; delay?: () => Promise<void> } = {}): SamplerDefinition {
  let n = 0;
  return {
    name,
    description: name,
    metrics: [level],
    async init() {
      return {
        name,
        metrics: [level],
        async refresh(): Promise<Reading> {
          await o.delay?.();
          n++;
          return { points: Array.from({ length: o.series ?? 1 }, (_, i) => ({ metric: level, labels: { i: String(i) }, value: (o.value ?? 0) + n })), skipped: 0 };
        },
      };
    },
  };
}

function agentOf(sink: FrameSink, samplers: readonly SamplerDefinition[], intervalMs = 2_000_000_000): Agent {
  return new Agent({
    host: 'Web-01.example',
    instance: 0xa1b2c3d4,
    samplers: samplers.map((definition) => ({ definition, enabled: true, intervalMs })),
    context: { procRoot: PROC, sysRoot: SYS },
    sink,
    descriptorTtlMs: 86_400_000,
    log: silentLogger(),
  });
}

const samplersOf = (data: Uint8Array): string[] => bundleFrames(data).map((f) => decodeFrame(f).sampler);

test('a tick of three samplers is one bundle on the host\'s bundle subject, after the three descriptors, with a msg id of its own', async (t) => {
  const target = new Collector();
  const agent = agentOf(new BundlingSink(target, 'Web-01.example', 0xa1b2c3d4), [fake('fake_a'), fake('fake_b'), fake('fake_c')]);
  await agent.start();
  await agent.tickOnce();
  await agent.tickOnce();
  await agent.stop();
  t.deepEqual(target.events.map((e) => e.kind), ['put', 'put', 'put', 'bundle', 'bundle', 'bundle']);
  const [first, second, last] = target.bundles();
  t.is(first?.subject, 'rezolus.metrics.web-01_example._bundle');
  t.is(first?.msgId, 'web-01_example._bundle.a1b2c3d4.1');
  t.is(second?.msgId, 'web-01_example._bundle.a1b2c3d4.2');
  t.is(first?.frames, 3);
  t.deepEqual(samplersOf(first?.data as Uint8Array).sort(), ['fake_a', 'fake_b', 'fake_c']);
  const lastFrames = bundleFrames(last?.data as Uint8Array).map(decodeFrame);
  t.true(lastFrames.every((f) => f.last === true && f.seq === 3), 'the last frames of the run in one bundle');
});

test('a refresh that hangs holds its tick\'s other frames until the next tick ends, never longer; its own frame goes once it is done', async (t) => {
  const target = new Collector();
  let release: () => void = () => {};
  let slowCalls = 0;
  const slow = fake('fake_slow', {
    delay: () => (++slowCalls === 2 ? new Promise<void>((r) => (release = r)) : Promise.resolve()),
  });
  const agent = agentOf(new BundlingSink(target, 'h', 1), [fake('fake_fast'), slow], 100);
  t.teardown(() => agent.stop());
  await agent.start();
  const until = async (ok: () => boolean): Promise<void> => {
    for (let i = 0; i < 1000 && !ok(); i++) await new Promise((r) => setTimeout(r, 10));
  };
  const seqs = (b: { data: Uint8Array }): string =>
    bundleFrames(b.data)
      .map(decodeFrame)
      .map((f) => `${f.sampler.slice(5)}${f.seq}`)
      .join('+');
  // tick 1: both; tick 2: the slow one hangs, the fast frame waits for the end of tick 3 (the slow one overruns it)
  await until(() => target.bundles().length >= 4);
  const held = target.bundles().map(seqs);
  t.is(held[0], 'fast1+slow1');
  t.is(held[1], 'fast2+fast3');
  t.is(held[2], 'fast4');
  t.is(held[3], 'fast5');
  release();
  await until(() => target.bundles().some((b) => seqs(b).includes('slow2')));
  const all = target.bundles().map(seqs);
  const at = all.findIndex((s) => s.includes('slow2'));
  t.true(at > 3, all.join(' '));
  t.is(all.join('+').split('+').filter((s) => s.startsWith('slow')).join(' '), 'slow1 slow2', 'each slow frame once');
  t.true((agent.status().find((s) => s.name === 'fake_slow')?.overruns ?? 0) > 0);
});

test('no bundle is larger than the server takes: a tick is split; a frame too large alone goes alone on its own subject', async (t) => {
  const limit = 8192;
  const target = new Collector(limit);
  const sink = new BundlingSink(target, 'h', 1);
  // 300 series of 9-byte values: ~2.7 kB a frame, its descriptor ~6 kB (under the limit)
  const agent = agentOf(sink, ['fake_a', 'fake_b', 'fake_c'].map((n) => fake(n, { series: 300, value: 2 ** 50 })));
  await agent.start();
  await agent.tickOnce();
  const bundles = target.bundles();
  t.is(bundles.length, 2);
  t.true(bundles.every((b) => b.data.byteLength <= limit - 1024), bundles.map((b) => b.data.byteLength).join(','));
  t.deepEqual(bundles.flatMap((b) => samplersOf(b.data)).sort(), ['fake_a', 'fake_b', 'fake_c']);
  t.is(bundles.reduce((n, b) => n + b.frames, 0), 3);
  t.false(target.events.some((e) => e.kind === 'frame'));
  await agent.stop();
  // a frame no bundle could hold (the agent's descriptor check keeps real ones below this) goes alone, after
  // what is kept (which may hold its sampler's previous frame)
  sink.publishFrame('rezolus.metrics.h.fake_big', new Uint8Array(100), 'h.fake_big.00000001.', 1);
  sink.publishFrame('rezolus.metrics.h.fake_big', new Uint8Array(limit - 1000), 'h.fake_big.00000001.', 2);
  sink.endTick();
  t.deepEqual(target.events.slice(-2).map((e) => [e.kind, (e as { subject: string }).subject]), [
    ['bundle', 'rezolus.metrics.h._bundle'],
    ['frame', 'rezolus.metrics.h.fake_big'],
  ]);
});

test('a tick where no sampler made a frame sends no bundle', async (t) => {
  const target = new Collector();
  const empty: SamplerDefinition = { name: 'fake_empty', description: 'e', metrics: [level], init: async () => ({ name: 'fake_empty', metrics: [level], refresh: async () => ({ points: [], skipped: 0 }) }) };
  const agent = agentOf(new BundlingSink(target, 'h', 1), [empty]);
  await agent.start();
  await agent.tickOnce();
  await agent.stop();
  t.deepEqual(target.events, []);
});

test('a tick of more frames than a bundle may hold goes as several bundles, none above MAX_BUNDLE_FRAMES', (t) => {
  const target = new Collector();
  const sink = new BundlingSink(target, 'h', 1);
  for (let i = 0; i < MAX_BUNDLE_FRAMES + 6; i++) sink.publishFrame(`rezolus.metrics.h.s${i}`, new Uint8Array(30), `h.s${i}.00000001.`, 1);
  sink.endTick();
  t.deepEqual(target.bundles().map((b) => [b.frames, bundleFrames(b.data).length]), [
    [MAX_BUNDLE_FRAMES, MAX_BUNDLE_FRAMES],
    [6, 6],
  ]);
});

test('bundle_interval: ticks faster than it are kept and go at each whole multiple of it; slower ticks wait for them, at most the interval; stop sends', (t) => {
  const target = new Collector();
  const sink = new BundlingSink(target, 'h', 1, 500);
  const frame = (name: string, seq: number): void => sink.publishFrame(`rezolus.metrics.h.${name}`, new Uint8Array(30).fill(seq % 256), `h.${name}.00000001.`, seq);
  const sent = (): number[] => target.bundles().map((b) => b.frames);
  const fast = (ms: number): void => {
    frame('fast', ms / 100);
    sink.endTick({ boundaryMs: ms, intervalMs: 100 });
  };
  const slow = (ms: number): void => {
    frame('slow', ms / 1000);
    sink.endTick({ boundaryMs: ms, intervalMs: 1000 });
  };
  // 100 ms ticks from 10.1 s: 10.1 … 10.4 are kept, 10.5 sends the five
  for (let i = 1; i <= 5; i++) {
    fast(10_000 + i * 100);
    t.deepEqual(sent(), i < 5 ? [] : [5], `after the tick at ${10_000 + i * 100} ms`);
  }
  // 10.6 … 11.0 go at 11.0; a 1 s sampler's tick at 11.0 ending after it waits for the next bundle (11.5)
  for (let ms = 10_600; ms <= 11_000; ms += 100) fast(ms);
  slow(11_000);
  t.deepEqual(sent(), [5, 5], 'the slow tick is kept while fast ticks run');
  for (let ms = 11_100; ms <= 11_500; ms += 100) fast(ms);
  t.deepEqual(sent(), [5, 5, 6]);
  // the slow tick at 12.0 ending before the fast one: both go with it
  for (let ms = 11_600; ms <= 11_900; ms += 100) fast(ms);
  slow(12_000);
  t.deepEqual(sent(), [5, 5, 6]);
  fast(12_000);
  t.deepEqual(sent(), [5, 5, 6, 6], 'two messages a second, not three');
  // fast ticks stopped (none within the interval): a slow tick goes at once
  slow(13_000);
  t.deepEqual(sent().slice(4), [1]);
  // kept since a slow tick for the whole interval: the next tick sends it, even off a multiple
  fast(13_900);
  slow(14_000);
  t.is(sent().length, 5);
  fast(14_600); // 14.6 is not the first tick past 14.5: kept under the fast rule alone
  t.deepEqual(sent().slice(5), [3], 'held since 14.0: due at 14.5');
  // ticks of 300 ms: each goes with the first tick at or past a multiple of 500 ms (14.7, 15.0, 15.6, 16.2, 16.5)
  for (const b of [14_700, 15_000, 15_300, 15_600, 15_900, 16_200, 16_500]) {
    frame('mid', b);
    sink.endTick({ boundaryMs: b, intervalMs: 300 });
  }
  t.deepEqual(sent().slice(6), [1, 1, 2, 2, 1]);
  // what is kept goes at stop (no tick)
  fast(16_600);
  t.is(sent().length, 11);
  sink.endTick();
  t.deepEqual(sent().slice(11), [1]);

  // 0 (and any interval at or above the tick's): every tick at once
  const every = new Collector();
  const plain = new BundlingSink(every, 'h', 1, 0);
  for (let i = 1; i <= 3; i++) {
    plain.publishFrame('rezolus.metrics.h.fast', new Uint8Array(30), 'h.fast.00000001.', i);
    plain.endTick({ boundaryMs: 10_000 + i * 100, intervalMs: 100 });
  }
  plain.publishFrame('rezolus.metrics.h.slow', new Uint8Array(30), 'h.slow.00000001.', 1);
  plain.endTick({ boundaryMs: 11_000, intervalMs: 1000 });
  t.deepEqual(every.bundles().map((b) => b.frames), [1, 1, 1, 1]);
});

test('a slower tick kept for the fast ticks goes by a timer when their bundle does not come (a hung or overrunning fast sampler), and only then', async (t) => {
  const target = new Collector();
  const sink = new BundlingSink(target, 'h', 1, 100);
  const frame = (name: string, seq: number): void => sink.publishFrame(`rezolus.metrics.h.${name}`, new Uint8Array(30).fill(seq), `h.${name}.00000001.`, seq);
  const until = async (ok: () => boolean): Promise<void> => {
    for (let i = 0; i < 500 && !ok(); i++) await new Promise((r) => setTimeout(r, 10));
  };
  // fast ticks of 20 ms, then a 1 s tick at 10.1 s after the fast bundle of 10.1 s: kept for the next one
  for (let ms = 10_020; ms <= 10_100; ms += 20) {
    frame('fast', ms / 20);
    sink.endTick({ boundaryMs: ms, intervalMs: 20 });
  }
  t.deepEqual(target.bundles().map((b) => b.frames), [5]);
  frame('slow', 1);
  sink.endTick({ boundaryMs: 10_100, intervalMs: 1000 });
  t.is(target.bundles().length, 1, 'kept for the fast ticks');
  // no fast tick ends again: the timer (100 + 20 ms) sends it
  await until(() => target.bundles().length === 2);
  t.deepEqual(target.bundles().map((b) => b.frames), [5, 1]);

  // the fast bundle comes in time: it takes the slow frame, and no timer sends anything after it
  frame('slow', 2);
  sink.endTick({ boundaryMs: 11_000, intervalMs: 1000 }); // fast ticks stopped a while ago: at once
  t.deepEqual(target.bundles().map((b) => b.frames), [5, 1, 1]);
  frame('fast', 1);
  sink.endTick({ boundaryMs: 11_020, intervalMs: 20 });
  frame('slow', 3);
  sink.endTick({ boundaryMs: 11_040, intervalMs: 1000 });
  for (let ms = 11_040; ms <= 11_100; ms += 20) {
    frame('fast', ms / 20);
    sink.endTick({ boundaryMs: ms, intervalMs: 20 });
  }
  t.deepEqual(target.bundles().map((b) => b.frames), [5, 1, 1, 6]);
  frame('fast', 9);
  sink.endTick({ boundaryMs: 11_120, intervalMs: 20 });
  await new Promise((r) => setTimeout(r, 300));
  t.is(target.bundles().length, 4, 'the fast frame of 11.12 s is still kept: no timer left behind');
  sink.endTick();
  t.deepEqual(target.bundles().map((b) => b.frames), [5, 1, 1, 6, 1]);
});

test('an agent at 100 ms with bundle_interval 500 ms sends its ticks five at a time, in order, none lost', async (t) => {
  const target = new Collector();
  const agent = agentOf(new BundlingSink(target, 'h', 1, 500), [fake('fake_a'), fake('fake_b')], 100);
  await agent.start();
  const until = async (ok: () => boolean): Promise<void> => {
    for (let i = 0; i < 1000 && !ok(); i++) await new Promise((r) => setTimeout(r, 10));
  };
  await until(() => target.bundles().length >= 4);
  await agent.stop();
  const bundles = target.bundles();
  const frames = bundles.flatMap((b) => bundleFrames(b.data).map(decodeFrame));
  // the first bundle holds the ticks up to the first whole 500 ms, the last what stop() made; the others ten frames
  // (a busy machine may skip a tick of one sampler: an overrun, counted, not a frame lost)
  const overruns = agent.status().reduce((n, s) => n + s.overruns, 0);
  for (const b of bundles.slice(1, -1)) t.true(b.frames <= 10 && b.frames >= 10 - 2 * overruns, `a bundle of ${b.frames} frames`);
  for (const name of ['fake_a', 'fake_b']) {
    const seqs = frames.filter((f) => f.sampler === name).map((f) => f.seq);
    t.deepEqual(seqs, seqs.map((_, i) => i + 1), `${name}: every seq once, in order`);
  }
});

test('a frame is copied as it comes: its bytes may be written over at once, and the bundle still holds them as they were', (t) => {
  const target = new Collector();
  const sink = new BundlingSink(target, 'h', 1, 500);
  const made: Buffer[] = [];
  // one buffer written over for every frame, as the encoder's slab once a frame was given back
  const scratch = Buffer.alloc(400);
  for (let i = 0; i < 40; i++) {
    const frame = Buffer.alloc(30 + 7 * i, i + 1);
    made.push(frame);
    frame.copy(scratch);
    sink.publishFrame(`s${i}`, scratch.subarray(0, frame.length), 'p', i + 1);
    scratch.fill(0xee);
  }
  sink.endTick();
  const [bundle] = target.bundles();
  t.is(bundle?.frames, 40);
  t.deepEqual(bundleFrames(bundle?.data ?? new Uint8Array()).map((f) => Buffer.from(f)), made);
});
