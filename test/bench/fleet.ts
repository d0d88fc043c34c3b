/**
 * Issue 19: the fleet end to end on real NATS. N simulated hosts (26
 * samplers each: the 9 procfs samplers' real frames on the fixture root and
 * 16 eBPF-shaped ones with 31 latency histograms, plus a clock gauge;
 * test/helpers/fleet-shape.ts) publish through the real Publisher from
 * forked load processes into a private nats-server with JetStream, while
 * the consumers run as CLI processes: the fleet exporter (scraped at 1 Hz),
 * `record --durable` of the whole fleet, the hindsight service (one dump at
 * the end), `alert` and the live viewer. For each N: frames lost and
 * doubled at each consumer against the schedule, publish → visible latency
 * in the exporter, CPU and RSS of every process, stream bytes per host per
 * hour; and the peer figure of the same run, a core publish loop of the
 * same message size on its own nats-server (test/helpers/fleet-run.ts).
 *
 *   npx tsx test/bench/fleet.ts                          # N = 100, 300, 1000
 *   npx tsx test/bench/fleet.ts --hosts 1500 --seconds 40
 *   npx tsx test/bench/fleet.ts --hosts 1000 --consumers exporter --shards 2   # the exporter sharded over 2 processes by glob
 *   npx tsx test/bench/fleet.ts --hosts 1000 --consumers exporter --shards 2 --shard-by list   # by host list: NATS filters
 *   npx tsx test/bench/fleet.ts --hosts 300 --cluster    # the 3-node cluster at R3
 *   npx tsx test/bench/fleet.ts --hosts 50 --seconds 12 --drop --double       # the audits must show 1 lost, 1 repeat at each consumer
 *   npx tsx test/bench/fleet.ts --hosts 600 --consumers exporter --profile exporter   # V8 profile of a consumer, top functions
 *
 * Never port 4222. A measurement: prints TARGET MISSED and exits 0.
 */
