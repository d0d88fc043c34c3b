import test from 'ava';
import { setTimeout as sleep } from 'node:timers/promises';
import { Agent, type AgentOptions, type FrameSink } from '../../src/agent/agent.js';
import { decodeFrame, resolveFrame } from '../../src/frame/codec.js';
import { parseDescriptor } from '../../src/frame/descriptor.js';
import type { RawFrame } from '../../src/frame/types.js';
import { silentLogger } from '../../src/log/logger.js';
import { metric, MetricKind, Unit } from '../../src/metrics/metric.js';
import { SAMPLERS } from '../../src/samplers/registry.js';
import type { PublishStats } from '../../src/samplers/rezolus/introspection.js';
import type { Labels, Point, Reading, SamplerDefinition } from '../../src/samplers/types.js';
import { SamplerUnsupportedError } from '../../src/samplers/types.js';
import { fullGc } from '../helpers/gc.js';
import { PROC, SYS } from '../helpers/fixtures.js';

// ---------------------------------------------------------------- helpers

type SinkEvent =
  | { readonly kind: 'put'; readonly key: string; readonly value: string }
  | { readonly kind: 'frame'; readonly subject: string; readonly data: Uint8Array; readonly msgId: string };

/** A FrameSink that records every call, in order. */
class CollectingSink implements FrameSink {
  readonly events: SinkEvent[] = [];
  stats: PublishStats = { published: 0, dropped: 0, retries: 0, buffered: 0, bufferedBytes: 0 };

  publishFrame(subject: string, data: Uint8Array, idPrefix: string, seq: number): void {
    this.events.push({ kind: 'frame', subject, data, msgId: `${idPrefix}${seq}` });
    this.stats = { ...this.stats, published: this.stats.published + 1 };
  }

  putDescriptor(key: string, value: string): void {
    this.events.push({ kind: 'put', key, value });
  }

  get frames(): Extract<SinkEvent, { kind: 'frame' }>[] {
    return this.events.filter((e): e is Extract<SinkEvent, { kind: 'frame' }> => e.kind === 'frame');
  }

  get puts(): Extract<SinkEvent, { kind: 'put' }>[] {
    return this.events.filter((e): e is Extract<SinkEvent, { kind: 'put' }> => e.kind === 'put');
  }

  framesOf(sampler: string): { raw: RawFrame; subject: string; msgId: string; at: number }[] {
    const out: { raw: RawFrame; subject: string; msgId: string; at: number }[] = [];
    this.events.forEach((e, at) => {
      if (e.kind !== 'frame') return;
      const raw = decodeFrame(e.data);
      if (raw.sampler === sampler) out.push({ raw, subject: e.subject, msgId: e.msgId, at });
    });
    return out;
  }

  /** Index of the put of `hash` in the event list (-1 when never put). */
  putIndex(hash: string): number {
    return this.events.findIndex((e) => e.kind === 'put' && e.key === hash);
  }
}

const fakeCounter = metric({ name: 'fake_events', kind: MetricKind.Counter, unit: Unit.Events, labels: ['id'], description: 'Fake events.' });
const fakeHistogram = metric({ name: 'fake_latency', kind: MetricKind.Histogram, unit: Unit.Nanoseconds, labels: [], description: 'Fake latency.' });
const fakeGauge = metric({ name: 'fake_level', kind: MetricKind.Gauge, unit: Unit.Count, labels: [], description: 'Fake level.' });
const ID0: Labels = { id: '0' };
const ID1: Labels = { id: '1' };
const NONE: Labels = {};

interface Fake {
  readonly definition: SamplerDefinition;
  inits: number;
  refreshes: number;
}

/** A hand-written sampler; `refresh(n)` gets the 1-based refresh number. */
function fake(
  name: string,
  refresh: (n: number) => Reading | Promise<Reading> = (n) => ({
    points: [
      { metric: fakeCounter, labels: ID0, value: 1000 * n },
      { metric: fakeGauge, labels: NONE, value: -n },
    ],
    skipped: 0,
  }),
  init: () => void = () => {},
): Fake {
  const f: Fake = {
    inits: 0,
    refreshes: 0,
    definition: {
      name,
      description: `fake sampler ${name}`,
      metrics: [fakeCounter, fakeGauge],
      async init() {
        f.inits++;
        init();
        return {
          name,
          metrics: [fakeCounter, fakeGauge],
          async refresh() {
            f.refreshes++;
            return refresh(f.refreshes);
          },
        };
      },
    },
  };
  return f;
}

