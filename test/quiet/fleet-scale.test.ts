/**
 * Issue 19, bounded (in test/quiet: it loads both CPUs for ~40 s, so it runs alone after the main suite): 200 simulated hosts × 26 real-shaped samplers for 20 s, each host's frames of a tick in one bundle as agents send them (and 100 hosts for 10 s with a message per frame),
 * through the real Publisher into a private nats-server, with the fleet
 * exporter, a durable recorder of the whole fleet, the hindsight service
 * and the alert evaluator as CLI processes. Every consumer takes every
 * frame of the schedule exactly once (test/helpers/fleet-audit.ts says how
 * each is counted). No timing is asserted; the counts are exact. The bench
 * (test/bench/fleet.ts --drop --double) shows the same audits report one
 * frame left out (lost 1) and one stored twice (a repeat, left out) at every
 * consumer; with `drop: { host: 11, sampler: 'memory_vmstat', tick: 7 }`
 * added to runFleet's options below, this test fails (checked by hand).
 */
import test, { type ExecutionContext } from 'ava';
import { runFleet, type FleetResult } from '../helpers/fleet-run.js';

/** Every consumer took every frame once; the exporter serves every host at its last tick. */
function everyFrameOnce(t: ExecutionContext, r: FleetResult): void {
  for (const [name, tally] of Object.entries(r.tallies)) {
    t.log(`${name}: ${tally.note}`);
    t.is(tally.lost, 0, `${name} lost frames: ${tally.note}`);
    t.is(tally.doubled, 0, `${name} doubled frames: ${tally.note}`);
    // repeats (a retried publish seen again by a live subscriber) are left out by design: logged, not asserted
  }
  t.true(r.tallies.exporter?.note.includes('hosts not at their last tick 0'), r.tallies.exporter?.note);
  t.log(`publish → visible p50 ≤ ${r.latencyMs.p50} ms, p99 ≤ ${r.latencyMs.p99} ms; ${r.procs.map((p) => `${p.name} ${p.cpu.toFixed(3)} cores`).join(', ')}`);
}

test.serial('100 hosts for 10 s, a message per frame: no frame lost or doubled at the exporter, recorder, hindsight or alert evaluator', async (t) => {
  t.timeout(240_000);
  const r = await runFleet({
    hosts: 100, seconds: 10, warmup: 3, workers: 2, shared: false, exporterShards: 1, cluster: false,
    consumers: ['exporter', 'recorder', 'hindsight', 'alert'],
    say: (line) => t.log(line),
  });
  t.is(r.expected, 100 * 26 * 10);
  // a busy machine may time out acks: the Publisher retries, JetStream deduplicates (publisher.duplicates), nothing is lost
  t.like(r.publisher, { dropped: 0, flushed: true }, 'the Publishers had every frame acked');
  t.is(r.publisher.published - r.publisher.duplicates, r.expected, 'acked once each, retries deduplicated');
  t.is(r.streamMessages, r.expected, 'the stream holds every frame once');
  t.deepEqual(Object.keys(r.tallies).sort(), ['alert', 'exporter', 'hindsight', 'recorder']);
  everyFrameOnce(t, r);
});

test.serial('200 hosts for 20 s sending a bundle per tick, as agents do by default: every frame once at every consumer, one message per host and tick', async (t) => {
  t.timeout(240_000);
  const r = await runFleet({
    hosts: 200, seconds: 20, warmup: 5, workers: 2, shared: false, bundle: true, exporterShards: 1, cluster: false,
    consumers: ['exporter', 'recorder', 'hindsight', 'alert'],
    say: (line) => t.log(line),
  });
  t.is(r.expected, 200 * 26 * 20);
  t.like(r.publisher, { dropped: 0, flushed: true }, 'the Publishers had every bundle acked');
  t.is(r.publisher.published - r.publisher.duplicates, r.expected, 'each frame acked once, in its bundle');
  t.is(r.streamMessages, 200 * 20, 'the stream holds one message per host and tick');
  t.deepEqual(Object.keys(r.tallies).sort(), ['alert', 'exporter', 'hindsight', 'recorder']);
  everyFrameOnce(t, r);
});
