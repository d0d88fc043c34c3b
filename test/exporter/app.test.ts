import test from 'ava';
import { emptySkipStats } from '../../src/sources/checks.js';
import { buildExporterApp } from '../../src/exporter/app.js';
import { ExporterState } from '../../src/exporter/state.js';
import { silentLogger } from '../../src/log/logger.js';
import { checkExposition } from '../helpers/exposition-check.js';
import { promtoolCheck } from '../helpers/promtool.js';
import { m, makeDescriptor, makeFrame } from '../helpers/frames.js';

const MS = 1_000_000n;
const net = makeDescriptor('network_interfaces', { network_device_bytes: m('counter', 'bytes', ['device', 'direction'], 'Bytes') }, [
  ['network_device_bytes', ['eth0', 'receive']],
]);

function setup(forgetAfterMs: number, natsUp = true) {
  const state = new ExporterState({ intervalNs: 1000n * MS, oversample: ['network_device_bytes'] });
  const skipped = emptySkipStats();
  const app = buildExporterApp({
    state,
    skipped,
    intervalMs: 1000,
    forgetAfterMs,
    render: { ratePercentiles: [0.5, 1] },
    natsConnected: () => natsUp,
    log: silentLogger(),
  });
  const seq = new Map<string, number>();
  /** A frame of `host` ending now with `bytes` received. */
  const publish = (host: string, bytes: number, endNs = BigInt(Date.now()) * MS) => {
    const n = (seq.get(host) ?? 0) + 1;
    seq.set(host, n);
    state.ingest(makeFrame({ host, descriptor: net, seq: n, instance: 5, endNs, values: [bytes] }));
  };
  const scrape = async () => (await app.inject({ method: 'GET', url: '/metrics' })).body;
  return { app, state, skipped, publish, scrape };
}

/** Sample lines of `text` whose name and labels start with `prefix`. */
function lines(text: string, prefix: string): string[] {
  return text.split('\n').filter((l) => l.startsWith(prefix));
}