/** An interval long enough that the agent's own timer does not fire during a test (~23 days). */
const NEVER = 2_000_000_000;
const INSTANCE = 0xa1b2c3d4;

function makeAgent(
  sink: FrameSink,
  samplers: readonly (SamplerDefinition | { definition: SamplerDefinition; enabled?: boolean; intervalMs?: number })[],
  extra: Partial<AgentOptions> = {},
): Agent {
  return new Agent({
    host: 'test-host',
    instance: INSTANCE,
    samplers: samplers.map((s) =>
      'definition' in s
        ? { definition: s.definition, enabled: s.enabled ?? true, intervalMs: s.intervalMs ?? NEVER }
        : { definition: s, enabled: true, intervalMs: NEVER },
    ),
    context: { procRoot: PROC, sysRoot: SYS },
    sink,
    descriptorTtlMs: 86_400_000,
    log: silentLogger(),
    ...extra,
  });
}

const wallNs = (): bigint => BigInt(Date.now()) * 1_000_000n;
/** nowNs() is anchored on Date.now(), which has millisecond resolution: allow one ms either side. */
const MS = 1_000_000n;

function statusOf(agent: Agent, name: string) {
  const s = agent.status().find((x) => x.name === name);
  if (s === undefined) throw new Error(`no status for ${name}`);
  return s;
}

// ---------------------------------------------------------------- publishing

test('one tick publishes one frame per active sampler, descriptor first, with the contract subject and msg id', async (t) => {
  const sink = new CollectingSink();
  const a = fake('fake_a');
  const b = fake('fake_b');
  const agent = makeAgent(sink, [a.definition, b.definition]);
  t.teardown(() => agent.stop());
  await agent.start();
  t.is(sink.events.length, 0);

  const before = wallNs();
  await agent.tickOnce();
  const after = wallNs();

  t.is(sink.frames.length, 2);
  t.is(sink.puts.length, 2);
  for (const name of ['fake_a', 'fake_b']) {
    const [f, ...rest] = sink.framesOf(name);
    t.is(rest.length, 0);
    if (f === undefined) return t.fail(`no frame for ${name}`);
    t.is(f.subject, `rezolus.metrics.test-host.${name}`);
    t.is(f.msgId, `test-host.${name}.a1b2c3d4.1`);
    t.is(f.raw.host, 'test-host');
    t.is(f.raw.sampler, name);
    t.is(f.raw.instance, INSTANCE);
    t.is(f.raw.seq, 1);
    t.true(f.raw.beginNs <= f.raw.endNs);
    t.true(f.raw.beginNs >= before - MS, `begin ${f.raw.beginNs} before the test's ${before}`);
    t.true(f.raw.endNs <= after + MS, `end ${f.raw.endNs} after the test's ${after}`);
    // the descriptor was put before the frame that references it
    const put = sink.putIndex(f.raw.descriptor);
    t.true(put >= 0 && put < f.at, `descriptor ${f.raw.descriptor} put at ${put}, frame at ${f.at}`);
    const putEvent = sink.events[put] as Extract<SinkEvent, { kind: 'put' }>;
    const descriptor = parseDescriptor(putEvent.value);
    t.is(descriptor.sampler, name);
    t.deepEqual(descriptor.series, [['fake_events', ['0']], ['fake_level', []]]);
    t.deepEqual(resolveFrame(f.raw, descriptor).values, [1000, -1]);
  }
  // same layout for both fakes but a different sampler name: two descriptors
  t.not(sink.puts[0]?.key, sink.puts[1]?.key);

  const st = statusOf(agent, 'fake_a');
  t.deepEqual(st.status, { state: 'active' });
  t.is(st.refreshes, 1);
  t.is(st.errors, 0);
  t.is(st.lastSeries, 2);
  t.is(st.lastFrameBytes, (sink.frames.find((e) => e.subject.endsWith('.fake_a'))?.data.byteLength) ?? -1);
});

