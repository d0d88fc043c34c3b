import test from 'ava';
import type { Frame } from '../../src/frame/types.js';
import { ExporterState } from '../../src/exporter/state.js';
import { SECOND, T0, h, m, makeDescriptor, makeFrame } from '../helpers/frames.js';

const MS = 1_000_000n;
const lat = makeDescriptor('scheduler_runqueue', { scheduler_runqueue_latency: m('histogram', 'nanoseconds', [], 'Runqueue latency') }, [
  ['scheduler_runqueue_latency', []],
]);
const mem = makeDescriptor('memory_meminfo', { memory_total: m('gauge', 'bytes', [], 'Total memory') }, [['memory_total', []]]);

function frame(host: string, seq: number, endNs: bigint, instance = 1, descriptor = lat): Frame {
  return makeFrame({ host, descriptor, seq, endNs, instance, values: descriptor === lat ? [h([36, seq])] : [seq] });
}

function seqs(s: ExporterState, interval = SECOND): [string, number, number | undefined][] {
  return s.view(interval).map((e) => [`${e.latest.host}/${e.latest.sampler}`, e.latest.seq, e.base?.seq]);
}

test('one frame: latest without base', (t) => {
  const s = new ExporterState();
  s.ingest(frame('a', 1, T0));
  t.deepEqual(seqs(s), [['a/scheduler_runqueue', 1, undefined]]);
  t.deepEqual(s.stats, { ingested: 1, outOfOrder: 0, contested: 0, restarts: 0, forgotten: 0, clockSteps: 0 });
});

test('base is the newest frame at least one interval older than the latest', (t) => {
  const s = new ExporterState();
  for (let i = 1; i <= 6; i++) s.ingest(frame('a', i, T0 + BigInt(i) * 500n * MS));
  // latest ends at 3.0 s; 2.0 s (seq 4) is the newest ≤ 3.0 − 1.0
  t.deepEqual(seqs(s), [['a/scheduler_runqueue', 6, 4]]);
  // a shorter interval picks a newer base; exactly one interval back qualifies
  t.deepEqual(seqs(s, 500n * MS), [['a/scheduler_runqueue', 6, 5]]);
});

test('base is the oldest kept frame while none is an interval old', (t) => {
  const s = new ExporterState();
  s.ingest(frame('a', 1, T0));
  s.ingest(frame('a', 2, T0 + 200n * MS));
  s.ingest(frame('a', 3, T0 + 400n * MS));
  t.deepEqual(seqs(s), [['a/scheduler_runqueue', 3, 1]]);
});

test('a sampler slower than the interval keeps its previous frame as base', (t) => {
  const s = new ExporterState();
  s.ingest(frame('a', 1, T0));
  s.ingest(frame('a', 2, T0 + 100n * MS));
  s.ingest(frame('a', 3, T0 + 200n * MS));
  s.ingest(frame('a', 4, T0 + 30n * SECOND));
  // frames beyond 2 × interval are dropped except the newest of them
  t.deepEqual(seqs(s), [['a/scheduler_runqueue', 4, 3]]);
});

test('frames not newer than the latest of their run are ignored', (t) => {
  const s = new ExporterState();
  s.ingest(frame('a', 5, T0 + 5n * SECOND));
  s.ingest(frame('a', 3, T0 + 3n * SECOND));
  s.ingest(frame('a', 5, T0 + 5n * SECOND));
  s.ingest(frame('a', 7, T0 + 7n * SECOND));
  s.ingest(frame('a', 6, T0 + 6n * SECOND));
  t.deepEqual(seqs(s), [['a/scheduler_runqueue', 7, 5]]);
  t.is(s.stats.ingested, 2);
  t.is(s.stats.outOfOrder, 3);
});

test('a new instance takes over once the old run has gone quiet; late frames of the old run are ignored', (t) => {
  const s = new ExporterState();
  s.ingest(frame('a', 10, T0 + 10n * SECOND, 111));
  s.ingest(frame('a', 11, T0 + 11n * SECOND, 111));
  t.deepEqual(seqs(s), [['a/scheduler_runqueue', 11, 10]]);
  // the restarted agent's first frames arrive while the old run looks live: held off
  s.ingest(frame('a', 1, T0 + 12n * SECOND, 222));
  t.is(s.view(SECOND)[0]?.latest.instance, 111);
  t.is(s.stats.contested, 1);
  // 3 s after the old run's last frame the new run takes over
  s.ingest(frame('a', 3, T0 + 14n * SECOND, 222));
  t.deepEqual(seqs(s), [['a/scheduler_runqueue', 3, undefined]]);
  t.is(s.view(SECOND)[0]?.latest.instance, 222);
  s.ingest(frame('a', 12, T0 + 12n * SECOND, 111)); // in flight from the old run
  t.deepEqual(seqs(s), [['a/scheduler_runqueue', 3, undefined]]);
  s.ingest(frame('a', 4, T0 + 15n * SECOND, 222));
  t.deepEqual(seqs(s), [['a/scheduler_runqueue', 4, 3]]);
  t.is(s.stats.restarts, 1);
  t.is(s.stats.contested, 2);
});