import { spawnSync } from 'node:child_process';
import { mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { availableParallelism, tmpdir } from 'node:os';
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import { connect } from '@nats-io/transport-node';
import { startTestNats } from '../helpers/nats.js';
import { nodeArgs, profiling } from '../helpers/fleet-consumers.js';
import { ALL_CONSUMERS, runFleet, type ConsumerName, type FleetResult } from '../helpers/fleet-run.js';
import { ensureBuilt, fmt, printProfileTable, profileTotals, say, type CallFrame, type CpuProfile } from './common.js';

const { values: args } = parseArgs({
  options: {
    hosts: { type: 'string', default: '100,300,1000' },
    seconds: { type: 'string', default: '45' },
    warmup: { type: 'string', default: '10' },
    workers: { type: 'string', default: '2' },
    shared: { type: 'boolean', default: false },
    bundle: { type: 'boolean', default: false },
    shards: { type: 'string', default: '1' },
    'shard-by': { type: 'string', default: 'glob' },
    cluster: { type: 'boolean', default: false },
    consumers: { type: 'string', default: ALL_CONSUMERS.join(',') },
    drop: { type: 'boolean', default: false },
    double: { type: 'boolean', default: false },
    minutes: { type: 'string', default: '40' },
    profile: { type: 'string' },
    'exporter-node-args': { type: 'string' },
    help: { type: 'boolean', short: 'h' },
  },
});
if (args.help === true) {
  process.stdout.write(
    [
      'usage: npx tsx test/bench/fleet.ts [options]   (a measurement: prints figures and TARGET MISSED lines, exits 0)',
      '  --hosts LIST       simulated hosts per run, comma-separated (default 100,300,1000)',
      '  --seconds S        measured ticks, one per second (default 45)',
      '  --warmup S         ticks before the measured window (default 10)',
      '  --workers N        load processes publishing the hosts\' frames (default 2)',
      '  --shared           one NATS connection per load process instead of one per host',
      '  --bundle           each host sends its 26 frames of a tick as one message, as agents do by default ([stream] bundle)',
      '  --shards 1|2       fleet exporters: 2 splits the hosts between two processes (default 1)',
      '  --shard-by glob|list  how 2 shards split the hosts: a host-name glob each, or a host list each (default glob)',
      `  --consumers LIST   consumer processes to run (default ${ALL_CONSUMERS.join(',')})`,
      '  --cluster          a 3-node nats-server cluster, stream at R3, instead of one server',
      '  --drop, --double   leave out / repeat one frame: every consumer\'s audit must show it (a self-check)',
      '  --minutes M        watchdog: stop everything after M minutes (default 40)',
      '  --profile LIST     run these consumers under --cpu-prof and print their top functions',
      '  --exporter-node-args="F…"  node options of the exporter processes, e.g. --exporter-node-args=--max-semi-space-size=64',
      '',
    ].join('\n'),
  );
  process.exit(0);
}
const usageError = (message: string): never => {
  process.stderr.write(`fleet.ts: ${message} (see --help)\n`);
  process.exit(2);
};
const positive = (name: string, v: string): number => {
  const n = Number(v);
  if (!Number.isInteger(n) || n <= 0) usageError(`--${name}: a positive integer, got ${JSON.stringify(v)}`);
  return n;
};
const HOSTS = args.hosts.split(',').map((h) => positive('hosts', h));
for (const [name, v] of [['seconds', args.seconds], ['workers', args.workers], ['minutes', args.minutes]] as const) positive(name, v);
if (!(Number(args.warmup) >= 0)) usageError(`--warmup: a number of seconds, got ${JSON.stringify(args.warmup)}`);
if (args.shards !== '1' && args.shards !== '2') usageError(`--shards: 1 or 2, got ${JSON.stringify(args.shards)}`);
if (args['shard-by'] !== 'glob' && args['shard-by'] !== 'list') usageError(`--shard-by: glob or list, got ${JSON.stringify(args['shard-by'])}`);
const CONSUMERS = args.consumers.split(',').filter((c) => c !== '') as ConsumerName[];
for (const c of CONSUMERS) if (!ALL_CONSUMERS.includes(c)) usageError(`--consumers: no consumer ${JSON.stringify(c)} (there are ${ALL_CONSUMERS.join(', ')})`);
const CPU_MODEL = /model name\s*:\s*(.*)/.exec(readFileSync('/proc/cpuinfo', 'utf8'))?.[1] ?? '?';
const CORES = availableParallelism();
/** the fleet's mean frame: 8.75 kB per host and tick over 26 frames; a bundle is all of them */
const FRAME_BYTES = 336;

/** The peer: core publishes of `bytes` from one client to a nats-server with nothing subscribed, as fast as the client goes, 3 s. */
async function peerPublishRate(bytes: number): Promise<number> {
  const server = await startTestNats();
  try {
    const nc = await connect({ servers: server.url });
    const data = new Uint8Array(bytes).fill(7);
    let n = 0;
    const began = performance.now();
    while (performance.now() - began < 3000) {
      for (let i = 0; i < 1000; i++) nc.publish('peer.bench', data);
      n += 1000;
      await nc.flush();
    }
    const rate = n / ((performance.now() - began) / 1000);
    await nc.close();
    return rate;
  } finally {
    await server.dispose();
  }
}

function print(r: FleetResult, peer: number): void {
  say(`  result ${r.hosts} hosts (${r.samplers} samplers, ${r.ticks} ticks, ${r.expected} frames scheduled; CPU ${CPU_MODEL}):`);
  for (const [name, t] of Object.entries(r.tallies)) {
    say(`    ${name.padEnd(12)} lost ${t.lost}, doubled ${t.doubled}, repeats skipped ${t.repeats}  (${t.note})`);
    if (t.lost !== 0 || t.doubled !== 0) say(`    TARGET MISSED: ${name} lost ${t.lost} / doubled ${t.doubled} frames at ${r.hosts} hosts`);
  }
  say(`    publisher: ${r.publisher.published} acked, ${r.publisher.duplicates} acked as duplicates, ${r.publisher.dropped} dropped, ${r.publisher.retries} retries, flushed ${String(r.publisher.flushed)}; load lag max ${r.loadLagMs} ms`);
  say(`    publish → visible in the exporter: p50 ≤ ${r.latencyMs.p50} ms, p99 ≤ ${r.latencyMs.p99} ms (${r.latencyMs.samples} observations); GET /metrics p50 ${r.scrapeMs.p50} ms, max ${r.scrapeMs.max} ms, ${fmt(r.scrapeMs.bytes / 1e6, 1)} MB, ${r.scrapeMs.late} scrape slots missed`);
  // a bundle holds a host's frames of a tick (--double sends its repeat as a message of one frame: messages are compared, not frames)
  const perMessage = args.bundle ? r.samplers : 1;
  const framesPerSecond = r.streamMsgsPerSecond * perMessage;
  const scheduled = r.expected / perMessage;
  const unit = args.bundle ? 'bundles' : 'frames';
  say(`    stream: ${r.streamMessages} messages at the end (${r.streamMessages - scheduled} more than the ${scheduled} ${unit} scheduled); ${fmt(r.streamMsgsPerSecond, 0)} msgs/s = ${fmt(r.streamMsgsPerSecond / peer, 3)} × the peer core publish rate; ${fmt(r.streamBytesPerHostHour / 1e6, 1)} MB per host per hour`);
  say(`    after the last tick: ${Object.entries(r.after).map(([k, v]) => `${k} ${fmt(v, 1)} s`).join(', ')}`);
  // hosts per core from the frames the stream took in the window (a lagging load makes fewer than the schedule)
  const served = framesPerSecond / r.samplers;
  say(`    process              CPU (cores)   RSS MiB   peak MiB   µs per frame   hosts per core (${fmt(served, 0)} hosts' frames/s in the window)`);
  for (const p of r.procs) {
    // an exporter shard serves its half of the hosts (sim-<even> and sim-<odd>, by glob or by list): its figures are per frame of its hosts
    const shard = /^exporter ([12])\/2$/.exec(p.name)?.[1];
    const share = shard === undefined ? 1 : (shard === '1' ? Math.ceil(r.hosts / 2) : Math.floor(r.hosts / 2)) / r.hosts;
    say(`    ${p.name.padEnd(20)} ${fmt(p.cpu, 3).padStart(11)} ${fmt(p.rssMiB, 0).padStart(9)} ${fmt(p.hwmMiB, 0).padStart(10)} ${fmt((p.cpu / (framesPerSecond * share)) * 1e6, 1).padStart(14)} ${fmt((served * share) / p.cpu, 0).padStart(16)}`);
  }
  const load = r.procs.filter((p) => p.name.startsWith('load')).reduce((n, p) => n + p.cpu, 0);
  say(`    load generator total ${fmt(load, 3)} cores; all processes ${fmt(r.procs.reduce((n, p) => n + p.cpu, 0), 2)} of ${CORES} cores`);
}

function where(f: CallFrame): string {
  const name = f.functionName === '' ? '(anonymous)' : f.functionName;
  const at = Math.max(f.url.lastIndexOf('/node_modules/') + 1, f.url.indexOf('/src/') + 1, f.url.indexOf('/dist/') + 1);
  return f.url === '' ? name : `${name} ${f.url.slice(at)}:${f.lineNumber + 1}`;
}

/** The top of each profile the profiled consumers wrote (--profile). */
function printProfiles(dir: string): void {
  for (const file of readdirSync(dir).filter((f) => f.endsWith('.cpuprofile'))) {
    const p = JSON.parse(readFileSync(join(dir, file), 'utf8')) as CpuProfile;
    const { self, inclusive, busy } = profileTotals(p, where);
    say(`  profile ${file}: ${fmt(busy / 1e6, 1)} s busy of ${fmt((p.endTime - p.startTime) / 1e6, 1)} s`);
    printProfileTable('self time', self, busy, 15);
    printProfileTable('inclusive', inclusive, busy, 12);
  }
}

async function main(): Promise<void> {
  ensureBuilt();
  if (args.profile !== undefined) {
    profiling.names = args.profile.split(',');
    profiling.dir = mkdtempSync(join(tmpdir(), 'rezolus-fleet-prof-'));
  }
  if (args['exporter-node-args'] !== undefined) nodeArgs.set('exporter', args['exporter-node-args'].split(/\s+/).filter((a) => a !== ''));
  const load = spawnSync('uptime', { encoding: 'utf8' }).stdout.trim();
  say(`fleet bench, ${new Date().toISOString()}, CPU ${CPU_MODEL} × ${CORES}, ${load}`);
  // the peer publishes messages of the run's size: a frame, or a bundle of 26
  const bytes = args.bundle ? FRAME_BYTES * 26 : FRAME_BYTES;
  const peer = await peerPublishRate(bytes);
  say(`peer: core publish loop of ${bytes} B messages, one client, no subscriber: ${fmt(peer, 0)} msgs/s`);
  for (const hosts of HOSTS) {
    say(`\nN = ${hosts}: ${args.seconds} ticks (warm-up ${args.warmup}), ${args.workers} load processes, ${args.shared ? 'one connection per load process' : 'one connection per host'}, ${args.bundle ? 'a bundle per host and tick' : 'a message per frame'}, exporter shards ${args.shards}${args.shards === '2' ? ` (by ${args['shard-by']})` : ''}${args.cluster ? ', cluster R3' : ''}`);
    const r = await runFleet({
      hosts, seconds: Number(args.seconds), warmup: Number(args.warmup), workers: Number(args.workers), shared: args.shared, bundle: args.bundle,
      exporterShards: Number(args.shards) === 2 ? 2 : 1, shardBy: args['shard-by'] === 'list' ? 'list' : 'glob', cluster: args.cluster, consumers: CONSUMERS,
      drop: args.drop ? { host: 7 % hosts, sampler: 'cpu_usage', tick: 5 } : undefined,
      double: args.double ? { host: 3 % hosts, sampler: 'sim_syscall_latency', tick: 6 } : undefined,
      say,
    });
    print(r, peer);
    if (profiling.dir !== '') {
      printProfiles(profiling.dir);
      for (const f of readdirSync(profiling.dir)) rmSync(join(profiling.dir, f));
    }
  }
  if (profiling.dir !== '') rmSync(profiling.dir, { recursive: true, force: true });
  say(`\npeer again: ${fmt(await peerPublishRate(bytes), 0)} msgs/s`);
}

// process.exit runs the exit hooks (fleet-consumers.ts): the consumers, servers and their directories go too
process.once('SIGINT', () => {
  say('interrupted: stopping');
  process.exit(130);
});
const watchdog = setTimeout(() => {
  say(`watchdog: ${args.minutes} min passed, stopping`);
  process.exit(1);
}, Number(args.minutes) * 60_000);
watchdog.unref();
main().then(
  () => process.exit(0),
  (error: unknown) => {
    say(`bench failed: ${error instanceof Error ? error.stack ?? error.message : String(error)}`);
    process.exit(1);
  },
);