test('the next tick with the same layout puts no descriptor and increments seq by one', async (t) => {
  const sink = new CollectingSink();
  const a = fake('fake_a');
  const agent = makeAgent(sink, [a.definition]);
  t.teardown(() => agent.stop());
  await agent.start();
  await agent.tickOnce();
  await agent.tickOnce();
  await agent.tickOnce();
  t.deepEqual(
    sink.events.map((e) => e.kind),
    ['put', 'frame', 'frame', 'frame'],
  );
  const frames = sink.framesOf('fake_a');
  t.deepEqual(frames.map((f) => f.raw.seq), [1, 2, 3]);
  t.deepEqual(frames.map((f) => f.msgId), ['test-host.fake_a.a1b2c3d4.1', 'test-host.fake_a.a1b2c3d4.2', 'test-host.fake_a.a1b2c3d4.3']);
  const hash = sink.puts[0]?.key;
  t.true(frames.every((f) => f.raw.descriptor === hash));
  t.deepEqual(frames.map((f) => f.raw.values), [[1000, -1], [2000, -2], [3000, -3]]);
  for (let i = 1; i < frames.length; i++) {
    t.true((frames[i]?.raw.beginNs ?? 0n) >= (frames[i - 1]?.raw.endNs ?? 0n), 'windows do not go back in time');
  }
});

test('stop takes one last reading of each sampler that published, marked as the last frame of the run', async (t) => {
  const sink = new CollectingSink();
  const a = fake('fake_a');
  const agent = makeAgent(sink, [a.definition]);
  await agent.start();
  await agent.tickOnce();
  await agent.tickOnce();
  await agent.stop();
  const frames = sink.framesOf('fake_a');
  t.deepEqual(frames.map((f) => f.raw.seq), [1, 2, 3]);
  t.deepEqual(frames.map((f) => f.raw.last === true), [false, false, true]);
  await agent.stop();
  t.is(sink.framesOf('fake_a').length, 3, 'a second stop sends nothing');
});

test('a descriptor larger than the bus takes fails the sampler with the reason; nothing of it is published', async (t) => {
  const sink = new CollectingSink();
  const small = Object.assign(sink, { maxPayload: () => 64 });
  const a = fake('fake_a');
  const agent = makeAgent(small, [a.definition]);
  t.teardown(() => agent.stop());
  await agent.start();
  await agent.tickOnce();
  t.deepEqual(sink.events, [], 'no descriptor and no frame');
  const st = agent.status().find((s) => s.name === 'fake_a')?.status;
  t.is(st?.state, 'failed');
  t.regex(st?.state === 'failed' ? st.error : '', /its descriptor \(2 series\) is \d+ bytes, more than the bus takes \(max_payload 64\)/);
});

test('the descriptor is put again after a quarter of its TTL', async (t) => {
  const sink = new CollectingSink();
  const agent = makeAgent(sink, [fake('fake_a').definition], { descriptorTtlMs: 800 });
  t.teardown(() => agent.stop());
  await agent.start();
  await agent.tickOnce();
  await agent.tickOnce(); // well within ttl/4 = 200 ms: no re-put
  await sleep(300);
  await agent.tickOnce(); // > ttl/4 later: re-put before the frame
  t.deepEqual(sink.events.map((e) => e.kind), ['put', 'frame', 'frame', 'put', 'frame']);
  t.is(sink.puts[0]?.key, sink.puts[1]?.key);
});

test('a descriptor no frame named for descriptorKeepMs is forgotten with when it was put: named again, it is put again before its frame', async (t) => {
  const sink = new CollectingSink();
  const layouts: Point[][] = [[{ metric: fakeCounter, labels: ID0, value: 1 }], [{ metric: fakeCounter, labels: ID1, value: 2 }]];
  let layout = 0;
  const s = fake('fake_churn', () => ({ points: layouts[layout] ?? [], skipped: 0 }));
  const agent = makeAgent(sink, [s.definition], { descriptorKeepMs: 1000 });
  t.teardown(() => agent.stop());
  await agent.start();
  await agent.tickOnce();
  layout = 1;
  await agent.tickOnce();
  const [a, b] = sink.puts.map((p) => p.key);
  // past the keep for the first, well within it for the second (named by the tick right before)
  await sleep(1200);
  await agent.tickOnce();
  t.deepEqual(agent.recentDescriptors().map((d) => d.hash), [b], 'the first layout is no longer recent');
  layout = 0;
  await agent.tickOnce();
  t.deepEqual(sink.events.map((e) => (e.kind === 'put' ? `put ${e.key === a ? 'a' : 'b'}` : 'frame')), ['put a', 'frame', 'put b', 'frame', 'frame', 'put a', 'frame']);
});

