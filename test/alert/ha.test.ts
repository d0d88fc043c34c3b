/**
 * Two evaluators (the real CLI) on one bus, the one that made the pending
 * transition killed with SIGKILL mid-incident, a third started afterwards:
 * each transition is one event in REZOLUS_ALERTS, none lost, none doubled,
 * and the incident capture is written once.
 */
import test from 'ava';
import { existsSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { connect } from '@nats-io/transport-node';
import { Kvm } from '@nats-io/kv';
import { ALERT_STATE_BUCKET, parseRecord, type AlertEvent, type TransitionEvent } from '../../src/alert/contract.js';
import { silentLogger } from '../../src/log/logger.js';
import { MemoryHost, MiB, prepareBus, readAlertEvents, spawnAlert, type AlertProcess } from '../helpers/alert-bus.js';
import { startTestNats } from '../helpers/nats.js';
import { until } from '../helpers/until.js';

const ROOT = join(dirname(fileURLToPath(import.meta.url)), '..', '..');

const transitions = (events: readonly AlertEvent[]): TransitionEvent[] => events.filter((e): e is TransitionEvent => e.kind === 'transition');

test('two evaluators, one SIGKILLed mid-incident: one event per transition, nothing lost, nothing doubled', async (t) => {
  const server = await startTestNats();
  const dir = mkdtempSync(join(tmpdir(), 'rezolus-alert-ha-'));
  const procs: AlertProcess[] = [];
  const nc = await connect({ servers: server.url });
  const host = new MemoryHost(nc, 'web-1');
  t.teardown(async () => {
    host.stop();
    for (const p of procs) p.child.kill('SIGKILL');
    await nc.close();
    await server.dispose();
    rmSync(dir, { recursive: true, force: true });
  });
  await prepareBus(nc, 'web-1', silentLogger());
  const rules = join(dir, 'alerts.toml');
  writeFileSync(
    rules,
    [
      '[general]', 'every = "250ms"',
      '[capture]', `dir = ${JSON.stringify(join(dir, 'incidents'))}`, 'every = "0s"',
      '[[rule]]', 'name = "memory_low"', 'metric = "memory_available"', 'reduce = "last"', 'window = "1s"',
      'op = "<"', 'threshold = "100MiB"', 'for = "2s"', 'keep_firing_for = "0s"', 'capture = { before = "2s", after = "1s" }',
    ].join('\n'),
  );
  const args = ['--config', rules, '--nats', server.url];
  procs.push(spawnAlert(ROOT, args), spawnAlert(ROOT, args));
  host.start();
  t.true(await until(() => procs.every((p) => p.stderr.includes('alert evaluator running')), 60_000), `both running:\n${procs.map((p) => p.stderr).join('\n')}`);

  host.value = 50 * MiB;
  t.true(await until(async () => transitions(await readAlertEvents(nc)).some((e) => e.state === 'pending'), 30_000), 'pending');
  const pending = transitions(await readAlertEvents(nc)).find((e) => e.state === 'pending') as TransitionEvent;
  // kill the evaluator that made the pending transition: the other must fire it
  const pid = Number(pending.evaluator.split(':')[1]);
  const victim = procs.find((p) => p.child.pid === pid);
  t.truthy(victim, `the pending event names one of ours: ${pending.evaluator}`);
  victim?.child.kill('SIGKILL');

  t.true(await until(async () => (await readAlertEvents(nc)).some((e) => e.kind === 'capture'), 60_000), 'firing and its capture');
  // a third evaluator joins while the alert fires: it must not fire it again
  procs.push(spawnAlert(ROOT, args));
  t.true(await until(() => procs[2]?.stderr.includes('alert evaluator running') === true, 60_000), 'the third runs');
  host.value = 1024 * MiB;
  t.true(await until(async () => transitions(await readAlertEvents(nc)).some((e) => e.state === 'resolved'), 30_000), 'resolved');
  // time for a doubled event to show: two more evaluation rounds of both live evaluators
  await new Promise((r) => setTimeout(r, 1500));

  const events = await readAlertEvents(nc);
  const seq = events.map((e) => (e.kind === 'transition' ? e.state : 'capture'));
  t.deepEqual(seq, ['pending', 'firing', 'capture', 'resolved'], JSON.stringify(events, null, 1));
  const firing = transitions(events).find((e) => e.state === 'firing') as TransitionEvent;
  t.is(firing.activeAt, pending.activeAt, 'one episode');
  t.not(firing.evaluator, pending.evaluator, 'the survivor fired it');
  t.is(firing.value, 50 * MiB);
  const capture = events.find((e) => e.kind === 'capture');
  t.true(capture?.kind === 'capture' && capture.file !== undefined && existsSync(capture.file), JSON.stringify(capture));

  const kv = await new Kvm(nc).open(ALERT_STATE_BUCKET);
  const keys: string[] = [];
  for await (const k of await kv.keys()) keys.push(k);
  t.deepEqual(keys, ['web-1.memory_low._']);
  const entry = await kv.get('web-1.memory_low._');
  const record = entry === null ? undefined : parseRecord(entry.value);
  t.is(record?.state, 'resolved');
  t.true(record?.published, 'the last transition is marked published');
  t.truthy(record?.capture?.result?.file, 'the capture result is in the record');
});