test('a restarted 100 ms agent takes over after 0.5 s of quiet, not after 2 × a 15 s interval', (t) => {
  const s = new ExporterState({ intervalNs: 15n * SECOND });
  for (let i = 1; i <= 20; i++) s.ingest(frame('a', i, T0 + BigInt(i) * 100n * MS, 111));
  // the old run stopped at 2.0 s; the new one publishes from 2.3 s: too soon, then from 2.6 s it is the host
  s.ingest(frame('a', 1, T0 + 2300n * MS, 222));
  t.is(s.view(15n * SECOND)[0]?.latest.instance, 111);
  s.ingest(frame('a', 4, T0 + 2600n * MS, 222));
  t.is(s.view(15n * SECOND)[0]?.latest.instance, 222);
  t.is(s.stats.restarts, 1);
  t.is(s.stats.contested, 1);
});

test('a clean stop (the last frame says so) lets the next run take over at once, with no quiet', (t) => {
  const s = new ExporterState();
  s.ingest(frame('a', 10, T0 + 10n * SECOND, 111));
  s.ingest({ ...frame('a', 11, T0 + 11n * SECOND, 111), last: true });
  s.ingest(frame('a', 1, T0 + 12n * SECOND, 222));
  t.is(s.view(SECOND)[0]?.latest.instance, 222);
  t.is(s.stats.contested, 0);
  t.is(s.stats.restarts, 1);
});

test('two live agents claiming one host: the first keeps it, the other is counted, nothing freezes', (t) => {
  const s = new ExporterState();
  for (let i = 1; i <= 10; i++) {
    s.ingest(frame('a', i, T0 + BigInt(i) * SECOND, 111));
    s.ingest(frame('a', i, T0 + BigInt(i) * SECOND + 500n * MS, 222));
  }
  const v = s.view(SECOND)[0];
  t.is(v?.latest.instance, 111);
  t.is(v?.latest.seq, 10, 'the first agent\'s values keep moving');
  t.is(s.stats.contested, 10);
  t.is(s.stats.restarts, 0);
});

test('keys are (host, sampler); view is sorted by host then sampler', (t) => {
  const s = new ExporterState();
  s.ingest(frame('b', 1, T0, 1, mem));
  s.ingest(frame('b', 1, T0, 1, lat));
  s.ingest(frame('a', 1, T0, 1, mem));
  s.ingest(frame('a', 2, T0 + SECOND, 1, mem));
  s.ingest(frame('a', 1, T0, 9, lat));
  t.is(s.size, 4);
  t.deepEqual(seqs(s), [
    ['a/memory_meminfo', 2, undefined], // no histogram: only the latest frame is kept
    ['a/scheduler_runqueue', 1, undefined],
    ['b/memory_meminfo', 1, undefined],
    ['b/scheduler_runqueue', 1, undefined],
  ]);
});

test('forget goes by when a host was last heard from, not by its clock: a host 90 s behind stays', (t) => {
  const s = new ExporterState();
  const now = T0 + 1000n * SECOND;
  // frames stamped 90 s behind the exporter's clock, received just now
  s.ingest(frame('late-clock', 1, now - 90n * SECOND, 1, mem), now);
  s.ingest(frame('quiet', 1, now - 90n * SECOND, 1, mem), now - 90n * SECOND);
  t.is(s.forget(now - 60n * SECOND), 1, 'forget_after 60 s: only the host not heard from for 90 s goes');
  t.deepEqual(seqs(s), [['late-clock/memory_meminfo', 1, undefined]]);
});