test('the host becomes a subject token in subject, msg id and frame', async (t) => {
  const sink = new CollectingSink();
  const agent = makeAgent(sink, [fake('fake_a').definition], { host: 'Web01.Example.COM' });
  t.teardown(() => agent.stop());
  t.is(agent.host, 'web01_example_com');
  await agent.start();
  await agent.tickOnce();
  const [f] = sink.frames;
  t.is(f?.subject, 'rezolus.metrics.web01_example_com.fake_a');
  t.is(f?.msgId, 'web01_example_com.fake_a.a1b2c3d4.1');
  t.is(decodeFrame(f?.data ?? new Uint8Array()).host, 'web01_example_com');
});

test('a layout change gets a new descriptor put before its frame; returning to a known layout reuses its hash', async (t) => {
  const sink = new CollectingSink();
  const layouts: Point[][] = [
    [{ metric: fakeCounter, labels: ID0, value: 10 }],
    [{ metric: fakeCounter, labels: ID0, value: 20 }, { metric: fakeCounter, labels: ID1, value: 5 }],
    [{ metric: fakeCounter, labels: ID0, value: 30 }, { metric: fakeCounter, labels: ID1, value: 6 }],
    [{ metric: fakeCounter, labels: ID0, value: 40 }],
  ];
  const s = fake('fake_hotplug', (n) => ({ points: layouts[n - 1] ?? [], skipped: 0 }));
  const agent = makeAgent(sink, [s.definition]);
  t.teardown(() => agent.stop());
  await agent.start();
  for (let i = 0; i < 4; i++) await agent.tickOnce();

  t.deepEqual(sink.events.map((e) => e.kind), ['put', 'frame', 'put', 'frame', 'frame', 'frame']);
  const [p1, p2] = sink.puts;
  t.not(p1?.key, p2?.key);
  t.deepEqual(parseDescriptor(p2?.value ?? '').series, [['fake_events', ['0']], ['fake_events', ['1']]]);
  const frames = sink.framesOf('fake_hotplug');
  t.deepEqual(frames.map((f) => f.raw.descriptor), [p1?.key, p2?.key, p2?.key, p1?.key]);
  t.deepEqual(frames.map((f) => f.raw.seq), [1, 2, 3, 4]);
  t.deepEqual(frames.map((f) => f.raw.values), [[10], [20, 5], [30, 6], [40]]);
});

test('a sampler that writes new labels into the array it returned before gets a new descriptor', async (t) => {
  // rezolus_self and others make their points once and write values into them again;
  // a changed series in that same array is still a changed layout
  const sink = new CollectingSink();
  const points: { metric: typeof fakeCounter; labels: Labels; value: number }[] = [{ metric: fakeCounter, labels: ID0, value: 1 }];
  const s = fake('fake_reuse', (n) => {
    if (n === 2) points[0] = { metric: fakeCounter, labels: ID1, value: 2 };
    return { points, skipped: 0 };
  });
  const agent = makeAgent(sink, [s.definition]);
  t.teardown(() => agent.stop());
  await agent.start();
  await agent.tickOnce();
  await agent.tickOnce();
  const [p1, p2] = sink.puts;
  t.is(sink.puts.length, 2);
  t.deepEqual(parseDescriptor(p2?.value ?? '').series, [['fake_events', ['1']]]);
  t.deepEqual(sink.framesOf('fake_reuse').map((f) => f.raw.descriptor), [p1?.key, p2?.key]);
});

test('a reading is not kept once its frame is made: its values can go with the next young-generation GC', async (t) => {
  // held until the next tick, a second at 1 Hz, the values outlived V8's scavenges and
  // were moved to the old space (histogram arrays: half of what the agent promoted)
  const sink = new CollectingSink();
  const refs: WeakRef<object>[] = [];
  const s = fake('fake_hist', (n) => {
    const value = { groupingPower: 2, maxValuePower: 8, index: [n], count: [n] };
    refs.push(new WeakRef(value));
    return { points: [{ metric: fakeHistogram, labels: NONE, value }], skipped: 0 };
  });
  const agent = makeAgent(sink, [s.definition]);
  t.teardown(() => agent.stop());
  await agent.start();
  await agent.tickOnce();
  await agent.tickOnce();
  await sleep(0);
  fullGc();
  t.is(refs.length, 2);
  t.deepEqual(refs.map((r) => r.deref() === undefined), [true, true], 'no reading held after its frame');
  t.is(sink.framesOf('fake_hist').length, 2);
});

