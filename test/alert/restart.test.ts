/** A restarted evaluator goes on where the last one was: a silent host's alert neither resolves nor fires again. */
import test from 'ava';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { connect } from '@nats-io/transport-node';
import type { TransitionEvent } from '../../src/alert/contract.js';
import { runAlert, type RunningAlert } from '../../src/alert/main.js';
import { loadAlertsConfig } from '../../src/config/alerts.js';
import { silentLogger } from '../../src/log/logger.js';
import { metricCatalog } from '../../src/samplers/catalog.js';
import { MemoryHost, prepareBus, readAlertEvents } from '../helpers/alert-bus.js';
import { startTestNats } from '../helpers/nats.js';
import { until } from '../helpers/until.js';

test('a host_silent alert survives an evaluator restart: no false resolved, no second firing; resolved when the host is back', async (t) => {
  const server = await startTestNats();
  const dir = mkdtempSync(join(tmpdir(), 'rezolus-alert-restart-'));
  const nc = await connect({ servers: server.url });
  const host = new MemoryHost(nc, 'ghost');
  let alert: RunningAlert | undefined;
  t.teardown(async () => {
    host.stop();
    await alert?.stop();
    await nc.close();
    await server.dispose();
    rmSync(dir, { recursive: true, force: true });
  });
  await prepareBus(nc, 'ghost', silentLogger());
  const file = join(dir, 'alerts.toml');
  writeFileSync(file, ['[general]', 'every = "200ms"', '[[rule]]', 'name = "host_silent"', 'metric = "memory_available"', 'reduce = "age"', 'threshold = "2s"', 'for = "0s"', 'keep_firing_for = "0s"', 'capture = false'].join('\n'));
  const config = loadAlertsConfig(file, metricCatalog(), { natsUrl: server.url });
  const states = async (): Promise<string[]> => (await readAlertEvents(nc)).filter((e): e is TransitionEvent => e.kind === 'transition').map((e) => e.state);
  alert = await runAlert(config, silentLogger());
  host.start();
  t.true(await until(() => host.seq >= 5, 20_000));
  host.stop();
  t.true(await until(async () => (await states()).includes('firing'), 20_000));
  await alert.stop();
  alert = await runAlert(config, silentLogger());
  // the silence goes on: a restarted evaluator that took "now" as the last frame would resolve at once
  await new Promise((r) => setTimeout(r, 3000));
  t.deepEqual(await states(), ['firing']);
  host.start();
  t.true(await until(async () => (await states()).includes('resolved'), 20_000));
  t.deepEqual(await states(), ['firing', 'resolved']);
});