test('forget drops (host, sampler) pairs that stopped reporting', (t) => {
  const s = new ExporterState();
  s.ingest(frame('a', 1, T0, 1, mem));
  s.ingest(frame('a', 1, T0 + 60n * SECOND, 1, lat));
  s.ingest(frame('b', 1, T0 + 10n * SECOND, 1, mem));
  t.is(s.forget(T0 + 30n * SECOND), 2);
  t.deepEqual(seqs(s), [['a/scheduler_runqueue', 1, undefined]]);
  t.is(s.stats.forgotten, 2);
  t.is(s.forget(T0), 0);
  // a forgotten host that comes back starts afresh
  s.ingest(frame('b', 2, T0 + 61n * SECOND, 1, mem));
  t.deepEqual(seqs(s), [
    ['a/scheduler_runqueue', 1, undefined],
    ['b/memory_meminfo', 2, undefined],
  ]);
});

test('history is bounded by maxFrames', (t) => {
  const s = new ExporterState({ maxFrames: 64 });
  // 10 ms apart: 64 frames cover 630 ms, less than the interval
  for (let i = 1; i <= 1000; i++) s.ingest(frame('a', i, T0 + BigInt(i) * 10n * MS));
  t.deepEqual(seqs(s), [['a/scheduler_runqueue', 1000, 1000 - 63]]);
  const small = new ExporterState({ maxFrames: 4 });
  for (let i = 1; i <= 10; i++) small.ingest(frame('a', i, T0 + BigInt(i) * 10n * MS));
  t.deepEqual(seqs(small), [['a/scheduler_runqueue', 10, 7]]);
});

test('history is bounded by time: 2 × the interval', (t) => {
  const s = new ExporterState({ intervalNs: SECOND, maxFrames: 10_000 });
  for (let i = 1; i <= 1000; i++) s.ingest(frame('a', i, T0 + BigInt(i) * 100n * MS));
  // kept: frames within 2 s of the latest plus one older; the base is 1 s back
  t.deepEqual(seqs(s), [['a/scheduler_runqueue', 1000, 990]]);
  // a longer interval asked of view() only finds what was kept
  t.deepEqual(seqs(s, 5n * SECOND), [['a/scheduler_runqueue', 1000, 980]]);
});

test('bad options throw', (t) => {
  t.throws(() => new ExporterState({ intervalNs: 0n }), { instanceOf: RangeError });
  t.throws(() => new ExporterState({ maxFrames: 1 }), { instanceOf: RangeError });
});

test('ingest is O(1) amortized', (t) => {
  const s = new ExporterState();
  const frames: Frame[] = [];
  for (let i = 1; i <= 200_000; i++) frames.push(frame(`h${i % 10}`, i, T0 + BigInt(i) * MS));
  const start = performance.now();
  for (const f of frames) s.ingest(f);
  const ms = performance.now() - start;
  t.log(`200k ingests in ${ms.toFixed(1)} ms`);
  t.is(s.stats.ingested, 200_000);
  t.true(ms < 2000);
});

test('two live agents that send five 100 ms ticks a message: the first keeps the host, however their messages interleave; a quiet one is replaced', (t) => {
  const s = new ExporterState();
  let seqA = 0;
  let seqB = 0;
  // messages every 500 ms from each, taken 1–3 ms apart, in either order
  for (let m = 0; m < 20; m++) {
    const at = T0 + BigInt(m) * 500n * MS;
    const a = (): void => {
      for (let k = 1; k <= 5; k++) s.ingest(frame('a', ++seqA, at - BigInt(5 - k) * 100n * MS, 111), at + 1n * MS + BigInt(k) * 1000n);
    };
    const b = (): void => {
      for (let k = 1; k <= 5; k++) s.ingest(frame('a', ++seqB, at - BigInt(5 - k) * 100n * MS, 222), at + 2n * MS + BigInt(k) * 1000n);
    };
    // the second agent's message first every third time, from the third on (by then the first has been heard twice)
    if (m % 3 === 2) {
      b();
      a();
    } else {
      a();
      b();
    }
  }
  t.is(s.view(SECOND)[0]?.latest.instance, 111);
  t.is(s.stats.restarts, 0);
  t.is(s.stats.contested, 100, 'every frame of the second agent');
  // the first stops: the second takes over once the first has been quiet for more than two of its arrival gaps
  const last = T0 + 19n * 500n * MS;
  s.ingest(frame('a', ++seqB, last + 600n * MS, 222), last + 600n * MS);
  t.is(s.view(SECOND)[0]?.latest.instance, 111, '0.6 s of quiet: not yet (a 100 ms agent heard once a message, not every 100 ms)');
  s.ingest(frame('a', ++seqB, last + 1100n * MS, 222), last + 1100n * MS);
  t.is(s.view(SECOND)[0]?.latest.instance, 222, '1.1 s: taken over');
});