test('an empty reading publishes nothing and does not use a sequence number', async (t) => {
  const sink = new CollectingSink();
  const s = fake('fake_sparse', (n) => ({ points: n === 2 ? [] : [{ metric: fakeCounter, labels: ID0, value: n }], skipped: 0 }));
  const agent = makeAgent(sink, [s.definition]);
  t.teardown(() => agent.stop());
  await agent.start();
  for (let i = 0; i < 3; i++) await agent.tickOnce();
  t.deepEqual(sink.framesOf('fake_sparse').map((f) => [f.raw.seq, f.raw.values[0]]), [[1, 1], [2, 3]]);
  t.is(statusOf(agent, 'fake_sparse').refreshes, 3);
});

// ---------------------------------------------------------------- states

test('init errors: unsupported is reported with its reason, anything else is failed; neither publishes', async (t) => {
  const sink = new CollectingSink();
  const unsupported = fake('fake_unsupported', undefined, () => {
    throw new SamplerUnsupportedError('cannot read /proc/fake');
  });
  const broken = fake('fake_broken', undefined, () => {
    throw new TypeError('init exploded');
  });
  const ok = fake('fake_ok');
  let changes = 0;
  const agent = makeAgent(sink, [unsupported.definition, broken.definition, ok.definition], { onStatusChange: () => changes++ });
  t.teardown(() => agent.stop());
  await agent.start();
  t.true(changes >= 1);
  await agent.tickOnce();

  t.deepEqual(statusOf(agent, 'fake_unsupported').status, { state: 'unsupported', reason: 'cannot read /proc/fake' });
  t.deepEqual(statusOf(agent, 'fake_broken').status, { state: 'failed', error: 'TypeError: init exploded' });
  t.deepEqual(statusOf(agent, 'fake_ok').status, { state: 'active' });
  t.is(unsupported.refreshes, 0);
  t.is(broken.refreshes, 0);
  t.deepEqual(sink.frames.map((f) => f.subject), ['rezolus.metrics.test-host.fake_ok']);
  // samplerStats (what rezolus_self reports) leaves out disabled and unsupported samplers
  t.deepEqual(agent.samplerStats().map((s) => s.name), ['fake_broken', 'fake_ok']);
});

test('a failing refresh marks the sampler failed, the others still publish, and it recovers', async (t) => {
  const sink = new CollectingSink();
  const flaky = fake('fake_flaky', (n) => {
    if (n === 1) throw new Error('refresh broke');
    return { points: [{ metric: fakeCounter, labels: ID0, value: n }], skipped: 0 };
  });
  const ok = fake('fake_ok');
  const agent = makeAgent(sink, [flaky.definition, ok.definition]);
  t.teardown(() => agent.stop());
  await agent.start();

  await agent.tickOnce();
  let st = statusOf(agent, 'fake_flaky');
  t.deepEqual(st.status, { state: 'failed', error: 'Error: refresh broke' });
  t.is(st.errors, 1);
  t.is(st.refreshes, 1);
  t.deepEqual(sink.frames.map((f) => f.subject), ['rezolus.metrics.test-host.fake_ok']);
  t.deepEqual(statusOf(agent, 'fake_ok').status, { state: 'active' });

  await agent.tickOnce();
  st = statusOf(agent, 'fake_flaky');
  t.deepEqual(st.status, { state: 'active' });
  t.is(st.errors, 1);
  t.is(st.refreshes, 2);
  const frames = sink.framesOf('fake_flaky');
  t.is(frames.length, 1);
  t.is(frames[0]?.raw.seq, 1); // the failed refresh used no sequence number
  t.deepEqual(frames[0]?.raw.values, [2]);
  t.is(sink.framesOf('fake_ok').length, 2);
});

