/**
 * Incident capture through the evaluator (in-process, a real nats-server):
 * one capture per host and rule within [capture] every, a file DuckDB reads
 * with the frames from before the alert started, and a capture that cannot
 * be written is an event with the reason.
 */
import test from 'ava';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { connect } from '@nats-io/transport-node';
import type { CaptureEvent, TransitionEvent } from '../../src/alert/contract.js';
import { runAlert } from '../../src/alert/main.js';
import { loadAlertsConfig } from '../../src/config/alerts.js';
import { silentLogger } from '../../src/log/logger.js';
import { metricCatalog } from '../../src/samplers/catalog.js';
import { MemoryHost, MiB, prepareBus, readAlertEvents } from '../helpers/alert-bus.js';
import { Duck } from '../helpers/duckdb.js';
import { startTestNats } from '../helpers/nats.js';
import { until } from '../helpers/until.js';

function rulesFile(dir: string, captureDir: string, every: string, after = '1s'): string {
  const path = join(dir, 'alerts.toml');
  writeFileSync(
    path,
    [
      '[general]', 'every = "200ms"',
      '[capture]', `dir = ${JSON.stringify(captureDir)}`, `every = "${every}"`, 'interval = "200ms"',
      '[[rule]]', 'name = "memory_low"', 'metric = "memory_available"', 'reduce = "last"', 'window = "1s"',
      'op = "<"', 'threshold = "100MiB"', 'for = "0s"', 'keep_firing_for = "0s"', `capture = { before = "2s", after = "${after}" }`,
    ].join('\n'),
  );
  return path;
}

async function setup(t: import('ava').ExecutionContext, every: string, captureDir?: string, after?: string) {
  const server = await startTestNats();
  const dir = mkdtempSync(join(tmpdir(), 'rezolus-capture-'));
  const nc = await connect({ servers: server.url });
  const host = new MemoryHost(nc, 'db-1');
  await prepareBus(nc, 'db-1', silentLogger());
  const config = loadAlertsConfig(rulesFile(dir, captureDir ?? join(dir, 'incidents'), every, after), metricCatalog(), { natsUrl: server.url });
  host.start();
  const alert = await runAlert(config, silentLogger());
  t.teardown(async () => {
    host.stop();
    await alert.stop();
    await nc.close();
    await server.dispose();
    rmSync(dir, { recursive: true, force: true });
  });
  return { nc, host, dir, alert };
}

const kinds = async (nc: Parameters<typeof readAlertEvents>[0]): Promise<string[]> =>
  (await readAlertEvents(nc)).map((e) => (e.kind === 'capture' ? 'capture' : (e as TransitionEvent).state));

test('a firing alert captures its window once; a second firing within [capture] every captures nothing', async (t) => {
  const { nc, host } = await setup(t, '1h');
  // 1.5 s of normal frames before the incident: the capture reaches back 2 s before it started
  t.true(await until(() => host.seq >= 8, 20_000));
  const before = Date.now();
  host.value = 50 * MiB;
  t.true(await until(async () => (await kinds(nc)).includes('capture'), 30_000), (await kinds(nc)).join());
  const capture = (await readAlertEvents(nc)).find((e): e is CaptureEvent => e.kind === 'capture');
  t.truthy(capture?.file, JSON.stringify(capture));
  const duck = await Duck.open();
  const [r] = await duck.rows(`SELECT min(timestamp) // 1000000 AS first, min(memory_available) AS low, max(memory_available) AS high, count(*) AS n FROM read_parquet('${capture?.file as string}')`);
  if (r === undefined) return t.fail('no row');
  t.true(Number(r.first) < before, `the file starts before the alert: ${Number(r.first) - before} ms`);
  t.is(Number(r.low), 50 * MiB, 'holds the incident');
  t.is(Number(r.high), 1024 * MiB, 'and the normal frames before it');

  host.value = 1024 * MiB;
  t.true(await until(async () => (await kinds(nc)).includes('resolved'), 30_000));
  host.value = 50 * MiB;
  t.true(await until(async () => (await kinds(nc)).filter((k) => k === 'firing').length === 2, 30_000));
  // the second capture would be due 1 s after the firing; give it time to (wrongly) appear
  await new Promise((r) => setTimeout(r, 3500));
  t.deepEqual(await kinds(nc), ['firing', 'capture', 'resolved', 'firing']);
});

test('a capture that cannot be written is an event with the reason', async (t) => {
  const base = mkdtempSync(join(tmpdir(), 'rezolus-capture-bad-'));
  t.teardown(() => rmSync(base, { recursive: true, force: true }));
  const captureDir = join(base, 'incidents');
  const { nc, host } = await setup(t, '0s', captureDir);
  // the directory passed the start check; now a file takes its place
  writeFileSync(captureDir, 'not a directory');
  host.value = 50 * MiB;
  t.true(await until(async () => (await kinds(nc)).includes('capture'), 30_000), (await kinds(nc)).join());
  const capture = (await readAlertEvents(nc)).find((e): e is CaptureEvent => e.kind === 'capture');
  t.is(capture?.file, undefined);
  t.regex(capture?.error ?? '', /ENOTDIR|EEXIST|not a directory/i);
});

test('a capture not yet written when the alert fires again names the episode it captures', async (t) => {
  const { nc, host } = await setup(t, '0s', undefined, '4s');
  const states = async (): Promise<TransitionEvent[]> => (await readAlertEvents(nc)).filter((e): e is TransitionEvent => e.kind === 'transition');
  host.value = 50 * MiB;
  t.true(await until(async () => (await states()).some((e) => e.state === 'firing'), 30_000));
  host.value = 1024 * MiB;
  t.true(await until(async () => (await states()).some((e) => e.state === 'resolved'), 30_000));
  host.value = 50 * MiB;
  t.true(await until(async () => (await states()).filter((e) => e.state === 'firing').length === 2, 30_000));
  host.value = 1024 * MiB;
  t.true(await until(async () => (await kinds(nc)).includes('capture'), 30_000), (await kinds(nc)).join());
  await new Promise((r) => setTimeout(r, 5000)); // the second episode's capture would be due by now: there must be none
  const events = await readAlertEvents(nc);
  const [first, second] = events.filter((e): e is TransitionEvent => e.kind === 'transition' && e.state === 'firing');
  const captures = events.filter((e): e is CaptureEvent => e.kind === 'capture');
  t.is(captures.length, 1, 'the second firing came while the first capture was due: it captures nothing of its own');
  t.is(captures[0]?.activeAt, first?.activeAt, 'the capture names the episode it captured');
  t.is(captures[0]?.firedAt, first?.firedAt);
  t.not(first?.activeAt, second?.activeAt);
  const stamp = (first?.firedAt ?? '').replace(/[-:]/g, '').replace(/\.\d+Z$/, 'Z');
  t.true(captures[0]?.file?.endsWith(`memory_low-${stamp}.parquet`), `${captures[0]?.file} vs ${stamp}`);
});