test('/metrics carries the exporter health: frames, skips by reason, hosts, last frame age, NATS, process', async (t) => {
  const { app, publish, scrape, skipped } = setup(60_000, false);
  const now = BigInt(Date.now()) * MS;
  publish('a', 0, now - 1500n * MS);
  publish('b', 0, now - 200n * MS);
  publish('b', 1000, now - 100n * MS);
  skipped.garbage = 2;
  skipped.wrongSubject = 1;
  const text = await scrape();
  t.deepEqual(lines(text, 'rezolus_exporter_frames_received_total'), ['rezolus_exporter_frames_received_total 6']);
  t.deepEqual(lines(text, 'rezolus_exporter_frames_total'), ['rezolus_exporter_frames_total 3']);
  t.deepEqual(lines(text, 'rezolus_exporter_frames_skipped_total{reason="garbage"}'), ['rezolus_exporter_frames_skipped_total{reason="garbage"} 2']);
  t.deepEqual(lines(text, 'rezolus_exporter_frames_skipped_total{reason="wrong_subject"}'), ['rezolus_exporter_frames_skipped_total{reason="wrong_subject"} 1']);
  t.deepEqual(lines(text, 'rezolus_exporter_hosts'), ['rezolus_exporter_hosts 2']);
  t.deepEqual(lines(text, 'rezolus_exporter_nats_connected'), ['rezolus_exporter_nats_connected 0']);
  const age = (host: string) => Number(lines(text, `rezolus_exporter_last_frame_age_seconds{host="${host}"}`)[0]?.split(' ')[1]);
  t.true(age('a') >= 1.5 && age('a') < 5, `age of a: ${age('a')}`);
  t.true(age('b') >= 0.1 && age('b') < 3.6, `age of b: ${age('b')}`);
  t.true(age('a') > age('b'));
  t.regex(text, /^process_resident_memory_bytes \d+$/m);
  t.regex(text, /^# TYPE nodejs_heap_size_used_bytes gauge$/m);
  t.deepEqual(checkExposition(text), []);
  const p = promtoolCheck(text);
  if (p === undefined) t.log('promtool missing; skipped');
  else t.is(p.status, 0, p.output);
  await app.close();
});

test('a host that stops publishing leaves after forget_after and comes back cleanly, without a spiked rate', async (t) => {
  const { app, publish, scrape } = setup(400);
  // 100 B every ~100 ms: three rates in the 1 s window, so the rate view is served
  for (let i = 0; i <= 3; i++) {
    if (i > 0) await new Promise((r) => setTimeout(r, 100));
    publish('a', i * 100);
    publish('b', i * 100);
  }
  let text = await scrape();
  t.is(lines(text, 'network_device_bytes_total{host="a"').length, 1);
  t.is(lines(text, 'network_device_bytes_rate{host="a"').length, 2);

  // a goes quiet while b keeps publishing
  for (let i = 0; i < 6; i++) {
    await new Promise((r) => setTimeout(r, 100));
    publish('b', 400 + i * 100);
  }
  text = await scrape();
  t.deepEqual(lines(text, 'network_device_bytes_total{host="a"'), []);
  t.deepEqual(lines(text, 'network_device_bytes_rate{host="a"'), []);
  t.deepEqual(lines(text, 'rezolus_exporter_last_frame_age_seconds{host="a"}'), []);
  t.deepEqual(lines(text, 'rezolus_exporter_hosts'), ['rezolus_exporter_hosts 1']);
  t.is(lines(text, 'network_device_bytes_total{host="b"').length, 1);

  // a comes back: 1 MB arrived while it was gone; the first frame has no rate, the gap never becomes one
  publish('a', 1_000_100);
  text = await scrape();
  t.deepEqual(lines(text, 'network_device_bytes_total{host="a"'), ['network_device_bytes_total{host="a",device="eth0",direction="receive"} 1000100']);
  t.deepEqual(lines(text, 'network_device_bytes_rate{host="a"'), []);
  for (let i = 1; i <= 3; i++) {
    await new Promise((r) => setTimeout(r, 100));
    publish('a', 1_000_100 + i * 100);
  }
  text = await scrape();
  const rates = lines(text, 'network_device_bytes_rate{host="a"').map((l) => Number(l.split(' ')[1]));
  t.is(rates.length, 2);
  for (const r of rates) t.true(r > 0 && r < 10_000, `about 100 B per 100 ms, not the 1 MB gap: ${r}`);
  await app.close();
});

test('a scrape soon after a slow render gets its body again (frames go on being read); a cheap render never is', async (t) => {
  const { app, publish, scrape } = setup(60_000);
  publish('a', 100);
  const first = await scrape();
  publish('a', 200);
  const second = await scrape();
  t.deepEqual(lines(second, 'network_device_bytes_total{host="a"'), ['network_device_bytes_total{host="a",device="eth0",direction="receive"} 200'], 'a small render is made anew');
  t.not(first, second);
  t.deepEqual(lines(second, 'rezolus_exporter_scrapes_reused_total'), ['rezolus_exporter_scrapes_reused_total 0']);
  await app.close();

  // every render counts as slow, and is reused for a long while
  const state = new ExporterState({ intervalNs: 1000n * MS });
  const paced = buildExporterApp({
    state, skipped: emptySkipStats(), intervalMs: 1000, forgetAfterMs: 60_000, render: {},
    pacing: { floorMs: 0, reuseFactor: 1e9 }, log: silentLogger(),
  });
  state.ingest(makeFrame({ host: 'a', descriptor: net, seq: 1, instance: 5, endNs: BigInt(Date.now()) * MS, values: [100] }));
  const a = await paced.inject({ method: 'GET', url: '/metrics' });
  state.ingest(makeFrame({ host: 'a', descriptor: net, seq: 2, instance: 5, endNs: BigInt(Date.now()) * MS, values: [200] }));
  const b = await paced.inject({ method: 'GET', url: '/metrics' });
  t.is(b.statusCode, 200);
  t.is(b.headers['content-type'], a.headers['content-type']);
  t.is(b.body, a.body, 'the same body, figures of the first render');
  t.deepEqual(lines(b.body, 'network_device_bytes_total{host="a"'), ['network_device_bytes_total{host="a",device="eth0",direction="receive"} 100']);
  await paced.close();
});