test('skipped entries of a reading add up in the sampler stats', async (t) => {
  const sink = new CollectingSink();
  const s = fake('fake_skippy', (n) => ({ points: [{ metric: fakeCounter, labels: ID0, value: n }], skipped: 2 }));
  const agent = makeAgent(sink, [s.definition]);
  t.teardown(() => agent.stop());
  await agent.start();
  await agent.tickOnce();
  t.is(statusOf(agent, 'fake_skippy').skipped, 2);
  await agent.tickOnce();
  t.is(statusOf(agent, 'fake_skippy').skipped, 4);
  t.is(sink.frames.length, 2);
});

test('a sampler disabled in the options never inits', async (t) => {
  const sink = new CollectingSink();
  const off = fake('fake_off');
  const on = fake('fake_on');
  const agent = makeAgent(sink, [{ definition: off.definition, enabled: false }, on.definition]);
  t.teardown(() => agent.stop());
  await agent.start();
  await agent.tickOnce();
  t.is(off.inits, 0);
  t.is(off.refreshes, 0);
  t.is(on.inits, 1);
  t.deepEqual(statusOf(agent, 'fake_off').status, { state: 'disabled', reason: 'disabled in config' });
  t.deepEqual(sink.frames.map((f) => f.subject), ['rezolus.metrics.test-host.fake_on']);
});

test('stop closes the samplers that started', async (t) => {
  let closed = 0;
  const def: SamplerDefinition = {
    name: 'fake_closable',
    description: 'closable',
    metrics: [fakeCounter],
    async init() {
      return {
        name: 'fake_closable',
        metrics: [fakeCounter],
        refresh: async () => ({ points: [], skipped: 0 }),
        close: async () => {
          closed++;
        },
      };
    },
  };
  const agent = makeAgent(new CollectingSink(), [def]);
  await agent.start();
  await agent.stop();
  t.is(closed, 1);
});

// ---------------------------------------------------------------- the real samplers

const PROCFS_SAMPLERS = SAMPLERS.filter((s) => !s.kernel);

test('every procfs sampler of the registry against the fixture root publishes frames that decode and resolve', async (t) => {
  const sink = new CollectingSink();
  const agent = makeAgent(sink, PROCFS_SAMPLERS);
  t.teardown(() => agent.stop());
  await agent.start();
  for (const s of agent.status()) t.deepEqual(s.status, { state: 'active' }, s.name);

  await agent.tickOnce();
  await agent.tickOnce();

  const names = PROCFS_SAMPLERS.map((s) => s.name);
  t.is(names.length, 10);
  const descriptors = new Map(sink.puts.map((p) => [p.key, parseDescriptor(p.value)]));
  for (const name of names) {
    const frames = sink.framesOf(name);
    t.deepEqual(frames.map((f) => f.raw.seq), [1, 2], name);
    for (const f of frames) {
      t.is(f.subject, `rezolus.metrics.test-host.${name}`);
      const d = descriptors.get(f.raw.descriptor);
      if (d === undefined) return t.fail(`${name}: descriptor ${f.raw.descriptor} never put`);
      t.true(sink.putIndex(f.raw.descriptor) < f.at, `${name}: descriptor put after its frame`);
      t.is(d.sampler, name);
      const frame = resolveFrame(f.raw, d);
      t.true(frame.values.length > 0, name);
      t.is(frame.values.length, d.series.length);
    }
    const st = statusOf(agent, name);
    t.is(st.skipped, 0, `${name} skipped entries`);
    t.is(st.errors, 0, `${name} errors`);
    t.deepEqual(st.status, { state: 'active' }, name);
  }
  t.is(sink.frames.length, 20);

  const [cores] = sink.framesOf('cpu_cores');
  const coresFrame = resolveFrame(cores?.raw as RawFrame, descriptors.get(cores?.raw.descriptor ?? '') ?? parseDescriptor('null'));
  t.deepEqual(coresFrame.descriptor.series, [['cpu_cores', []]]);
  t.deepEqual(coresFrame.values, [2]);

  // rezolus_self reports the agent's own figures: every non-disabled sampler has a refreshes series
  const self = sink.framesOf('rezolus_self')[1];
  const selfFrame = resolveFrame(self?.raw as RawFrame, descriptors.get(self?.raw.descriptor ?? '') ?? parseDescriptor('null'));
  const refreshSeries = selfFrame.descriptor.series.filter(([m]) => m === 'rezolus_sampler_refreshes').map(([, l]) => l[0]);
  t.deepEqual([...refreshSeries].sort(), [...names].sort());
  const published = selfFrame.descriptor.series.findIndex(([m]) => m === 'rezolus_publish_frames');
  // the second rezolus_self refresh ran after the first tick's 10 frames were published
  t.true((selfFrame.values[published] as number) >= 10);
  // one series per sampler and state, 1 for the state it is in
  const states = selfFrame.descriptor.series
    .map(([m, l], i) => [m, l, selfFrame.values[i]] as const)
    .filter(([m]) => m === 'rezolus_sampler_state');
  t.is(states.length, names.length * 5);
  t.deepEqual(states.filter(([, , v]) => v === 1).map(([, l]) => `${l[0]}=${l[1]}`).sort(), names.map((n) => `${n}=active`).sort());
});

