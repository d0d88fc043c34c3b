/**
 * Attacks on `rezolus view` with real parts (real recordings, a private
 * nats-server, the CLI as a process): each test is a way the viewer was
 * broken, and holds now.
 */
import test from 'ava';
import { execFileSync, spawn } from 'node:child_process';
import { copyFileSync, existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { jetstreamManager } from '@nats-io/jetstream';
import { parquetMetadata } from 'hyparquet';
import type { NatsConnection } from '@nats-io/nats-core';
import { connect } from '@nats-io/transport-node';
import { ROOT } from '../../scripts/gen-docs.js';
import { descriptorBucket } from '../../src/bus/kv.js';
import { ensureStream } from '../../src/bus/stream.js';
import { metricsSubject } from '../../src/bus/subjects.js';
import { loadAgentConfig } from '../../src/config/agent.js';
import { hashDescriptorJson } from '../../src/frame/descriptor.js';
import type { Descriptor, FrameValue } from '../../src/frame/types.js';
import { silentLogger } from '../../src/log/logger.js';
import { SAMPLER_NAMES } from '../../src/samplers/registry.js';
import { BusLink } from '../../src/sources/link.js';
import type { HostSummary, QueryResult, ViewInfo } from '../../src/viewer/api.js';
import { HostWindow } from '../../src/viewer/live/host-window.js';
import { HOST_MAX_SERIES } from '../../src/viewer/frames.js';
import { FLEET_MAX_HOSTS, FLEET_MAX_SERIES } from '../../src/viewer/live/fleet.js';
import type { LiveData } from '../../src/viewer/live/live-data.js';
import { MAX_QUERY_CELLS, MAX_QUERY_SERIES } from '../../src/viewer/query/run.js';
import { globMatcher, globToRegExp } from '../../src/viewer/query/match.js';
import { runViewer, type RunningViewer, type ViewConfig } from '../../src/viewer/main.js';
import { frameBytes, m, makeDescriptor, makeFrame } from '../helpers/frames.js';
import { goodValues, HOSTILE_DESCRIPTORS, HostileFrames, TARGET } from '../helpers/hostile-frames.js';
import { startTestNats, type TestNats } from '../helpers/nats.js';
import { until } from '../helpers/until.js';
import { T0, meta, spec, writeRecording, type Row } from './file-recordings.js';
import { rezolusArgv } from '../helpers/rezolus-cli.js';

let dir: string;
let file: string;
const TOKEN = 'attack-token-0123456789';
/** a cgroup path as the agent labels it: long enough for a backtracking glob to take hours */
const CGROUP = '/system.slice/docker-0123456789abcdef0123456789abcdef.scope';

function config(source: ViewConfig['source'], token: string | undefined = undefined): ViewConfig {
  return { source, listen: { host: '127.0.0.1', port: 0 }, token, windowMs: undefined, saveDir: dir, saveIntervalMs: 1000 };
}

async function fileViewer(token?: string): Promise<RunningViewer> {
  return runViewer(config({ kind: 'files', files: [{ name: 'a', path: file }] }, token), silentLogger());
}

async function get<T>(v: RunningViewer, url: string, headers: Record<string, string> = {}): Promise<{ status: number; body: T }> {
  const r = await v.app.inject({ method: 'GET', url, headers });
  return { status: r.statusCode, body: r.json() as T };
}

/** Runs the CLI until it prints its URL (then SIGTERM) or exits by itself; its stderr and exit code. */
function viewCli(args: string[], env: NodeJS.ProcessEnv = {}): Promise<{ code: number | null; stderr: string; served: boolean }> {
  const child = spawn(process.execPath, rezolusArgv('view', '--log-level', 'warn', ...args), {
    cwd: ROOT,
    stdio: ['ignore', 'ignore', 'pipe'],
    env: { ...process.env, REZOLUS_HTTP_TOKEN: '', ...env },
  });
  let stderr = '';
  let served = false;
  child.stderr.on('data', (d: Buffer) => {
    stderr += d.toString();
    if (!served && /open http:\/\//.test(stderr)) {
      served = true;
      child.kill('SIGTERM');
    }
  });
  const timer = setTimeout(() => child.kill('SIGKILL'), 90_000);
  return new Promise((resolve) =>
    child.once('exit', (code) => {
      clearTimeout(timer);
      resolve({ code, stderr, served });
    }),
  );
}

test.before(async () => {
  dir = mkdtempSync(join(tmpdir(), 'rezolus-view-attacks-'));
  file = join(dir, 'a.parquet');
  const rows: Row[] = Array.from({ length: 120 }, (_, i) => ({ ns: T0 + BigInt(i) * 1_000_000_000n, host: 'web' }));
  await writeRecording(
    file,
    rows,
    [
      { spec: spec('memory_available', 'gauge', {}, 'bytes'), cell: (r) => 1e9 + r },
      { spec: spec(`cgroup_cpu_usage/${encodeURIComponent(CGROUP)}`, 'counter', { cgroup: CGROUP }, 'nanoseconds'), cell: (r) => BigInt(r * 1000) },
    ],
    meta(['web']),
  );
});

test.after.always(() => {
  rmSync(dir, { recursive: true, force: true });
});

test('a match glob built to backtrack (`*?` twelve times against a cgroup path) answers at once, not after hours', async (t) => {
  const v = await fileViewer();
  try {
    const glob = `${'*?'.repeat(12)}X`;
    const began = Date.now();
    const r = await get<QueryResult>(v, `/api/v1/query?host=web&metric=cgroup_cpu_usage&match=${encodeURIComponent(`cgroup=${glob}`)}`);
    t.is(r.status, 200);
    t.deepEqual(r.body.series, [], 'nothing ends in X');
    // and the globs still work
    const hit = await get<QueryResult>(v, `/api/v1/query?host=web&metric=cgroup_cpu_usage&match=${encodeURIComponent(`cgroup=${'*?'.repeat(12)}.scope`)}`);
    t.is(hit.body.series.length, 1);
    const exact = await get<QueryResult>(v, `/api/v1/query?host=web&metric=cgroup_cpu_usage&match=${encodeURIComponent(`cgroup=${CGROUP}`)}`);
    t.is(exact.body.series.length, 1);
    t.log(`answered in ${Date.now() - began} ms`);
  } finally {
    await v.stop();
  }
});

test('the linear glob matcher agrees with the RegExp it replaces on every glob and value over a small alphabet', (t) => {
  const words = (alphabet: string, max: number): string[] => {
    const out = [''];
    for (let i = 0, from = 0; i < max; i++) {
      const to = out.length;
      for (let k = from; k < to; k++) for (const c of alphabet) out.push((out[k] as string) + c);
      from = to;
    }
    return out;
  };
  const values = words('ab', 5);
  let checked = 0;
  for (const glob of words('a*?', 5)) {
    const re = globToRegExp(glob);
    const m = globMatcher(glob);
    for (const value of values) {
      if (m(value) !== re.test(value)) t.fail(`${glob} ~ ${value}: ${m(value)}, the RegExp says ${re.test(value)}`);
      checked++;
    }
  }
  t.is(globMatcher('sd?')('sdä'), true, 'one code point');
  t.is(globMatcher('?')('😀'), true, 'one code point beyond the BMP');
  t.true(checked > 10_000);
});

test('match on a label named __proto__ or constructor: a series without that label has the empty string there', async (t) => {
  const v = await fileViewer();
  try {
    const q = (m: string): Promise<{ status: number; body: QueryResult }> => get<QueryResult>(v, `/api/v1/query?host=web&metric=memory_available&match=${encodeURIComponent(m)}`);
    t.deepEqual((await q('__proto__=x')).body.series, [], 'no series has __proto__ = x');
    t.is((await q('__proto__=')).body.series.length, 1);
    t.deepEqual((await q('constructor=function*')).body.series, [], 'Object.prototype.constructor is not a label');
    t.deepEqual((await q('toString=?*')).body.series, []);
  } finally {
    await v.stop();
  }
});

test.serial('a recording whose file name has a space, parentheses or accents opens (the name it gets on the page is made from the file name)', async (t) => {
  for (const name of ['my recording (1).parquet', 'données.parquet']) {
    copyFileSync(file, join(dir, name));
    const r = await viewCli([join(dir, name)]);
    t.true(r.served, `${name}: ${r.stderr}`);
  }
  // two files of the same name in two directories get A and B
  const other = mkdtempSync(join(dir, 'other-'));
  copyFileSync(file, join(other, 'a.parquet'));
  const two = await viewCli([file, join(other, 'a.parquet')]);
  t.true(two.served, two.stderr);
  // a name given twice is refused, exit 2
  const same = await viewCli([`A=${file}`, `A=${join(other, 'a.parquet')}`]);
  t.is(same.code, 2, same.stderr);
  t.regex(same.stderr, /same name/);
});

test('the token: a cookie that is not percent-encoding answers 401, not 500; without a token, wrong token, right token', async (t) => {
  const v = await fileViewer(TOKEN);
  try {
    for (const cookie of ['rezolus_view_token=%E0%A4%A', 'rezolus_view_token=%', 'rezolus_view_token=wrong', 'other=1; rezolus_view_token=']) {
      t.is((await get(v, '/api/v1/info', { cookie })).status, 401, cookie);
    }
    t.is((await get(v, '/api/v1/info')).status, 401);
    t.is((await get(v, '/api/v1/info', { authorization: `Bearer ${TOKEN}x` })).status, 401);
    t.is((await get(v, '/login')).status, 401);
    t.is((await get(v, `/login?token=${TOKEN.slice(0, -1)}`)).status, 401);
    t.is((await get(v, '/login?token=%E0')).status, 401);
    const login = await v.app.inject({ method: 'GET', url: `/login?token=${TOKEN}` });
    t.is(login.statusCode, 302);
    const cookie = String(login.headers['set-cookie']).split(';')[0] as string;
    t.is((await get(v, '/api/v1/info', { cookie })).status, 200);
    t.is((await get(v, '/api/v1/info', { authorization: `Bearer ${TOKEN}` })).status, 200);
  } finally {
    await v.stop();
  }
});

test('a query range beyond what a date can be (±1.7e308 ms) is a 400, and a century or a budget of 1e9 or 0 stays within the budget', async (t) => {
  const v = await fileViewer();
  try {
    const huge = await get<{ error: string }>(v, '/api/v1/query?host=web&metric=memory_available&start=-1.7e308&end=1.7e308');
    t.is(huge.status, 400, JSON.stringify(huge.body));
    const far = await get<{ error: string }>(v, '/api/v1/query?host=web&metric=memory_available&start=1e300&end=2e300');
    t.is(far.status, 400, JSON.stringify(far.body));
    const century = Date.UTC(2025, 0, 1);
    for (const budget of ['1e9', '0', '-5', '5000']) {
      const r = await get<QueryResult>(v, `/api/v1/query?host=web&metric=memory_available&start=${century - 100 * 365 * 86_400_000}&end=${century}&budget=${budget}`);
      t.is(r.status, 200);
      t.true(r.body.t.length <= 5001, `${r.body.t.length} steps for budget ${budget}`);
      t.true(r.body.t.every(Number.isFinite));
    }
    t.is((await get(v, '/api/v1/query?host=web&metric=memory_available&budget=NaN')).status, 400);
    t.is((await get(v, '/api/v1/query?host=web&metric=memory_available&start=100&end=50')).status, 400);
  } finally {
    await v.stop();
  }
});

test('without a token (loopback), a request whose Host is not a loopback name is refused: a DNS-rebound page cannot read the API or save', async (t) => {
  const v = await fileViewer();
  try {
    t.is((await get(v, '/api/v1/info', { host: 'evil.example:8080' })).status, 403);
    t.is((await get(v, '/', { host: 'attacker.test' })).status, 403);
    for (const host of ['127.0.0.1:4000', 'localhost:4000', 'localhost', '[::1]:4000', '127.0.0.2']) t.is((await get(v, '/api/v1/info', { host })).status, 200, host);
  } finally {
    await v.stop();
  }
  // with a token the viewer may be reached by any name
  const withToken = await fileViewer(TOKEN);
  try {
    t.is((await get(withToken, '/api/v1/info', { host: 'viewer.example:8080', authorization: `Bearer ${TOKEN}` })).status, 200);
  } finally {
    await withToken.stop();
  }
});

// ---- the live bus -------------------------------------------------------------------------

/** A publisher of hand-made frames on a private nats-server: the stream and descriptor bucket as an agent makes them. */
class Publisher {
  readonly #seq = new Map<string, number>();
  private constructor(readonly nc: NatsConnection) {}

  static async open(server: TestNats, descriptors: readonly Descriptor[] = []): Promise<Publisher> {
    const nc = await connect({ servers: server.url, name: 'attack-publisher' });
    const agent = loadAgentConfig(undefined, SAMPLER_NAMES, { host: 'attacker', natsUrl: server.url });
    await ensureStream(await jetstreamManager(nc), agent.stream, silentLogger());
    const kv = await descriptorBucket(nc, { ttlMs: agent.descriptorTtlMs, replicas: agent.stream.replicas });
    for (const [hash, json] of HOSTILE_DESCRIPTORS) await kv.put(hash, json);
    const p = new Publisher(nc);
    for (const d of descriptors) await p.describe(d);
    return p;
  }

  async describe(d: Descriptor): Promise<void> {
    const json = JSON.stringify(d);
    const kv = await descriptorBucket(this.nc, { ttlMs: 0, replicas: 1 });
    await kv.put(hashDescriptorJson(json), json);
  }

  /** One frame of `host` ending at `endMs` (the next seq of that host and sampler), flushed. */
  async frame(host: string, endMs: number, values: readonly FrameValue[] = goodValues(1), descriptor: Descriptor = TARGET, instance = 7): Promise<void> {
    const key = `${host}/${descriptor.sampler}`;
    const seq = (this.#seq.get(key) ?? 0) + 1;
    this.#seq.set(key, seq);
    const f = makeFrame({ host, descriptor, values, seq, instance, endNs: BigInt(Math.round(endMs)) * 1_000_000n });
    this.nc.publish(metricsSubject(host, descriptor.sampler), frameBytes(f));
    await this.nc.flush();
  }

  close(): Promise<void> {
    return this.nc.close();
  }
}

function liveConfig(server: TestNats, windowMs?: number): ViewConfig {
  return { ...config({ kind: 'live', natsUrl: server.url, stream: 'REZOLUS', hosts: '*' }), windowMs };
}

/** Publishes a frame of `host` every `everyMs` until stop() (ticks k = 1, 2, … as goodValues). */
function keepPublishing(p: Publisher, host: string, everyMs = 200): { stop(): Promise<void> } {
  let stopped = false;
  const loop = (async () => {
    for (let k = 1; !stopped; k++) {
      await p.frame(host, Date.now(), goodValues(k)).catch(() => undefined);
      await new Promise((r) => setTimeout(r, everyMs));
    }
  })();
  return {
    async stop() {
      stopped = true;
      await loop;
    },
  };
}

test.serial('a frame from ten years ahead (a bad clock, or a hostile publisher) does not freeze the host: later frames still show, the row is not stamped in the future', async (t) => {
  const server = await startTestNats();
  const p = await Publisher.open(server);
  let v: RunningViewer | undefined;
  const pub = keepPublishing(p, 'clocky');
  try {
    v = await runViewer(liveConfig(server), silentLogger());
    const viewer = v;
    const row = async (): Promise<HostSummary | undefined> => (await get<HostSummary[]>(viewer, '/api/v1/hosts')).body.find((h) => h.host === 'clocky');
    t.true(await until(async () => (await row()) !== undefined, 30_000), 'the host shows');
    // the host page is open while the frame comes
    t.is((await get(viewer, '/api/v1/metrics?host=clocky')).status, 200);
    const poisonAt = Date.now();
    await p.frame('clocky', Date.now() + 10 * 365 * 86_400_000, goodValues(99_999));
    // frames keep coming after it: the page's last minute holds some of them
    const after = async (): Promise<number> => {
      const q = await get<QueryResult>(viewer, `/api/v1/query?host=clocky&metric=fuzz_level&start=${Date.now() - 60_000}&end=${Date.now()}`);
      return q.body.t.filter((x, i) => x > poisonAt + 1000 && q.body.series[0]?.avg[i] !== null).length;
    };
    const shown = await until(async () => (await after()) >= 3, 20_000);
    t.true(shown, 'frames after the one from the future are charted');
    const last = (await row())?.lastMs ?? 0;
    t.true(last < Date.now() + 60_000, `the row's last frame is ${new Date(last).toISOString()}`);
  } finally {
    await pub.stop();
    await v?.stop();
    await p.close();
    await server.dispose();
  }
});

test.serial("a host window closed while it opens (a page left at once, or pushed out by a 7th) does not go on to replay the host's whole window", async (t) => {
  const server = await startTestNats();
  const p = await Publisher.open(server);
  const link = await BusLink.open({ url: server.url, name: 'attack-window', waitOnFirstConnect: false }, silentLogger());
  try {
    // ten minutes of the host at 1 Hz in the stream
    const now = Date.now();
    for (let k = 1; k <= 600; k++) await p.frame('busy', now - (600 - k) * 1000, goodValues(k));
    const opened = new HostWindow('busy', link, 'REZOLUS', 15 * 60_000, silentLogger());
    await opened.ready;
    t.true((opened.tracks.tracks()[0]?.t.length ?? 0) >= 600, 'a window left open has the replayed frames');
    await opened.close();
    const w = new HostWindow('busy', link, 'REZOLUS', 15 * 60_000, silentLogger());
    await w.close();
    t.is(w.tracks.tracks().reduce((n, tr) => n + tr.t.length, 0), 0, 'closed before it was ready: nothing read');
  } finally {
    await link.close();
    await p.close();
    await server.dispose();
  }
});

test.serial('host pages opened for 50 hosts, one after another and then all at once: at most 6 windows are held, and each page still answers', async (t) => {
  const server = await startTestNats();
  const p = await Publisher.open(server);
  const hosts = Array.from({ length: 50 }, (_, i) => `h${String(i).padStart(2, '0')}`);
  let stopped = false;
  const publishing = (async () => {
    while (!stopped) {
      const now = Date.now();
      for (const h of hosts) await p.frame(h, now, goodValues(Math.floor(now / 1000) % 1000));
      await new Promise((r) => setTimeout(r, 500));
    }
  })();
  let v: RunningViewer | undefined;
  try {
    v = await runViewer(liveConfig(server), silentLogger());
    const viewer = v;
    t.true(await until(async () => (await get<HostSummary[]>(viewer, '/api/v1/hosts')).body.length === 50, 60_000), 'the fleet lists the 50 hosts');
    const live = viewer.data as LiveData;
    for (const h of hosts) {
      const r = await get<unknown[]>(viewer, `/api/v1/metrics?host=${h}`);
      t.is(r.status, 200);
      t.true(live.openHosts().length <= 6, `${live.openHosts().length} windows after ${h}`);
    }
    t.deepEqual(live.openHosts(), hosts.slice(-6));
    const all = await Promise.all(hosts.map((h) => get<unknown[]>(viewer, `/api/v1/metrics?host=${h}`)));
    // a page whose window another pushed out before it was read answered an empty list (200): now each has its metrics, or a 503 that says why
    t.deepEqual(hosts.filter((_, i) => all[i]?.status === 200 && (all[i]?.body.length ?? 0) === 0), [], 'no page is answered with no metrics');
    for (const r of all.filter((x) => x.status !== 200)) {
      t.is(r.status, 503);
      t.regex((r.body as unknown as { error: string }).error, /6 host pages are being read/);
    }
    t.true(all.some((r) => r.status === 200));
    t.true(live.openHosts().length <= 6, `${live.openHosts().length} windows after 50 at once`);
  } finally {
    stopped = true;
    await publishing;
    await v?.stop();
    await p.close();
    await server.dispose();
  }
});

test.serial('save this window: two saves of the same range for other hosts are two files; hostile host lists stay in --save-dir; a range from the far future is a 400', async (t) => {
  const server = await startTestNats();
  const p = await Publisher.open(server);
  const saveDir = mkdtempSync(join(dir, 'saves-'));
  const hosts = ['p1', 'p2', 'p3', 'p4'];
  let v: RunningViewer | undefined;
  try {
    const began = Date.now();
    for (let k = 1; k <= 20; k++) for (const h of hosts) await p.frame(h, began - (20 - k) * 200, goodValues(k));
    v = await runViewer({ ...liveConfig(server), saveDir, saveIntervalMs: 200 }, silentLogger());
    const viewer = v;
    t.true(await until(() => viewer.data.info().problem === undefined, 30_000));
    const save = async (body: unknown): Promise<{ status: number; body: { path?: string; rows?: number; error?: string } }> => {
      const r = await viewer.app.inject({ method: 'POST', url: '/api/v1/save', payload: body as object });
      return { status: r.statusCode, body: r.json() };
    };
    const range = { start: began - 5000, end: Date.now() };
    const a = await save({ hosts: ['p1', 'p2'], ...range });
    const b = await save({ hosts: ['p3', 'p4'], ...range });
    t.is(a.status, 200, JSON.stringify(a.body));
    t.is(b.status, 200, JSON.stringify(b.body));
    t.not(a.body.path, b.body.path, 'the second save does not overwrite the first');
    t.true(existsSync(a.body.path as string) && existsSync(b.body.path as string));
    const again = await save({ hosts: ['p1', 'p2'], ...range });
    t.not(again.body.path, a.body.path, 'nor does the same save twice');
    for (const s of [a, b, again]) t.is(dirname(s.body.path as string), saveDir);
    // hosts that are paths, globs or a thousand names: never a file outside --save-dir
    for (const list of [['../../etc'], ['*'], ['p1,p2'], Array.from({ length: 1000 }, (_, i) => `n${i}`), ['']]) {
      const r = await save({ hosts: list, ...range });
      t.true([200, 400, 404].includes(r.status), `${r.status} ${JSON.stringify(r.body)}`);
      if (r.body.path !== undefined) t.is(dirname(r.body.path), saveDir);
    }
    t.deepEqual(readdirSync(dirname(saveDir)).filter((n) => n.endsWith('.parquet') && n.startsWith('view-')), [], 'nothing written next to --save-dir');
    for (const body of [{ hosts: ['p1'], start: 1e300, end: 2e300 }, { hosts: ['p1'], start: Date.now() + 3_600_000, end: Date.now() + 7_200_000 }, { hosts: ['p1'], start: -1e300, end: 0 }]) {
      const r = await save(body);
      t.is(r.status, 400, `${JSON.stringify(body)}: ${JSON.stringify(r.body)}`);
    }
  } finally {
    await v?.stop();
    await p.close();
    await server.dispose();
  }
});

test.serial('NATS restarts while the viewer runs: the page says NATS is away, then the fleet and an open host page go on with frames published after the restart', async (t) => {
  let server = await startTestNats();
  const p = await Publisher.open(server);
  const pub = keepPublishing(p, 'phoenix', 250);
  let v: RunningViewer | undefined;
  try {
    v = await runViewer(liveConfig(server), silentLogger());
    const viewer = v;
    const row = async (): Promise<HostSummary | undefined> => (await get<HostSummary[]>(viewer, '/api/v1/hosts')).body.find((h) => h.host === 'phoenix');
    t.true(await until(async () => (await row()) !== undefined, 30_000), 'the host shows');
    t.is((await get(viewer, '/api/v1/metrics?host=phoenix')).status, 200, 'its page is open');
    let sawProblem = '';
    const watching = until(async () => {
      sawProblem = (await get<ViewInfo>(viewer, '/api/v1/info')).body.problem ?? '';
      return sawProblem !== '';
    }, 60_000);
    server = await server.crashAndRestart(5000);
    const restarted = Date.now();
    t.true(await watching, 'the page said NATS was away');
    t.regex(sawProblem, /does not answer|reconnecting/);
    t.true(await until(async () => ((await row())?.lastMs ?? 0) > restarted, 60_000), 'the fleet row has a frame published after the restart');
    t.true(
      await until(async () => {
        const q = await get<QueryResult>(viewer, `/api/v1/query?host=phoenix&metric=fuzz_level&start=${restarted}&end=${Date.now()}`);
        return q.status === 200 && q.body.series[0]?.avg.some((x) => x !== null) === true;
      }, 60_000),
      'the open host page charts frames published after the restart',
    );
    t.true(await until(() => viewer.data.info().problem === undefined, 30_000), 'and the page no longer names a problem');
  } finally {
    await pub.stop();
    await v?.stop();
    await p.close();
    await server.dispose();
  }
});

/** A descriptor of `n` cpu_usage series whose labels are new in each generation `gen` (a host whose series churn). */
function churning(gen: number, n: number): Descriptor {
  return makeDescriptor('fuzz_churn', { cpu_usage: m('counter', 'nanoseconds', ['state', 'id'], 'churned CPU time') }, Array.from({ length: n }, (_, i) => ['cpu_usage', [`g${gen}`, String(i)]] as const));
}

test.serial('a host whose series churn (5000 new cpu_usage series a frame, 300 000 in all) cannot grow the fleet page or its host page without bound; queries of it stay bounded', async (t) => {
  const server = await startTestNats();
  const p = await Publisher.open(server);
  let v: RunningViewer | undefined;
  try {
    v = await runViewer(liveConfig(server), silentLogger());
    const viewer = v;
    const live = (): LiveData => viewer.data as LiveData;
    t.true(await until(() => live().fleet?.following === true, 30_000), 'the viewer follows the bus');
    const began = Date.now();
    for (let gen = 1; gen <= 60; gen++) {
      const d = churning(gen, 5000);
      await p.describe(d);
      await p.frame('churn', began - (60 - gen) * 100, Array.from({ length: 5000 }, () => gen * 1000), d);
    }
    await p.frame('churn', Date.now(), goodValues(1));
    t.true(await until(() => live().fleet.has('churn') && live().fleet.seriesCount('churn') > 0, 30_000));
    await until(() => live().fleet.seriesCount('churn') >= FLEET_MAX_SERIES, 10_000);
    t.true(live().fleet.seriesCount('churn') <= FLEET_MAX_SERIES, `the fleet holds ${live().fleet.seriesCount('churn')} series of the host`);
    const metrics = await get<{ series: unknown[] }[]>(viewer, '/api/v1/metrics?host=churn');
    t.is(metrics.status, 200);
    const held = metrics.body.reduce((n, e) => n + e.series.length, 0);
    t.true(held > 0 && held <= HOST_MAX_SERIES, `the host page holds ${held} series`);
    const r = await viewer.app.inject({ method: 'GET', url: `/api/v1/query?host=churn&metric=cpu_usage&start=${began - 10_000}&end=${Date.now()}&budget=5000` });
    t.is(r.statusCode, 200);
    const q = r.json() as QueryResult;
    t.true(q.series.length * q.t.length <= MAX_QUERY_CELLS + q.series.length, `${q.series.length} series × ${q.t.length} steps`);
    t.true(q.series.length <= MAX_QUERY_SERIES);
    t.is(q.series.length + (q.omitted ?? 0), held, 'what is left out is said');
  } finally {
    await v?.stop();
    await p.close();
    await server.dispose();
  }
});

test.serial('frames of ever new host names (a publisher inventing hosts) stop at FLEET_MAX_HOSTS rows, and the page says hosts are left out', async (t) => {
  const server = await startTestNats();
  const p = await Publisher.open(server);
  let v: RunningViewer | undefined;
  try {
    v = await runViewer(liveConfig(server), silentLogger());
    const viewer = v;
    const live = (): LiveData => viewer.data as LiveData;
    t.true(await until(() => live().fleet?.following === true, 30_000), 'the viewer follows the bus');
    const extra = 50;
    for (let i = 0; i < FLEET_MAX_HOSTS + extra; i++) {
      const f = makeFrame({ host: `inv${i}`, descriptor: TARGET, values: goodValues(1), seq: 1, endNs: BigInt(Date.now()) * 1_000_000n });
      p.nc.publish(metricsSubject(`inv${i}`, TARGET.sampler), frameBytes(f));
      if (i % 500 === 0) await p.nc.flush();
    }
    await p.nc.flush();
    t.true(await until(() => live().fleet.hostNames().length + live().fleet.refusedHosts >= FLEET_MAX_HOSTS + extra, 60_000), `${live().fleet.hostNames().length} hosts`);
    t.is(live().fleet.hostNames().length, FLEET_MAX_HOSTS);
    t.regex((await get<ViewInfo>(viewer, '/api/v1/info')).body.problem ?? '', /hosts/);
  } finally {
    await v?.stop();
    await p.close();
    await server.dispose();
  }
});

test.serial('a flood of hostile frames (garbage, wrong descriptors, 497-bucket histograms, NaN, impostors) and a counter that goes back: the viewer keeps running and the good host is charted right', async (t) => {
  const server = await startTestNats();
  const p = await Publisher.open(server);
  let v: RunningViewer | undefined;
  try {
    v = await runViewer(liveConfig(server), silentLogger());
    const viewer = v;
    const live = (): LiveData => viewer.data as LiveData;
    t.true(await until(() => live().fleet?.following === true, 30_000), 'the viewer follows the bus');
    const began = Date.now();
    await p.frame('good-01', began - 5000, goodValues(1));
    t.true(await until(() => live().fleet.has('good-01'), 30_000));
    t.is((await get(viewer, '/api/v1/metrics?host=good-01')).status, 200, 'the host page is open during the flood');
    const hostile = new HostileFrames({ seed: 16, hostileHosts: ['evil-01', 'evil-02'], goodHost: 'good-01' });
    const GOOD = 40;
    for (let k = 2; k <= GOOD; k++) {
      for (let i = 0; i < 100; i++) {
        const msg = hostile.next();
        p.nc.publish(msg.subject, msg.data);
      }
      await p.frame('good-01', began - 5000 + k * 100, goodValues(k));
    }
    // a counter that goes back (an agent that lost its counters without a new run) and comes back up
    const back = goodValues(GOOD + 1);
    back[0] = 5;
    await p.frame('good-01', began - 5000 + (GOOD + 1) * 100, back);
    await p.frame('good-01', began - 5000 + (GOOD + 2) * 100, goodValues(GOOD + 2));
    const range = `start=${began - 6000}&end=${Date.now()}&budget=5000`;
    t.true(
      await until(async () => {
        const q = await get<QueryResult>(viewer, `/api/v1/query?host=good-01&metric=fuzz_level&${range}`);
        return (q.body.series[0]?.avg.filter((x) => x !== null).length ?? 0) >= GOOD + 2;
      }, 30_000),
      'every good frame is charted',
    );
    const level = (await get<QueryResult>(viewer, `/api/v1/query?host=good-01&metric=fuzz_level&${range}`)).body;
    const want = Array.from({ length: GOOD + 2 }, (_, i) => ((i + 1) % 50) - 25);
    t.deepEqual(level.series[0]?.avg.filter((x) => x !== null), want, 'the gauge is exactly the good frames');
    const ops = (await get<QueryResult>(viewer, `/api/v1/query?host=good-01&metric=fuzz_ops&match=op=read&${range}`)).body;
    const rates = ops.series[0]?.avg.filter((x): x is number => x !== null) ?? [];
    t.true(rates.length > 0 && rates.every((x) => x >= 0 && Number.isFinite(x)), `no negative rate where the counter went back: ${rates.join(' ')}`);
    const lat = await get<QueryResult>(viewer, `/api/v1/query?host=good-01&metric=fuzz_latency&fn=heatmap&${range}`);
    t.is(lat.status, 200);
    t.true((lat.body.heatmap?.lower.length ?? 0) <= 496);
    const rows = (await get<HostSummary[]>(viewer, '/api/v1/hosts')).body.map((h) => h.host);
    t.deepEqual(rows, ['good-01'], 'no hostile host got a row');
    t.is((await get(viewer, '/api/v1/info')).status, 200);
  } finally {
    await v?.stop();
    await p.close();
    await server.dispose();
  }
});

test.serial('bad files on the command line: empty, cut in the middle, a directory, a FIFO, the recorder\'s temporary file: exit 2 with one line naming it, never a hang', async (t) => {
  const bad = mkdtempSync(join(dir, 'bad-'));
  const bytes = readFileSync(file);
  writeFileSync(join(bad, 'empty.parquet'), '');
  writeFileSync(join(bad, 'cut.parquet'), bytes.subarray(0, Math.floor(bytes.length / 2)));
  writeFileSync(join(bad, 'a.parquet.tmp-4242-x1'), bytes.subarray(0, Math.floor(bytes.length / 3)));
  mkdirSync(join(bad, 'dir.parquet'));
  execFileSync('mkfifo', [join(bad, 'fifo.parquet')]);
  const cases: [string, RegExp][] = [
    ['empty.parquet', /empty\.parquet is empty/],
    ['cut.parquet', /cut\.parquet .*(incomplete|footer|cut short)/],
    ['a.parquet.tmp-4242-x1', /temporary file, still being written/],
    ['dir.parquet', /dir\.parquet/],
    ['fifo.parquet', /fifo\.parquet/],
  ];
  for (const [name, why] of cases) {
    const r = await viewCli([join(bad, name)]);
    t.false(r.served, `${name} was served`);
    t.is(r.code, 2, `${name}: ${r.stderr}`);
    t.regex(r.stderr, why, name);
    t.is(r.stderr.trim().split('\n').length, 1, `one line: ${r.stderr}`);
  }
  // the recording a recorder is writing right now: its own name is not there yet, its temporary file is
  const writing = await viewCli([join(bad, 'a.parquet')]);
  t.is(writing.code, 2, writing.stderr);
  t.regex(writing.stderr, /a\.parquet.*still being written to .*a\.parquet\.tmp-4242-x1/);
});

test('a recording whose column data is damaged (footer intact): the chart gets an error naming the file, and the viewer goes on answering', async (t) => {
  const damaged = join(dir, 'damaged.parquet');
  const bytes = Buffer.from(readFileSync(file));
  // the gauge's column chunk sits after the timestamp and host columns: overwrite the middle of the data pages
  const md = parquetMetadata(bytes.buffer.slice(bytes.byteOffset, bytes.byteOffset + bytes.byteLength));
  const chunk = md.row_groups[0]?.columns.find((c) => c.meta_data?.path_in_schema[0] === 'memory_available')?.meta_data;
  const from = Number(chunk?.data_page_offset ?? 0n);
  bytes.fill(0xff, from, from + Number(chunk?.total_compressed_size ?? 0n));
  writeFileSync(damaged, bytes);
  const v = await runViewer(config({ kind: 'files', files: [{ name: 'd', path: damaged }] }), silentLogger());
  try {
    const r = await get<{ error: string }>(v, '/api/v1/query?host=web&metric=memory_available');
    t.true(r.status >= 400, `status ${r.status}`);
    t.regex(r.body.error, /damaged\.parquet/);
    const again = await get<{ error: string }>(v, '/api/v1/query?host=web&metric=memory_available');
    t.is(again.status, r.status, 'asked again: the same answer, not a hang');
    t.is((await get(v, '/api/v1/query?host=web&metric=cgroup_cpu_usage')).status, 200, 'the other columns still answer');
  } finally {
    await v.stop();
  }
});

test.serial('--listen 0.0.0.0:0: refused without a token and with a 10-character one (exit 2); served with 16 characters', async (t) => {
  const none = await viewCli(['--listen', '0.0.0.0:0', file]);
  t.is(none.code, 2, none.stderr);
  t.regex(none.stderr, /REZOLUS_HTTP_TOKEN/);
  const short = await viewCli(['--listen', '0.0.0.0:0', file], { REZOLUS_HTTP_TOKEN: '0123456789' });
  t.is(short.code, 2, short.stderr);
  t.regex(short.stderr, /at least 16 characters, got 10/);
  const ok = await viewCli(['--listen', '0.0.0.0:0', file], { REZOLUS_HTTP_TOKEN: TOKEN });
  t.true(ok.served, ok.stderr);
  t.regex(ok.stderr, /login\?token=<REZOLUS_HTTP_TOKEN>/, 'the URL to open does not print the token');
});

test.serial("a host page opened while NATS is away: a 503 that says so (not an empty page for good), and the host's history once NATS is back", async (t) => {
  let server = await startTestNats();
  const p = await Publisher.open(server);
  let v: RunningViewer | undefined;
  try {
    const began = Date.now();
    for (let k = 1; k <= 20; k++) await p.frame('lazarus', began - (20 - k) * 500, goodValues(k));
    v = await runViewer(liveConfig(server), silentLogger());
    const viewer = v;
    const live = (): LiveData => viewer.data as LiveData;
    t.true(await until(() => live().fleet?.has('lazarus') === true, 30_000), 'the host is on the fleet page');
    const restarting = server.crashAndRestart(15_000);
    t.true(await until(() => viewer.data.info().problem !== undefined, 10_000), 'the page says NATS is away');
    const during = await get<{ error?: string } | unknown[]>(viewer, '/api/v1/metrics?host=lazarus');
    t.is(during.status, 503, JSON.stringify(during.body));
    server = await restarting;
    let metrics: { status: number; body: unknown } = { status: 0, body: undefined };
    t.true(
      await until(async () => {
        metrics = await get<unknown[]>(viewer, '/api/v1/metrics?host=lazarus');
        return metrics.status === 200 && (metrics.body as unknown[]).length > 0;
      }, 60_000),
      `the host page opens once NATS is back: ${JSON.stringify(metrics)}`,
    );
    const q = await get<QueryResult>(viewer, `/api/v1/query?host=lazarus&metric=fuzz_level&start=${began - 15_000}&end=${Date.now()}&budget=5000`);
    t.is(q.body.series[0]?.avg.filter((x) => x !== null).length, 20, 'with the frames from before the outage');
  } finally {
    await v?.stop();
    await p.close();
    await server.dispose();
  }
});

test.serial('--window longer than the stream keeps (30 min on a 15 min stream): host pages still show the history the stream has', async (t) => {
  const server = await startTestNats();
  const p = await Publisher.open(server);
  let v: RunningViewer | undefined;
  try {
    const began = Date.now();
    for (let k = 1; k <= 20; k++) await p.frame('longview', began - (20 - k) * 500, goodValues(k));
    v = await runViewer(liveConfig(server, 30 * 60_000), silentLogger());
    const viewer = v;
    t.true(await until(() => (viewer.data as LiveData).fleet?.has('longview') === true, 30_000), 'the host is on the fleet page');
    const q = await get<QueryResult>(viewer, `/api/v1/query?host=longview&metric=fuzz_level&start=${began - 15_000}&end=${Date.now()}&budget=5000`);
    t.is(q.status, 200);
    t.is(q.body.series[0]?.avg.filter((x) => x !== null).length, 20, 'the frames published before the page opened');
  } finally {
    await v?.stop();
    await p.close();
    await server.dispose();
  }
});

test.serial('a host that vanishes while its page is open: the page goes on answering with what it had, the fleet row ages', async (t) => {
  const server = await startTestNats();
  const p = await Publisher.open(server);
  let v: RunningViewer | undefined;
  const pub = keepPublishing(p, 'ghost', 200);
  try {
    v = await runViewer(liveConfig(server), silentLogger());
    const viewer = v;
    t.true(await until(() => (viewer.data as LiveData).fleet?.has('ghost') === true, 30_000));
    t.is((await get(viewer, '/api/v1/metrics?host=ghost')).status, 200);
    await new Promise((r) => setTimeout(r, 1000));
    await pub.stop();
    const gone = Date.now();
    await new Promise((r) => setTimeout(r, 1500));
    const q = await get<QueryResult>(viewer, `/api/v1/query?host=ghost&metric=fuzz_level&start=${gone - 30_000}&end=${Date.now()}&budget=5000`);
    t.is(q.status, 200);
    t.true((q.body.series[0]?.avg.filter((x) => x !== null).length ?? 0) > 0, 'what it published is still charted');
    const row = (await get<HostSummary[]>(viewer, '/api/v1/hosts')).body.find((h) => h.host === 'ghost');
    t.true(row !== undefined && row.lastMs <= gone, 'the row shows its last frame, which ages');
  } finally {
    await pub.stop();
    await v?.stop();
    await p.close();
    await server.dispose();
  }
});