// ---------------------------------------------------------------- timing

test('on its own clock a 100 ms sampler ticks on whole intervals', async (t) => {
  const sink = new CollectingSink();
  const s = fake('fake_fast');
  const agent = makeAgent(sink, [{ definition: s.definition, intervalMs: 100 }]);
  const before = wallNs();
  await agent.start();
  // five ticks, however long a busy machine takes to run them (a fixed 550 ms saw only 3)
  for (let waited = 0; sink.framesOf('fake_fast').length < 5 && waited < 10_000; waited += 20) await sleep(20);
  await agent.stop();
  const after = wallNs();

  // the last reading, taken when the agent stops, is not on the clock
  const all = sink.framesOf('fake_fast');
  t.true(all.at(-1)?.raw.last === true, `the last of ${all.length} frames is not marked last`);
  const frames = all.slice(0, -1);
  t.log(`frames: ${frames.length}; begin offsets in the interval (ms): ${frames.map((f) => Number(f.raw.beginNs % 100_000_000n) / 1e6).join(', ')}`);
  t.true(frames.length >= 5, `${frames.length} frames`);
  t.deepEqual(frames.map((f) => f.raw.seq), frames.map((_, i) => i + 1));
  for (const f of frames) {
    t.true(f.raw.beginNs >= before - MS, `frame ${f.raw.seq} begins ${Number(before - f.raw.beginNs) / 1e6} ms before the agent started`);
    t.true(f.raw.endNs <= after + MS, `frame ${f.raw.seq} ends ${Number(f.raw.endNs - after) / 1e6} ms after the agent stopped`);
    // aligned: a tick starts shortly after a whole 100 ms of the wall clock (nowNs may read up to
    // 1 ms behind Date.now(), whose millisecond it is anchored on, so allow 1 ms before the boundary)
    // (a loaded machine can start a tick tens of ms late; an unaligned clock would spread over all 100 ms)
    t.true((f.raw.beginNs + MS) % 100_000_000n < 61_000_000n, `begin ${f.raw.beginNs} is not near a whole 100 ms`);
  }
  // one tick per interval: consecutive ticks a whole number of intervals apart, at least one
  // (a loaded machine may start a tick late, never two in one interval)
  for (let i = 1; i < frames.length; i++) {
    const gapMs = Number((frames[i]?.raw.beginNs ?? 0n) - (frames[i - 1]?.raw.beginNs ?? 0n)) / 1e6;
    t.true(gapMs >= 40, `gap ${i}: ${gapMs} ms`);
  }
  t.is(statusOf(agent, 'fake_fast').overruns, 0);
});

test('a sampler with a minimum interval runs at it when the config asks for less, and says so', async (t) => {
  const sink = new CollectingSink();
  const slow = fake('fake_slow');
  const definition = { ...slow.definition, minIntervalMs: 1000 };
  const agent = makeAgent(sink, [{ definition, intervalMs: 100 }]);
  t.teardown(() => agent.stop());
  await agent.start();
  t.is(statusOf(agent, 'fake_slow').intervalMs, 1000);
});

test('cgroup_resources and rezolus_self run once a second at the fastest: an agent asked for 100 ms gives them 1 s and the rest 100 ms', async (t) => {
  const sink = new CollectingSink();
  const names = ['cgroup_resources', 'rezolus_self', 'cpu_usage'];
  const agent = makeAgent(sink, SAMPLERS.filter((d) => names.includes(d.name)).map((definition) => ({ definition, intervalMs: 100 })));
  t.teardown(() => agent.stop());
  await agent.start();
  t.deepEqual(names.map((n) => statusOf(agent, n).intervalMs), [1000, 1000, 100]);
});
